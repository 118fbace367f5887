// Authorize: every request is decided by the one decision step (steps/batch.ts, decision 1841):
// its chain, live usage, certificate and any approval read under its tree's lock, the engine's
// decision, then the sealed record and its holds written in the same transaction, before anything
// is answered (docs/decisions.md). A batch of one is the same step. A deny is a decision, never a
// `Refusal`, which answers only a request that cannot be decided (a key that may not authorize, a
// reused idempotency key, a malformed body).

import type { AuthorizeBody } from "@agent-authority/api";
import { BatchWriteConflict } from "../../store/core/index.js";
import { Refusal, type PreparedAnswer, type RequestClaim } from "../common/index.js";
import type { Caller, ServiceContext } from "../common/index.js";
import { callerForSecret, callerOfKey, unauthenticated } from "../keys/index.js";
import { authorizeBatchStep, decideAlone } from "./steps/batch.js";
import { authorizeRefusal, type StepInput } from "./steps/read.js";
import { answersExpiredUpTo, crashPoint, replayStored } from "../idempotency/index.js";
import { hashSecret } from "../../secrets.js";

/**
 * Who asks: a caller already authenticated (and allowed to authorize), or the hash of the key
 * presented, which the decision's own transaction looks up and checks (the authorize worker, whose
 * decision cache keeps the key's row).
 */
export type Asker = Caller | { readonly keyHash: string };

/**
 * Where a decision runs within its group-commit batch on PostgreSQL: by the presented key (one
 * agent's, whose breakers it locks first), then by grant (whose tree it locks next). Batches that
 * run concurrently, on one replica or several, then take their locks in one order and do not
 * deadlock in the usual case; the rare deadlock left (a grant delegated to another agent, an
 * agent with several keys) is detected by PostgreSQL and retried.
 */
function batchOrder(asker: Asker, body: AuthorizeBody): string {
  return `${"keyHash" in asker ? asker.keyHash : asker.keyId}\n${body.grant_id}`;
}

/**
 * `POST /v1/authorize` for a key presented by its hash, or for a caller already authenticated
 * (AuthZEN's enforcement points). With an idempotency claim, the key is looked up and stored in
 * the decision's own transaction, so a decision and its key commit together: a retry either
 * replays the first answer or finds nothing was decided. A key that may not authorize writes
 * nothing and is answered its 401 or 403, like a reused idempotency key its 422.
 */
export async function authorizeAction(
  ctx: ServiceContext,
  asker: Asker,
  body: AuthorizeBody,
  request?: RequestClaim,
): Promise<PreparedAnswer | Refusal> {
  // Stored answers expire (IDEMPOTENCY_LIMITS): an expired key is looked up as absent and taken as new.
  const expiredUpTo = request === undefined ? 0 : answersExpiredUpTo(ctx.now());
  const input: StepInput = { ctx, asker, body, request, expiredUpTo };
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      // Group commit: one commit for the decisions of an event-loop turn, decided together by the
      // step; alone (a batch that failed, tried again), each is the same step on a batch of one.
      const answer = await ctx.store.batchedTransaction((tx) => decideAlone(tx, input), batchOrder(asker, body), {
        step: authorizeBatchStep,
        input,
      });
      if (answer instanceof Refusal) return answer;
      if (ctx.faults !== undefined && request !== undefined && !answer.replayed && answer.keyId !== undefined)
        crashPoint(ctx, "after-commit", { ...request, callerKeyId: answer.keyId });
      return answer;
    } catch (error) {
      // Another process committed the same key (or used the same approval) first: this decision
      // rolled back; deciding again reads what it wrote.
      if (!(error instanceof BatchWriteConflict)) throw error;
      if (attempt === 1 && request === undefined) throw error;
    }
  }
  // Both tries found the key taken: replay the answer its taker committed with it.
  const caller = "keyHash" in asker ? callerOfKey(await ctx.store.findKeyByHash(asker.keyHash)) : asker;
  if (caller === undefined) return unauthenticated(true);
  const claim = { ...request!, callerKeyId: caller.keyId };
  return { ...(await replayStored(ctx, claim, expiredUpTo)), keyId: caller.keyId };
}

/** A request as the HTTP layer read it: its body, validated, and its idempotency claim if any. */
export interface CheckedRequest {
  readonly body: AuthorizeBody;
  readonly claim: RequestClaim | undefined;
}

/** What the HTTP layer hands the authorize service: the key presented and how to read the rest. */
export interface AuthorizeRequest {
  /** The key presented (`authorization: Bearer …` or `x-api-key`); undefined when none was. */
  readonly secret: string | undefined;
  /** Reads and checks the body and its idempotency claim; throws the refusal of a request that is not well formed. */
  readonly read: () => Promise<CheckedRequest>;
}

/** What the request's log line learns on the way: the id of the key once it is known. */
export interface RequestNotes {
  keyId?: string;
}

/** The caller of a presented key, or the 401 or 403 of one that may not authorize. */
async function authorizingCaller(ctx: ServiceContext, secret: string | undefined): Promise<Caller | Refusal> {
  const caller = secret === undefined ? undefined : await callerForSecret(ctx.store, secret);
  return authorizeRefusal(caller, secret !== undefined) ?? caller!;
}

/**
 * `POST /v1/authorize`, the one entry of the HTTP layer: reads the request, decides, and answers
 * the prepared answer or a refusal. The key presented is looked up by its hash in the decision's
 * own transaction, with the other keys of its batch (decision 0322; the authorize worker's
 * decision cache keeps the row on SQLite), so a request costs the database no statement of its
 * own; a key that may not authorize is answered its 401 or 403 from there. A 401 or 403 comes
 * before any complaint about the request itself: a request refused before it gets there is
 * authenticated here first.
 */
export async function authorize(ctx: ServiceContext, request: AuthorizeRequest, notes: RequestNotes): Promise<PreparedAnswer | Refusal> {
  const { secret } = request;
  if (secret === undefined) return unauthenticated(false);
  let checked: CheckedRequest;
  try {
    checked = await request.read();
  } catch (error) {
    const caller = await authorizingCaller(ctx, secret);
    if (caller instanceof Refusal) return caller;
    notes.keyId = caller.keyId;
    throw error;
  }
  const keyHash = hashSecret(secret);
  const worker = ctx.authorizeWorker;
  return worker === undefined
    ? authorizeAction(ctx, { keyHash }, checked.body, checked.claim)
    : worker.authorize(keyHash, checked.body, checked.claim);
}
