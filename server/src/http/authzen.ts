// The AuthZEN 1.0 endpoints beside v1: access evaluation, access evaluations and the well-known
// metadata. Each evaluation is decided by the authorize service (services/authzen/evaluation.ts).

import { API_LIMITS, type AuthorizeBody } from "@agent-authority/api";
import { createHash } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import express, { type Request, type Response } from "express";
import type { RequestClaim } from "../services/common/index.js";
import {
  authorizeBodyOf,
  evaluateOne,
  speaksFor,
  undecided,
  type AuthzenDecision,
  type AuthzenEvaluation,
  type EvaluationAsker,
} from "../services/authzen/index.js";
import type { Caller, ServiceContext } from "../services/common/index.js";
import { requestClaim } from "../services/idempotency/index.js";
import { callerForSecret, unauthenticated } from "../services/keys/index.js";
import { Refusal } from "../services/common/index.js";
import { SEARCH_LIMITS, searchActions, searchSubjects } from "../services/authzen/index.js";
import { canonicalJson } from "../services/seal/index.js";
import { parseJsonBody, validateBody } from "./body.js";
import { presentedSecret } from "./presented-key.js";

/** Every bound of the AuthZEN endpoints. */
export const AUTHZEN_LIMITS = Object.freeze({
  /** The most members one access evaluations request may hold. */
  evaluationsMax: 64,
  /** The longest `X-Request-ID` taken, in characters (room for a member's index under the idempotency key's bound). */
  requestIdCharsMax: 240,
});

export const AUTHZEN_PATHS = Object.freeze({
  evaluation: "/access/v1/evaluation",
  evaluations: "/access/v1/evaluations",
  searchSubject: "/access/v1/search/subject",
  searchAction: "/access/v1/search/action",
  configuration: "/.well-known/authzen-configuration",
});

const SEMANTICS = ["execute_all", "deny_on_first_deny", "permit_on_first_permit"] as const;
type Semantic = (typeof SEMANTICS)[number];

const readRaw = express.raw({ type: () => true, limit: API_LIMITS.requestBodyBytesMax });

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function entityFault(value: unknown, name: string, required: boolean): string | undefined {
  if (value === undefined) return required ? `\`${name}\` is required` : undefined;
  if (!isObject(value) || typeof value["type"] !== "string" || typeof value["id"] !== "string") {
    return `\`${name}\` must be an object with string \`type\` and \`id\``;
  }
  if (value["properties"] !== undefined && !isObject(value["properties"])) return `\`${name}.properties\` must be an object`;
  return undefined;
}

/** The fault of an evaluation's shape (the specification's request schema), or undefined. */
function evaluationFault(value: Record<string, unknown>, required: boolean): string | undefined {
  const action = value["action"];
  const actionFault =
    action === undefined
      ? required
        ? "`action` is required"
        : undefined
      : isObject(action) && typeof action["name"] === "string"
        ? undefined
        : "`action` must be an object with a string `name`";
  const contextFault = value["context"] !== undefined && !isObject(value["context"]) ? "`context` must be an object" : undefined;
  return (
    entityFault(value["subject"], "subject", required) ??
    entityFault(value["resource"], "resource", required) ??
    actionFault ??
    contextFault
  );
}

/** The roles whose keys may ask for evaluations: an agent for itself, an enforcement point for its agents. */
const EVALUATING_ROLES = ["agent", "enforcer"] as const;

/** The key that asks: its caller, and its secret, which the authorize service is handed as `/v1/authorize` hands it. */
interface Asking {
  readonly caller: Caller;
  readonly secret: string;
}

/**
 * The agent's or enforcement point's key that asks, or the 401 of one that may not ask for these
 * subjects (nothing written): a key of another role, or a subject it does not speak for, is
 * answered exactly as an unknown key is.
 */
async function askingCaller(ctx: ServiceContext, headers: IncomingHttpHeaders, members: readonly AuthzenEvaluation[]): Promise<Asking> {
  const secret = presentedSecret(headers);
  const caller = secret === undefined ? undefined : await callerForSecret(ctx.store, secret);
  if (caller === undefined || !EVALUATING_ROLES.some((role) => caller.roles.includes(role))) throw unauthenticated(secret !== undefined);
  // A subject the key may not speak for is refused exactly as an unknown key is.
  if (!members.every((m) => speaksFor(caller, m.subject))) throw unauthenticated(true);
  return { caller, secret: secret! };
}

/** The request id sent, checked; undefined when none was. */
export function sentRequestId(headers: IncomingHttpHeaders): string | undefined {
  const header = headers["x-request-id"];
  if (header === undefined) return undefined;
  if (typeof header !== "string" || header.length > AUTHZEN_LIMITS.requestIdCharsMax) {
    throw new Refusal(
      "invalid_idempotency_key",
      `\`X-Request-ID\` must be one header of 1 to ${AUTHZEN_LIMITS.requestIdCharsMax} visible ASCII characters`,
    );
  }
  return header;
}

/** The request id sent, checked; echoed on the answer as the specification asks. */
function requestIdOf(req: Request, res: Response): string | undefined {
  const header = sentRequestId(req.headers);
  if (header !== undefined) res.setHeader("x-request-id", header);
  return header;
}

/** The idempotency claim of one member: the request id and the member's place, over the whole request. */
function memberClaim(requestId: string | undefined, path: string, raw: Buffer, index: number | undefined): RequestClaim | undefined {
  if (requestId === undefined) return undefined;
  const key = index === undefined ? requestId : `${requestId}#${index}`;
  return requestClaim(key, "POST", path, raw);
}

/** Decides one mapped member; a member that does not map or fails the authorize schema is `decision: false`. */
async function decideMember(
  ctx: ServiceContext,
  asking: Asking,
  member: AuthzenEvaluation,
  claim: RequestClaim | undefined,
): Promise<AuthzenDecision> {
  const mapped = authorizeBodyOf(member);
  if ("decision" in mapped) return mapped as AuthzenDecision;
  let body: AuthorizeBody;
  try {
    body = validateBody<AuthorizeBody>("AuthorizeBody", mapped);
  } catch (error) {
    if (error instanceof Refusal) return undecided(400, error.detail ?? error.code);
    throw error;
  }
  const asker: EvaluationAsker = asking.caller.roles.includes("agent")
    ? { secret: asking.secret }
    : { enforcer: asking.caller, agentId: member.subject!.id };
  return (await evaluateOne(ctx, asker, body, claim)).decision;
}

function parsedObject(req: Request): Record<string, unknown> {
  return objectOf(req.body as Buffer | undefined, req.headers["content-type"]);
}

function objectOf(raw: Buffer | undefined, contentType: string | undefined): Record<string, unknown> {
  const parsed = parseJsonBody(raw, contentType);
  if (!isObject(parsed)) throw new Refusal("invalid_body", "the request body must be a JSON object");
  return parsed;
}

/**
 * One access evaluation from its headers and raw body: the decision, or the thrown refusal of the
 * whole request. The Express route and the lean path before Express (authzen-hot-path.ts) both
 * answer with it, so the two keep one contract (decision 1703).
 */
export async function evaluationOf(
  ctx: ServiceContext,
  headers: IncomingHttpHeaders,
  raw: Buffer | undefined,
  requestId: string | undefined,
): Promise<AuthzenDecision> {
  const body = objectOf(raw, headers["content-type"]);
  const fault = evaluationFault(body, true);
  if (fault !== undefined) throw new Refusal("invalid_body", fault);
  const member = body as AuthzenEvaluation;
  const asking = await askingCaller(ctx, headers, [member]);
  return decideMember(
    ctx,
    asking,
    member,
    raw === undefined ? undefined : memberClaim(requestId, AUTHZEN_PATHS.evaluation, raw, undefined),
  );
}

async function evaluation(ctx: ServiceContext, req: Request, res: Response): Promise<void> {
  const requestId = requestIdOf(req, res);
  res.status(200).json(await evaluationOf(ctx, req.headers, Buffer.isBuffer(req.body) ? req.body : undefined, requestId));
}

/** The members of an evaluations request, each with the request's defaults under its own values. */
function membersOf(body: Record<string, unknown>): AuthzenEvaluation[] {
  const list = body["evaluations"];
  if (list === undefined) {
    const fault = evaluationFault(body, true);
    if (fault !== undefined) throw new Refusal("invalid_body", fault);
    return [body as AuthzenEvaluation];
  }
  if (!Array.isArray(list)) throw new Refusal("invalid_body", "`evaluations` must be an array");
  if (list.length > AUTHZEN_LIMITS.evaluationsMax) {
    throw new Refusal("invalid_body", `\`evaluations\` holds at most ${AUTHZEN_LIMITS.evaluationsMax} members`);
  }
  const defaults = evaluationFault(body, false);
  if (defaults !== undefined) throw new Refusal("invalid_body", defaults);
  return list.map((item, index) => {
    if (!isObject(item)) throw new Refusal("invalid_body", `\`evaluations[${index}]\` must be an object`);
    const merged: Record<string, unknown> = {};
    for (const field of ["subject", "action", "resource", "context"]) merged[field] = item[field] ?? body[field];
    const fault = evaluationFault(merged, true);
    if (fault !== undefined) throw new Refusal("invalid_body", `\`evaluations[${index}]\`: ${fault}`);
    return merged as AuthzenEvaluation;
  });
}

function semanticOf(body: Record<string, unknown>): Semantic {
  const options = body["options"];
  if (options === undefined) return "execute_all";
  if (!isObject(options)) throw new Refusal("invalid_body", "`options` must be an object");
  const chosen = options["evaluations_semantic"] ?? "execute_all";
  if (!SEMANTICS.includes(chosen as Semantic))
    throw new Refusal("invalid_body", `\`options.evaluations_semantic\` must be one of ${SEMANTICS.join(", ")}`);
  return chosen as Semantic;
}

async function evaluations(ctx: ServiceContext, req: Request, res: Response): Promise<void> {
  const requestId = requestIdOf(req, res);
  const body = parsedObject(req);
  const semantic = semanticOf(body);
  const members = membersOf(body);
  const asking = await askingCaller(ctx, req.headers, members);
  const answers: AuthzenDecision[] = [];
  // In order, each member committed before the next is decided; after a stop the rest have no effect.
  for (const [index, member] of members.entries()) {
    const decided = await decideMember(ctx, asking, member, memberClaim(requestId, AUTHZEN_PATHS.evaluations, req.body as Buffer, index));
    answers.push(decided);
    if ((semantic === "deny_on_first_deny" && !decided.decision) || (semantic === "permit_on_first_permit" && decided.decision)) break;
  }
  res.status(200).json({ evaluations: answers });
}

/** A search's page of results: the spec's `page` object first, then the results. */
function searchAnswer(res: Response, page: SearchPage, results: readonly unknown[]): void {
  const slice = results.slice(page.offset, page.offset + page.limit);
  const next = page.offset + slice.length;
  res.status(200).json({
    page: { next_token: next < results.length ? pageToken(next, page.fingerprint) : "", count: slice.length, total: results.length },
    results: slice,
  });
}

async function searchAction(ctx: ServiceContext, req: Request, res: Response): Promise<void> {
  const body = parsedObject(req);
  const fault = entityFault(body["subject"], "subject", true) ?? entityFault(body["resource"], "resource", true) ?? contextFault(body);
  if (fault !== undefined) throw new Refusal("invalid_body", fault);
  const page = searchPage(body);
  const member = body as AuthzenEvaluation;
  // The subject must be one the key speaks for, exactly as for an evaluation.
  await askingCaller(ctx, req.headers, [member]);
  searchAnswer(res, page, await searchActions(ctx, member.subject!, member));
}

async function searchSubject(ctx: ServiceContext, req: Request, res: Response): Promise<void> {
  const body = parsedObject(req);
  const subject = body["subject"];
  const subjectFault =
    isObject(subject) && typeof subject["type"] === "string" && (subject["id"] === undefined || typeof subject["id"] === "string")
      ? undefined
      : "`subject` must be an object with a string `type`";
  const action = body["action"];
  const actionFault =
    isObject(action) && typeof action["name"] === "string" ? undefined : "`action` must be an object with a string `name`";
  const fault = subjectFault ?? actionFault ?? entityFault(body["resource"], "resource", true) ?? contextFault(body);
  if (fault !== undefined) throw new Refusal("invalid_body", fault);
  const page = searchPage(body);
  const caller = await searchingCaller(ctx, req);
  // Only agents are subjects here: a search for subjects of another type finds none.
  const results =
    (subject as { type: string }).type === "agent"
      ? await searchSubjects(ctx, caller, (action as { name: string }).name, body as AuthzenEvaluation)
      : [];
  searchAnswer(res, page, results);
}

/** The key that searches: an agent's or an enforcer's, as for evaluations; any other is an unknown key. */
async function searchingCaller(ctx: ServiceContext, req: Request): Promise<Caller> {
  const secret = presentedSecret(req.headers);
  const caller = secret === undefined ? undefined : await callerForSecret(ctx.store, secret);
  if (caller === undefined || !EVALUATING_ROLES.some((role) => caller.roles.includes(role))) throw unauthenticated(secret !== undefined);
  return caller;
}

function contextFault(body: Record<string, unknown>): string | undefined {
  return body["context"] !== undefined && !isObject(body["context"]) ? "`context` must be an object" : undefined;
}

/** Where a search's page starts and how long it is, and the fingerprint of the request it belongs to. */
interface SearchPage {
  readonly offset: number;
  readonly limit: number;
  readonly fingerprint: string;
}

/**
 * The page a search asks for. A token is this server's own (the offset and the fingerprint of the
 * request, entities and `page.limit` included); one from another request, or edited, is a 400, as
 * the specification asks when a request changes mid-pagination.
 */
function searchPage(body: Record<string, unknown>): SearchPage {
  const page = body["page"] ?? {};
  if (!isObject(page)) throw new Refusal("invalid_body", "`page` must be an object");
  const limit = page["limit"] ?? SEARCH_LIMITS.pageDefault;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 0 || limit > SEARCH_LIMITS.pageMax) {
    throw new Refusal("invalid_body", `\`page.limit\` must be a whole number from 0 to ${SEARCH_LIMITS.pageMax}`);
  }
  const { page: _page, ...entities } = body;
  const fingerprint = createHash("sha256").update(canonicalJson({ entities, limit })).digest("base64url").slice(0, 22);
  const token = page["token"];
  if (token === undefined || token === "") return { offset: 0, limit, fingerprint };
  const offset = typeof token === "string" ? tokenOffset(token, fingerprint) : undefined;
  if (offset === undefined)
    throw new Refusal("invalid_body", "`page.token` is not a token this server gave for this request: the request changed mid-pagination");
  return { offset, limit, fingerprint };
}

function pageToken(offset: number, fingerprint: string): string {
  return `${offset}.${fingerprint}`;
}

/** The offset of a token given for the request of `fingerprint`; undefined for any other text. */
function tokenOffset(token: string, fingerprint: string): number | undefined {
  const match = /^(\d{1,6})\.([A-Za-z0-9_-]{22})$/.exec(token);
  if (match === null || match[2] !== fingerprint) return undefined;
  return Number(match[1]);
}

/** The metadata document: the decision point's identifier and each endpoint offered, nothing else. */
function configuration(pdp: string | undefined, req: Request, res: Response): void {
  const base = pdp ?? `${req.protocol}://${req.get("host") ?? "localhost"}`;
  res.status(200).json({
    policy_decision_point: base,
    access_evaluation_endpoint: `${base}${AUTHZEN_PATHS.evaluation}`,
    access_evaluations_endpoint: `${base}${AUTHZEN_PATHS.evaluations}`,
    search_subject_endpoint: `${base}${AUTHZEN_PATHS.searchSubject}`,
    search_action_endpoint: `${base}${AUTHZEN_PATHS.searchAction}`,
  });
}

/** Mounts the AuthZEN routes; errors go to the application's one error handler (RFC 9457 problems). */
export function mountAuthzen(app: express.Express, ctx: ServiceContext, pdp: string | undefined): void {
  app.post(AUTHZEN_PATHS.evaluation, readRaw, (req, res) => evaluation(ctx, req, res));
  app.post(AUTHZEN_PATHS.evaluations, readRaw, (req, res) => evaluations(ctx, req, res));
  app.post(AUTHZEN_PATHS.searchSubject, readRaw, (req, res) => searchSubject(ctx, req, res));
  app.post(AUTHZEN_PATHS.searchAction, readRaw, (req, res) => searchAction(ctx, req, res));
  app.get(AUTHZEN_PATHS.configuration, (req, res) => configuration(pdp, req, res));
}
