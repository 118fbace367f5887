// Idempotency-Key (docs/decisions.md): the same key and body replay the first answer byte for byte; the
// same key with another request is refused. Keys live in the database, per calling key, so they
// survive restarts and hold across processes. A key is claimed in the transaction of the effect it
// answers (decisions 0603 and 0605), and its stored answer expires after IDEMPOTENCY_LIMITS.retentionMs.

import { createHash } from "node:crypto";
import { Refusal } from "../common/index.js";
import type { IdempotencyRow } from "../../store/decisions/index.js";
import { JSON_TYPE, type IdempotencyClaim, type PreparedAnswer, type RequestClaim } from "../common/index.js";
import type { ServiceContext } from "../common/index.js";

export const IDEMPOTENCY_HEADER = "idempotency-key";

/** Every limit of stored answers, units last. */
export const IDEMPOTENCY_LIMITS = Object.freeze({
  /** A stored answer is replayed for 24 hours; from then on its key is free again. */
  retentionMs: 24 * 60 * 60 * 1000,
  /** How often the pruner looks for expired answers. */
  pruneIntervalMs: 60 * 1000,
  /** How soon the pruner looks again after a pass that stopped at its limit, with more left. */
  pruneBacklogIntervalMs: 1000,
  /** The most answers one delete removes: one short transaction. */
  pruneBatchRowsMax: 1000,
  /** The most deletes of one pass. */
  pruneBatchesPerPassMax: 20,
});

/** A key is 1 to 255 visible ASCII characters (a UUID is the usual choice). */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** Answers stored at or before this time have expired at `now`. */
export function answersExpiredUpTo(now: number): number {
  return now - IDEMPOTENCY_LIMITS.retentionMs;
}

/** The claim of a request before its caller is known, or undefined when it carries no key; a malformed key is a 400. */
export function requestClaim(header: string | string[] | undefined, method: string, path: string, body: Buffer): RequestClaim | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== "string" || !KEY_PATTERN.test(header)) {
    throw new Refusal("invalid_idempotency_key", "`Idempotency-Key` must be 1 to 255 visible ASCII characters, sent once");
  }
  const requestHash = createHash("sha256").update(method).update("\n").update(path).update("\n").update(body).digest("hex");
  return { key: header, method, path, requestHash };
}

/** The claim of a request under its caller's key, or undefined when it carries no key; a malformed key is a 400. */
export function idempotencyClaim(
  header: string | string[] | undefined,
  callerKeyId: string,
  method: string,
  path: string,
  body: Buffer,
): IdempotencyClaim | undefined {
  const claim = requestClaim(header, method, path, body);
  return claim === undefined ? undefined : { ...claim, callerKeyId };
}

export function reusedKey(claim: RequestClaim): Refusal {
  return new Refusal(
    "idempotency_key_reused",
    `\`Idempotency-Key\` \`${claim.key.slice(0, 80)}\` was used with another request; use a new key for a new request`,
  );
}

function replayOf(row: IdempotencyRow): PreparedAnswer {
  const cut = row.response.indexOf("\n");
  return { status: row.status, contentType: row.response.slice(0, cut), text: row.response.slice(cut + 1), replayed: true };
}

/**
 * The one replay check: the stored first answer to replay, the refusal of a key used with another
 * request (`idempotency_key_reused`), or undefined when the key is new. Authorize calls it inside
 * its decision's transaction (where the refusal is returned, not thrown, so that its batch need not
 * run again); the Express routes through `lookUp`.
 */
/** The row that keeps a decision's JSON answer `text` under its claim, as every decision path stores it. */
export function decisionAnswerRow(claim: IdempotencyClaim, text: string, now: number): IdempotencyRow {
  return {
    caller_key_id: claim.callerKeyId,
    idempotency_key: claim.key,
    method: claim.method,
    path: claim.path,
    request_hash: claim.requestHash,
    status: 200,
    response: `${JSON_TYPE}\n${text}`,
    created_at: now,
  };
}

export function storedAnswer(row: IdempotencyRow | undefined, claim: IdempotencyClaim): PreparedAnswer | Refusal | undefined {
  if (row === undefined) return undefined;
  if (row.request_hash !== claim.requestHash || row.method !== claim.method || row.path !== claim.path) return reusedKey(claim);
  return replayOf(row);
}

/** The key's live stored answer, undefined when it has none; a key used with another request throws its refusal. */
async function lookUp(ctx: ServiceContext, claim: IdempotencyClaim, expiredUpTo: number): Promise<PreparedAnswer | undefined> {
  const stored = storedAnswer(await ctx.store.decisionPath().getIdempotency(claim.callerKeyId, claim.key, expiredUpTo), claim);
  if (stored instanceof Refusal) throw stored;
  return stored;
}

/** An answer as a route made it: what is sent now, and what a replay gets when that differs. */
export interface FreshAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
  /** Kept for replays instead of this answer, which must not be kept (it carries a secret). */
  readonly kept?: { readonly status: number; readonly contentType: string; readonly text: string };
}

/** How a route answers a claimed request: its work, and the answer of a refusal (undefined for a 5xx). */
export interface ClaimedWork {
  /** False for a request that changes nothing (a preview): it runs outside any transaction. */
  readonly effects: boolean;
  run(ctx: ServiceContext): Promise<FreshAnswer>;
  refusal(error: unknown): FreshAnswer | undefined;
}

/** Thrown inside the claim's transaction to roll it back: another request holds a live answer for the key. */
class KeyTaken extends Error {}

/** The status of a claim inside its own transaction, before its answer is known; never committed. */
const CLAIMED_STATUS = 0;

/**
 * Answers a request that carries an Idempotency-Key exactly once. A stored live answer is
 * replayed. A request with effects claims the key first in the transaction that makes them and
 * stores its answer there too, so claim, effects and answer commit together or not at all; a
 * racing request with the same key waits for that commit (SQLite's write lock, PostgreSQL's unique
 * index) and replays the answer. A refusal (4xx) changes nothing and is stored after its rollback;
 * a 5xx is not stored, so a retry runs again.
 */
export async function answerOnce(ctx: ServiceContext, claim: IdempotencyClaim, work: ClaimedWork): Promise<PreparedAnswer> {
  const expiredUpTo = answersExpiredUpTo(ctx.now());
  const ledger = ctx.store.decisionPath();
  const replay = await lookUp(ctx, claim, expiredUpTo);
  if (replay !== undefined) return replay;
  let answer: FreshAnswer;
  try {
    answer = work.effects ? await runClaimed(ctx, claim, expiredUpTo, work) : await work.run(ctx);
    if (work.effects) return { ...answer, replayed: false };
  } catch (error) {
    if (error instanceof KeyTaken) return replayStored(ctx, claim, expiredUpTo);
    const refused = work.refusal(error);
    if (refused === undefined) throw error;
    answer = refused;
  }
  const kept = answer.kept ?? answer;
  const stored = await ledger.putIdempotency(rowOf(claim, kept.status, `${kept.contentType}\n${kept.text}`, ctx.now()), expiredUpTo);
  return stored ? { ...answer, replayed: false } : replayStored(ctx, claim, expiredUpTo);
}

async function runClaimed(ctx: ServiceContext, claim: IdempotencyClaim, expiredUpTo: number, work: ClaimedWork): Promise<FreshAnswer> {
  const answer = await ctx.store.transaction(async (tx) => {
    const ledger = tx.decisionPath();
    if (!(await ledger.putIdempotency(rowOf(claim, CLAIMED_STATUS, "", ctx.now()), expiredUpTo))) throw new KeyTaken();
    const fresh = await work.run({ ...ctx, store: tx });
    const kept = fresh.kept ?? fresh;
    await ledger.answerIdempotency(claim.callerKeyId, claim.key, kept.status, `${kept.contentType}\n${kept.text}`);
    crashPoint(ctx, "before-commit", claim);
    return fresh;
  });
  crashPoint(ctx, "after-commit", claim);
  return answer;
}

/**
 * The stored answer of a key this request found taken by another (its own claim rolled back): the
 * one replay after a lost race, for the Express routes and authorize alike.
 */
export async function replayStored(ctx: ServiceContext, claim: IdempotencyClaim, expiredUpTo: number): Promise<PreparedAnswer> {
  const replay = await lookUp(ctx, claim, expiredUpTo);
  // INVARIANT (claims-commit-answered): a claim commits only with its answer, so a key taken is a key answered.
  if (replay === undefined || replay.status === CLAIMED_STATUS) throw new Error("idempotency key taken but no answer found");
  return replay;
}

function rowOf(claim: IdempotencyClaim, status: number, response: string, now: number): IdempotencyRow {
  return {
    caller_key_id: claim.callerKeyId,
    idempotency_key: claim.key,
    method: claim.method,
    path: claim.path,
    request_hash: claim.requestHash,
    status,
    response,
    created_at: now,
  };
}

/** The test-only fault hooks of the context (FaultHooks): kill the process at this point for this key. */
export function crashPoint(ctx: ServiceContext, point: "before-commit" | "after-commit", claim: IdempotencyClaim): void {
  const key = point === "before-commit" ? ctx.faults?.crashBeforeCommitKey : ctx.faults?.crashAfterCommitKey;
  if (key !== undefined && key === claim.key) process.kill(process.pid, "SIGKILL");
}
