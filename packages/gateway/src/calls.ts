// Every tools/call decided first: authorize, wait for a human when gated, forward on allow, then settle.
import { hash } from "node:crypto";
import { AuthorityProblemError, type AuthorizeBody, type AuthorizeResult } from "@agent-authority/sdk";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { actionOf, spendOf } from "./action.js";
import { waitForApproval } from "./approval.js";
import type { Catalog, Route } from "./catalog.js";
import type { GatewayContext } from "./context.js";
import { GATEWAY_LIMITS } from "./limits.js";
import type { ProgressRelay } from "./progress.js";
import { errorResult, refusalText } from "./refusal.js";
import { messageOf } from "./upstreams.js";

export type { GatewayContext } from "./context.js";

/** One client session: its id, and the calls it made, so a retried JSON-RPC id is answered once. */
export interface Session {
  readonly id: string;
  readonly calls: Map<string, RememberedCall>;
}

/** A call the session remembers: what was asked (tool and arguments, as JSON) and its answer. */
export interface RememberedCall {
  readonly asked: string;
  readonly answer: Promise<CallToolResult>;
}

export interface CallRequest {
  readonly name: string;
  readonly args: Record<string, unknown>;
  /** The JSON-RPC id of the tools/call request. */
  readonly requestId: string | number;
  readonly signal: AbortSignal;
  readonly progress: ProgressRelay | undefined;
}

/** The idempotency key of a call: the session and the JSON-RPC id, hashed to a fixed length. */
export function callKey(sessionId: string, requestId: string | number): string {
  return `mcp-${hash("sha256", `${sessionId}\u0000${JSON.stringify(requestId)}`, "hex")}`;
}

/**
 * Answers a tools/call; the same JSON-RPC id in the same session, asking the same, gets the first
 * call's answer. The same id asking another tool or other arguments is refused, never answered
 * with the earlier call's result, as the server refuses an Idempotency-Key reused with another body.
 */
export function handleCall(ctx: GatewayContext, session: Session, request: CallRequest): Promise<CallToolResult> {
  const key = callKey(session.id, request.requestId);
  const asked = JSON.stringify([request.name, request.args]);
  const earlier = session.calls.get(key);
  if (earlier !== undefined) {
    if (earlier.asked === asked) return earlier.answer;
    return Promise.resolve(
      errorResult(`refused: the request id of this call was already used for another call in this session; nothing was forwarded`),
    );
  }
  const answer = decideAndRun(ctx, session, key, request).catch((error: unknown) => {
    ctx.log.error("call failed inside the gateway", { session: session.id, tool: request.name, error: messageOf(error) });
    return errorResult(
      `refused: the gateway could not complete \`${request.name}\` (${messageOf(error)}); nothing was forwarded unless a decision allowed it`,
    );
  });
  const remembered: RememberedCall = { asked, answer };
  session.calls.set(key, remembered);
  if (session.calls.size > GATEWAY_LIMITS.rememberedCallsMax) session.calls.delete(session.calls.keys().next().value!);
  // A large result is not kept once answered: a retry after that is refused as already run (alreadyRan).
  void answer.then((result) => {
    if (charsOver(result, GATEWAY_LIMITS.rememberedResultCharsMax) && session.calls.get(key) === remembered) session.calls.delete(key);
  });
  return answer;
}

/**
 * Whether a result's JSON text would be longer than `max` characters, read from the value without
 * writing that text (which would copy the result once more per call): strings and keys count their
 * length and quotes, other values their text, punctuation one character each. Escapes are not
 * counted: what is bounded is the memory a remembered result holds. Iterative, and it stops once
 * over `max`, so it holds at most `max` values to visit however deep or large the result is.
 */
export function charsOver(value: unknown, max: number): boolean {
  const pending: unknown[] = [value];
  let chars = 0;
  while (pending.length > 0 && chars <= max) {
    const next = pending.pop();
    if (typeof next === "string") chars += next.length + 2;
    else if (Array.isArray(next)) {
      chars += 1 + Math.max(1, next.length);
      if (chars <= max) for (const item of next) pending.push(item);
    } else if (typeof next === "object" && next !== null) {
      chars += 1;
      for (const name of Object.keys(next)) {
        chars += name.length + 4;
        if (chars > max) break;
        pending.push((next as Record<string, unknown>)[name]);
      }
    } else chars += String(next).length;
  }
  return chars > max;
}

async function decideAndRun(ctx: GatewayContext, session: Session, key: string, request: CallRequest): Promise<CallToolResult> {
  const catalog = ctx.catalog();
  const route = catalog.routes.get(request.name);
  if (route === undefined) return errorResult(`refused: no tool \`${request.name}\` behind this gateway; nothing was forwarded`);
  // A call that cannot reach its upstream is refused before any decision: nothing is held or used.
  if (!route.upstream.alive)
    return errorResult(
      `refused: the upstream \`${route.upstream.name}\` of \`${request.name}\` is down (restarting); nothing was decided or forwarded`,
    );
  if (route.unnameable !== undefined && route.action.length > GATEWAY_LIMITS.actionNameCharsMax)
    return errorResult(`refused: \`${request.name}\` cannot be decided: ${route.unnameable}; nothing was forwarded`);
  const action = actionOf(route.action, route.mapping, request.args);
  if (!action.ok)
    return errorResult(`refused: \`${request.name}\` cannot be described to the authority server: ${action.reason}; nothing was forwarded`);
  const decided = await decide(
    ctx,
    session,
    key,
    { label: request.name, action: route.action, body: action.body },
    request.signal,
    request.progress,
  );
  if (!decided.ok) return errorResult(decided.refusal);
  // Decided only so that the refusal is sealed: in observe mode the server answers `allow`.
  if (route.unnameable !== undefined)
    return errorResult(
      `refused: \`${request.name}\` cannot be decided: ${route.unnameable}; it was not run (decision ${decided.ledgerId})`,
    );
  if (decided.replayed) return alreadyRan(ctx, session, request.name, decided.ledgerId);
  return forwardAndSettle(ctx, session, key, route, request, decided.ledgerId, action.heldMinor);
}

/** What is decided: the name shown in refusals, the action's tool and the body without grant and attestation. */
export interface Asked {
  readonly label: string;
  readonly action: string;
  readonly body: Omit<AuthorizeBody, "grant_id" | "attestation" | "approval_id">;
}

/**
 * `replayed`: the server answered the stored `allow` of an earlier request under the same key, so
 * the decision may already have been acted on (docs/decisions/1309-a-decision-runs-once.md).
 */
export type Decided =
  | { readonly ok: true; readonly ledgerId: string; readonly replayed: boolean }
  | { readonly ok: false; readonly refusal: string };

/**
 * Decides one request at the authority server: authorize, wait for a human when the policy gates
 * it, authorize again with the approval. Only `allow` with a sealed decision lets it through.
 */
export async function decide(
  ctx: GatewayContext,
  session: Session,
  key: string,
  asked: Asked,
  signal: AbortSignal,
  progress: ProgressRelay | undefined,
): Promise<Decided> {
  const body: AuthorizeBody = { ...asked.body, grant_id: ctx.config.authority.grantId, ...attestationOf(ctx, ctx.catalog()) };
  let decision = await authorize(ctx, body, key);
  if (decision.outcome === "gated" && decision.ledger_id !== null && decision.decided_by === "policy") {
    const waited = await waitForApproval(ctx, decision.ledger_id, signal, progress);
    if (!waited.ok) return { ok: false, refusal: waited.message };
    decision = await authorize(ctx, { ...body, approval_id: waited.approvalId }, `${key}:${waited.approvalId}`);
  }
  ctx.log.info("decision", {
    session: session.id,
    tool: asked.label,
    action: asked.action,
    outcome: decision.outcome,
    ledger_id: decision.ledger_id,
    ...(decision.ledger_id === null
      ? { reason: decision.reason, reason_code: decision.reason_code ?? null }
      : { decided_by: decision.decided_by, mode: decision.enforcement_mode }),
    // In observe every decision is `allow`: what enforce would have said is the point of observing.
    ...(decision.ledger_id !== null && decision.would_outcome !== undefined ? { would_outcome: decision.would_outcome } : {}),
  });
  if (decision.outcome !== "allow" || decision.ledger_id === null) return { ok: false, refusal: refusalText(asked.label, decision) };
  return { ok: true, ledgerId: decision.ledger_id, replayed: decision.replayed === true };
}

function attestationOf(ctx: GatewayContext, catalog: Catalog): Pick<AuthorizeBody, "attestation"> {
  const attested = ctx.config.attestation;
  return attested === undefined ? {} : { attestation: { manifest_hash: catalog.manifestHash, ...attested } };
}

/** Authorize that never throws: a 4xx or anything unexpected is a refusal without a ledger record. */
async function authorize(ctx: GatewayContext, body: AuthorizeBody, key: string): Promise<AuthorizeResult> {
  try {
    return await ctx.authority.authorize(body, { idempotencyKey: key });
  } catch (error) {
    const cause =
      error instanceof AuthorityProblemError
        ? `${error.status} \`${error.problem.code}\`: ${error.problem.detail ?? error.problem.title}`
        : messageOf(error);
    return {
      outcome: "deny",
      ledger_id: null,
      gates: [],
      reason: `the authority server refused the request (${cause})`,
      ...(error instanceof AuthorityProblemError ? { reason_code: error.problem.code } : {}),
      unavailable: { cause: "unreadable_response", attempts: 1, message: cause },
    };
  }
}

/**
 * The answer to a retry whose decision was already answered and whose result the gateway no longer
 * holds: the tool is not run a second time on one decision.
 */
function alreadyRan(ctx: GatewayContext, session: Session, tool: string, ledgerId: string): CallToolResult {
  ctx.log.warn("call already ran", { session: session.id, tool, ledger_id: ledgerId });
  return errorResult(
    `refused: \`${tool}\` already ran on decision ${ledgerId} (this request id was answered before and its result is no longer held); it was not run again`,
  );
}

async function forwardAndSettle(
  ctx: GatewayContext,
  session: Session,
  key: string,
  route: Route,
  request: CallRequest,
  ledgerId: string,
  heldMinor: number,
): Promise<CallToolResult> {
  let result: CallToolResult;
  let failed: boolean;
  let thrown = false;
  try {
    result = await route.upstream.call(route.tool.name, request.args, request.signal, request.progress?.forwarding());
    failed = result.isError === true;
  } catch (error) {
    failed = true;
    thrown = true;
    result = errorResult(
      `\`${request.name}\` failed in the upstream \`${route.upstream.name}\`: ${messageOf(error)}${heldMinor > 0 ? "; its hold was released" : ""}`,
    );
  }
  if (heldMinor > 0) {
    const spend = spendOf(route.mapping, heldMinor, thrown ? undefined : result, failed);
    try {
      await ctx.authority.decisions.settle(ledgerId, { amount_minor: spend.amountMinor }, { idempotencyKey: `${key}:settle` });
      ctx.log.info("settled", {
        session: session.id,
        ledger_id: ledgerId,
        amount_minor: spend.amountMinor,
        held_minor: heldMinor,
        basis: spend.basis,
      });
    } catch (error) {
      // The tool ran: its result is not hidden. The hold keeps counting until it expires.
      ctx.log.error("settlement failed", {
        session: session.id,
        ledger_id: ledgerId,
        amount_minor: spend.amountMinor,
        error: messageOf(error),
      });
    }
  }
  return result;
}
