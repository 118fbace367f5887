// The lean hot path of POST /v1/authorize: a plain node:http handler in front of Express. It keeps
// the Express path's contract exactly (key 401, role 403, body limits and validation 400/413/415,
// RFC 9457 problems) with none of the framework's per-request work. Express routes the same
// endpoint to this handler too, so both paths are one piece of code.

import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { API_LIMITS, type AuthorizeBody } from "@agent-authority/api";
import type { Logger } from "../log.js";
import type { PreparedAnswer } from "../services/common/index.js";
import { authorize, type CheckedRequest, type RequestNotes } from "../services/decisions/index.js";
import type { ServiceContext } from "../services/common/index.js";
import { IDEMPOTENCY_HEADER, requestClaim } from "../services/idempotency/index.js";
import { Refusal } from "../services/common/index.js";
import { parseJsonBody, validateBody } from "./body.js";
import type { HttpMetrics } from "./metrics.js";
import { presentedSecret } from "./presented-key.js";
import { problemAnswer, type ProblemAnswer } from "./problem.js";
import { requestLog } from "./request-log.js";

export const AUTHORIZE_PATH = "/v1/authorize";

/** Whether the hot path answers this request; every other request goes to Express. */
export function isAuthorizeRequest(req: IncomingMessage): boolean {
  if (req.method !== "POST" || req.url === undefined) return false;
  const q = req.url.indexOf("?");
  return (q === -1 ? req.url : req.url.slice(0, q)) === AUTHORIZE_PATH;
}

/** Reads the body up to the limit; one byte more is `body_too_large`, as on the Express path. */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > API_LIMITS.requestBodyBytesMax) {
    req.resume();
    return Promise.reject(new Refusal("body_too_large"));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > API_LIMITS.requestBodyBytesMax) {
        reject(new Refusal("body_too_large"));
        req.removeAllListeners("data");
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    let ended = false;
    req.on("end", () => {
      ended = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    // A client that goes away mid-body settles the read too, so nothing waits on it forever.
    const cutShort = (): void => {
      if (!ended) reject(new Refusal("malformed_json", "the request body was cut short"));
    };
    req.on("error", cutShort);
    req.on("close", cutShort);
  });
}

/** The body, validated, and the idempotency claim: 413, 415 and 400 as on the Express path. */
async function checkedRequest(req: IncomingMessage): Promise<CheckedRequest> {
  const raw = await readBody(req);
  const body = validateBody<AuthorizeBody>("AuthorizeBody", parseJsonBody(raw, req.headers["content-type"]));
  return { body, claim: requestClaim(req.headers[IDEMPOTENCY_HEADER], "POST", AUTHORIZE_PATH, raw) };
}

/**
 * The headers every answer carries: no content sniffing, and no copy kept by a browser or a proxy
 * (answers hold secrets, decisions and budgets; none is safe to serve again from a cache).
 */
export function setSafetyHeaders(res: ServerResponse): void {
  res.setHeader("x-content-type-options", "nosniff");
  res.setHeader("cache-control", "no-store");
}

/** Answers one authorize request; never throws (every failure becomes a problem answer). */
export async function handleAuthorize(
  ctx: ServiceContext,
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<string | undefined> {
  if (!res.hasHeader("x-request-id")) res.setHeader("x-request-id", randomUUID());
  setSafetyHeaders(res);
  const notes: RequestNotes = {};
  let prepared: PreparedAnswer | ProblemAnswer;
  try {
    // One call into the services: authenticate, read, decide.
    const answered = await authorize(ctx, { secret: presentedSecret(req.headers), read: () => checkedRequest(req) }, notes);
    prepared =
      answered instanceof Refusal
        ? problemAnswer(answered, AUTHORIZE_PATH, { logger, requestId: res.getHeader("x-request-id") })
        : answered;
  } catch (error) {
    prepared = problemAnswer(error, AUTHORIZE_PATH, { logger, requestId: res.getHeader("x-request-id") });
  }
  if ("headers" in prepared) {
    for (const [name, value] of Object.entries(prepared.headers)) res.setHeader(name, value);
  } else {
    if (prepared.keyId !== undefined) notes.keyId = prepared.keyId;
    // A new decision (not a replay) is counted by its outcome and gate: a few additions, no allocation.
    if (prepared.outcome !== undefined) ctx.observer?.decided(prepared);
  }
  if (res.headersSent) return notes.keyId;
  res.statusCode = prepared.status;
  res.setHeader("content-type", prepared.contentType);
  res.setHeader("content-length", Buffer.byteLength(prepared.text));
  if ("replayed" in prepared && prepared.replayed) res.setHeader("idempotent-replayed", "true");
  res.end(prepared.text);
  return notes.keyId;
}

/**
 * The hot path as the server's listener calls it: answers, then counts the request in the shared
 * metrics (as route `/v1/authorize`, the label the Express path uses) and writes its one `request`
 * log line (request-log.ts).
 */
export function authorizeServer(
  ctx: ServiceContext,
  logger: Logger,
  metrics: HttpMetrics,
  trusted: ReadonlySet<string> = new Set(),
): (req: IncomingMessage, res: ServerResponse) => void {
  const record = metrics.recorder("POST", AUTHORIZE_PATH);
  const log = requestLog(logger, trusted);
  return (req, res) => {
    const started = performance.now();
    void handleAuthorize(ctx, logger, req, res).then((keyId) => {
      const seconds = (performance.now() - started) / 1000;
      const status = res.statusCode;
      record(status, seconds);
      log(req, res.getHeader("x-request-id"), "POST", AUTHORIZE_PATH, status, seconds, keyId);
    });
  };
}
