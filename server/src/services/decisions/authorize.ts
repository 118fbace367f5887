// Authorize: gather the chain, its live usage, the certificate and any approval under the tree's
// lock, let the engine decide, then seal the decision and place its holds in the same transaction,
// before anything is answered (docs/decisions.md). A deny is a decision, never a `Refusal`, which
// answers only a request that cannot be decided (a key that may not authorize, a reused
// idempotency key, a malformed body).

import type { AuthorizeBody } from "@agent-authority/api";
import { decide, type ApprovalRecord, type Decision } from "@agent-authority/engine";
import { newId } from "../../ids.js";
import { settledInOrder } from "../../store/sql/index.js";
import type { CertificateRecord, GrantRecord, GrantUsage, HeldTree, Store, StoreBatchable } from "../../store/core/index.js";
import { Refusal } from "../common/index.js";
import { JSON_TYPE, type IdempotencyClaim, type PreparedAnswer, type RequestClaim } from "../common/index.js";
import type { Caller, ServiceContext } from "../common/index.js";
import { callerForSecret, callerOfKey, missingRole, unauthenticated } from "../keys/index.js";
import type { TripRow, WatchedBreaker } from "../../store/breakers/index.js";
import { evaluateBreakersAfterDecision, watchBreakers } from "../breakers/index.js";
import { gateTexts } from "./gate-text.js";
import { decisionAnswerText, decisionStatement } from "./decision-text.js";
import { sealRecord } from "../seal/index.js";
import { chainLinks, engineRequest, engineState, holdCharge, sealedBody, sealedDecision, type ApprovalStatus } from "./steps/decide.js";
import type { StepInput } from "./steps/read.js";
import { emitGated } from "./steps/write.js";
import { authorizeBatchStep } from "./steps/batch.js";
import { answersExpiredUpTo, crashPoint, decisionAnswerRow, replayStored, storedAnswer } from "../idempotency/index.js";
import { hashSecret } from "../../secrets.js";

/**
 * Who asks: a caller already authenticated (and allowed to authorize), or the hash of the key
 * presented, which the decision's own transaction looks up and checks (the authorize worker, whose
 * decision cache keeps the key's row).
 */
export type Asker = Caller | { readonly keyHash: string };

/** Only agent keys authorize. */
const AUTHORIZE_ROLES = ["agent"] as const;

/** The 401 or 403 for a caller that may not authorize (`presented`: a key was sent); undefined when it may. */
function authorizeRefusal(caller: Caller | undefined, presented: boolean): Refusal | undefined {
  if (caller === undefined) return unauthenticated(presented);
  return AUTHORIZE_ROLES.some((role) => caller.roles.includes(role)) ? undefined : missingRole("POST", "/v1/authorize", AUTHORIZE_ROLES);
}

const NO_TRIPS: readonly TripRow[] = Object.freeze([]);

/** Thrown inside a transaction to roll it back when another request took the idempotency key first. */
class KeyTakenMeanwhile extends Error {}

async function presentedApproval(
  tx: Store,
  approvalId: string | undefined,
): Promise<{ record: ApprovalRecord | null; status: ApprovalStatus | null }> {
  if (approvalId === undefined) return { record: null, status: null };
  const row = await tx.decisionPath().getApproval(approvalId);
  if (row === undefined) return { record: null, status: "unknown" };
  // A used approval is single use: it is withheld, so the policy asks for a new one (`gated`).
  if (row.used_at !== null) return { record: null, status: "used" };
  return {
    record: {
      approval_id: row.id,
      approver: row.approver,
      grant_id: row.grant_id,
      tool: row.tool,
      amount_ceiling_minor: row.amount_ceiling_minor,
      expires_at: row.expires_at,
    },
    status: "usable",
  };
}

/**
 * The decision's time. INVARIANT (signals-in-order): an agent's breakers see its decisions in the
 * order they were sealed, each at or after the one before. On SQLite the transaction holds the
 * database, so the clock alone gives that order. On PostgreSQL two replicas (or two connections
 * of one) read their clocks before they queue for the agent's breaker lock, so a decision could
 * be sealed after a later-timed one; its windows, counted up to its own time, would then miss that
 * decision and could leave `breached` only to enter it, and trip, again. Under the lock the time
 * is therefore at least the agent's last signal's.
 */
async function decisionTime(tx: Store, now: number, agentId: string, watched: boolean): Promise<number> {
  if (!watched || tx.dialect !== "postgres") return now;
  const last = await tx.breakerPath().previousSignal(agentId, [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]);
  return last === null ? now : Math.max(now, last[0]);
}

/** Everything a decision works from, read under its locks. */
interface DecisionReads {
  readonly breakers: readonly WatchedBreaker[];
  readonly now: number;
  /** The tree the decision is sealed in: its grant's, or the agent's own for a grant it does not hold. */
  readonly treeId: string;
  readonly chain: readonly GrantRecord[];
  readonly usage: Map<string, GrantUsage>;
  readonly certificate: CertificateRecord | undefined;
  readonly approval: { record: ApprovalRecord | null; status: ApprovalStatus | null };
  /** The tree's chain head when already read (null: none yet); undefined: sealing reads it. */
  readonly head?: { seq: number; hash: string } | null;
}

/**
 * A grant the caller does not hold: decided on an empty chain and sealed in the agent's own chain,
 * whose lock the caller takes. The answer and the lock say nothing about someone else's tree.
 */
function notHeldReads(agentId: string, body: AuthorizeBody, breakers: readonly WatchedBreaker[], now: number): DecisionReads {
  return {
    breakers,
    now,
    treeId: agentId,
    chain: [],
    usage: new Map(),
    certificate: undefined,
    approval: { record: null, status: body.approval_id === undefined ? null : "unknown" },
  };
}

/** The reads one statement at a time: SQLite, and PostgreSQL for a caller that is no agent. */
async function readInTurn(tx: Store, ctx: ServiceContext, caller: Caller, agentId: string, body: AuthorizeBody): Promise<DecisionReads> {
  // On SQLite the transaction already holds the database, so the chain is read at once; on
  // PostgreSQL the grant is read first to find the root whose lock must precede the chain's read.
  const early = tx.dialect === "sqlite" ? await tx.grantChain(body.grant_id) : undefined;
  const grant = early === undefined ? await tx.getGrant(body.grant_id) : early[early.length - 1];
  // INVARIANT (breaker-lock-first): the agent's breakers are locked before the tree.
  const breakers = await watchBreakers(tx, agentId);
  const now = await decisionTime(tx, ctx.now(), agentId, breakers.length > 0);
  if (grant === undefined || caller.agentId === null || grant.agent_id !== caller.agentId) {
    await tx.decisionPath().lockChain(agentId);
    return notHeldReads(agentId, body, breakers, now);
  }
  // INVARIANT (tree-serial): the read-decide-write of a delegation tree runs under its root's
  // lock (a row lock on PostgreSQL; BEGIN IMMEDIATE holds the database on SQLite).
  await tx.lockGrant(grant.root_id);
  const chain = early ?? (await tx.grantChain(grant.id));
  const usage = await tx.decisionPath().liveUsage(
    chain.map((g) => g.id),
    now,
  );
  const approval = await presentedApproval(tx, body.approval_id);
  const certificate = await tx.validCertificate(agentId, ctx.environment);
  return { breakers, now, treeId: grant.root_id, chain, usage, certificate, approval };
}

/**
 * The same reads on PostgreSQL in one flight: the breakers' lock, then the tree's lock and, after
 * it, the chain with its usage, the certificate, the chain head and the approval, sent together
 * on the batch's pipelining connection (one round trip, where one at a time took about eight).
 */
async function readPipelined(tx: Store, ctx: ServiceContext, agentId: string, body: AuthorizeBody): Promise<DecisionReads> {
  const clock = ctx.now();
  // INVARIANT (breaker-lock-first): the breakers' statement is sent, and so runs, first.
  const [breakers, tree, approval] = (await settledInOrder([
    watchBreakers(tx, agentId),
    tx.heldTree(body.grant_id, agentId, ctx.environment, clock),
    presentedApproval(tx, body.approval_id),
  ])) as [readonly WatchedBreaker[], HeldTree, DecisionReads["approval"]];
  const now = await decisionTime(tx, clock, agentId, breakers.length > 0);
  const chain = tree.chain;
  if (chain.length === 0) {
    // The agent's own chain: its lock, then its head, in one round trip too.
    const ledger = tx.decisionPath();
    const [, head] = (await settledInOrder([ledger.lockChain(agentId), ledger.ledgerHead(agentId)])) as [
      unknown,
      { seq: number; hash: string } | undefined,
    ];
    return { ...notHeldReads(agentId, body, breakers, now), head: head ?? null };
  }
  // INVARIANT (live-holds): usage counts the holds live at the decision's own time.
  const usage =
    now === clock
      ? tree.usage
      : await tx.decisionPath().liveUsage(
          chain.map((g) => g.id),
          now,
        );
  return { breakers, now, treeId: chain[0]!.root_id, chain, usage, certificate: tree.certificate, approval, head: tree.head ?? null };
}

/**
 * Decides, seals and counts one request inside an open transaction; answers the response text.
 * `claim`, when given, stores the answer under its idempotency key as the last write and answers
 * whether it did.
 */
async function decideAndSeal(
  tx: Store,
  ctx: ServiceContext,
  caller: Caller,
  body: AuthorizeBody,
  claim?: (text: string) => Promise<boolean>,
): Promise<PreparedAnswer> {
  // An agent key speaks for exactly one agent; any other caller holds no grant.
  const agentId = caller.agentId ?? caller.identity;
  const pipelined = tx.dialect === "postgres" && caller.agentId !== null;
  const reads = pipelined ? await readPipelined(tx, ctx, agentId, body) : await readInTurn(tx, ctx, caller, agentId, body);
  const { breakers, now, chain, approval } = reads;
  const decision = decide(
    engineRequest(body, agentId, approval.record),
    chainLinks(chain, reads.usage),
    engineState(ctx, reads.certificate),
    now,
  );
  const ledgerId = newId("led", now);
  const gates = gateTexts(decision.gates);
  // A decision taken alone is a batch of one (decision 1901).
  const [signature] = ctx.signer.signAnswers([decisionStatement(ledgerId, decision.outcome, agentId, body, now)]);
  const text = decisionAnswerText(ledgerId, decision, now, gates.answer, signature);
  const sealed = sealedBody(caller, body, decision, gates.sealed, approval.status, reads.certificate, chain);
  // With breakers to evaluate, or one statement at a time, each write waits for the one before.
  const together = pipelined && breakers.length === 0;
  const { writes, trips } = decisionWrites(tx, { ledgerId, agentId, now, body, decision, reads, sealed, text, together, claim });
  if (together) await settledInOrder(writes.map((write) => write()));
  else for (const write of writes) await write();
  // The answer carries what the metrics count of the decision: two references it already holds.
  const answer: PreparedAnswer = {
    status: 200,
    contentType: JSON_TYPE,
    text,
    replayed: false,
    keyId: caller.keyId,
    outcome: decision.outcome,
    gate: decision.decided_by,
  };
  const tripped = trips();
  return tripped.length === 0 ? answer : { ...answer, trips: tripped.map((t) => ({ action: t.action, mode: t.mode })) };
}

/** What one decision taken alone writes: the names decideAndSeal has read and decided. */
interface SealWork {
  readonly ledgerId: string;
  readonly agentId: string;
  readonly now: number;
  readonly body: AuthorizeBody;
  readonly decision: Decision;
  readonly reads: DecisionReads;
  readonly sealed: ReturnType<typeof sealedBody>;
  readonly text: string;
  readonly together: boolean;
  readonly claim: ((text: string) => Promise<boolean>) | undefined;
}

/**
 * The writes of one decision, in order: its sealed record, its breakers' evaluation, its gated
 * event, its charges, its approval's single use and its idempotency key; and, once they ran, the
 * breakers it tripped.
 */
function decisionWrites(tx: Store, w: SealWork): { writes: (() => Promise<unknown>)[]; trips: () => readonly TripRow[] } {
  const { ledgerId, agentId, now, body, decision, reads } = w;
  const ledger = tx.decisionPath();
  let trips: readonly TripRow[] = NO_TRIPS;
  const seen = sealedDecision(ledgerId, agentId, now, decision);
  const record = { id: ledgerId, tree_id: reads.treeId, kind: "decision" as const, grant_id: body.grant_id, agent_id: agentId };
  const writes: (() => Promise<unknown>)[] = [
    () => sealRecord(ledger, { ...record, outcome: decision.outcome, created_at: now, body: w.sealed }, reads.head),
    // Breakers read the sealed decision in its own transaction: a trip commits with it or not at all.
    // Only watched breakers can trip; without any, no closure waits to keep the (empty) result.
    reads.breakers.length === 0
      ? () => evaluateBreakersAfterDecision(tx, reads.breakers, seen)
      : async () => {
          trips = await evaluateBreakersAfterDecision(tx, reads.breakers, seen);
        },
  ];
  if (decision.outcome === "gated") writes.push(() => emitGated(tx, ledgerId, agentId, body, decision, now));
  if (decision.counted) writes.push(() => placeCharges(tx, ledgerId, reads.chain, decision, now, w.together));
  if (decision.counted && decision.approval_id !== undefined) {
    const approvalId = decision.approval_id;
    // Single use: under the tree lock nobody else can have used it since it was read.
    writes.push(async () => {
      if (!(await ledger.useApproval(approvalId, now, ledgerId))) throw new Error("approval used concurrently under the tree lock");
    });
  }
  const claim = w.claim;
  if (claim !== undefined)
    writes.push(async () => {
      if (!(await claim(w.text))) throw new KeyTakenMeanwhile();
    });
  return { writes, trips: () => trips };
}

/**
 * Counts the decision as a use of every grant of the chain and places its holds (INVARIANT
 * budget-monotone). The engine gives holds only to a decision with an amount, one per grant.
 * `together`: the statements are sent at once (a pipelining PostgreSQL connection).
 */
async function placeCharges(
  tx: Store,
  ledgerId: string,
  chain: readonly GrantRecord[],
  decision: Decision,
  now: number,
  together: boolean,
): Promise<void> {
  const ledger = tx.decisionPath();
  const writes: (() => Promise<void>)[] = [() => ledger.countUses(chain.map((grant) => grant.id))];
  for (const hold of decision.holds) writes.push(() => ledger.insertCharge(holdCharge(ledgerId, hold, now)));
  if (together) await settledInOrder(writes.map((write) => write()));
  else for (const write of writes) await write();
}

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
 * An agent key's decision, or one by a key known only by its hash (the authorize worker's), may be
 * decided with the others of its batch in three steps (decisions 0318 on PostgreSQL, 0319 on
 * SQLite); its own function remains for every case the step leaves, a key that may not authorize
 * among them.
 */
function batchable(
  ctx: ServiceContext,
  asker: Asker,
  body: AuthorizeBody,
  request: RequestClaim | undefined,
  expiredUpTo: number,
): StoreBatchable | undefined {
  if (!("keyHash" in asker) && asker.agentId === null) return undefined;
  const input: StepInput = { ctx, asker, body, request, expiredUpTo };
  return { step: authorizeBatchStep, input };
}

/**
 * `POST /v1/authorize` for an agent key. With an idempotency claim, the key is looked up and
 * stored in the decision's own transaction, so a decision and its key commit together: a retry
 * either replays the first answer or finds nothing was decided. A key presented by its hash is
 * looked up there too; one that may not authorize writes nothing and is answered its refusal
 * after the transaction (401 or 403), like a reused idempotency key (422).
 */
export async function authorizeAction(
  ctx: ServiceContext,
  asker: Asker,
  body: AuthorizeBody,
  request?: RequestClaim,
): Promise<PreparedAnswer | Refusal> {
  // A caller known before the transaction has its claim now: a batch step (decision 0318) answers
  // without running the transaction's own function, and the claim is still needed after it.
  let claim: IdempotencyClaim | undefined =
    "keyHash" in asker || request === undefined ? undefined : { ...request, callerKeyId: asker.keyId };
  // Stored answers expire (IDEMPOTENCY_LIMITS): an expired key is looked up as absent and taken as new.
  const expiredUpTo = request === undefined ? 0 : answersExpiredUpTo(ctx.now());
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      // Group commit on SQLite: one fsync for the decisions of an event-loop turn, each answered after it.
      const answer = await ctx.store.batchedTransaction(
        async (tx): Promise<PreparedAnswer | Refusal> => {
          const caller = await askingCaller(tx, asker);
          if (caller instanceof Refusal) return caller;
          claim = request === undefined ? undefined : { ...request, callerKeyId: caller.keyId };
          return decideClaimed(tx, ctx, caller, body, claim, expiredUpTo);
        },
        batchOrder(asker, body),
        batchable(ctx, asker, body, request, expiredUpTo),
      );
      if (answer instanceof Refusal) return answer;
      // A key known by its hash and decided by the batch step: its claim is under the key that answered.
      if (claim === undefined && request !== undefined && answer.keyId !== undefined) claim = { ...request, callerKeyId: answer.keyId };
      if (ctx.faults !== undefined && claim !== undefined && !answer.replayed) crashPoint(ctx, "after-commit", claim);
      return answer;
    } catch (error) {
      // Another process committed the same key first: this decision rolled back; replay theirs.
      if (!(error instanceof KeyTakenMeanwhile) || claim === undefined) throw error;
    }
  }
  // Both tries found the key taken: replay the answer its taker committed with it.
  return { ...(await replayStored(ctx, claim!, expiredUpTo)), keyId: claim!.callerKeyId };
}

/** The caller of the transaction: the one given, or the key's, looked up by its hash in it; or the key's 401 or 403. */
async function askingCaller(tx: Store, asker: Asker): Promise<Caller | Refusal> {
  if (!("keyHash" in asker)) return asker;
  const presented = callerOfKey(await tx.findKeyByHash(asker.keyHash));
  return authorizeRefusal(presented, true) ?? presented!;
}

/**
 * One decision under its idempotency claim, inside the transaction: the stored answer of a key
 * already used (or the reused-key refusal), otherwise the decision with the key stored as its last
 * write; a key taken meanwhile rolls it back.
 */
async function decideClaimed(
  tx: Store,
  ctx: ServiceContext,
  caller: Caller,
  body: AuthorizeBody,
  claim: IdempotencyClaim | undefined,
  expiredUpTo: number,
): Promise<PreparedAnswer | Refusal> {
  if (claim !== undefined) {
    // A key reused with another request has written nothing: it fails after the transaction,
    // so that the other transactions of its batch need not run again (group-commit.ts).
    const stored = storedAnswer(await tx.decisionPath().getIdempotency(claim.callerKeyId, claim.key, expiredUpTo), claim);
    if (stored instanceof Refusal) return stored;
    if (stored !== undefined) return { ...stored, keyId: caller.keyId };
  }
  const store =
    claim === undefined
      ? undefined
      : (answer: string) => tx.decisionPath().putIdempotency(decisionAnswerRow(claim, answer, ctx.now()), expiredUpTo);
  const prepared = await decideAndSeal(tx, ctx, caller, body, store);
  // The crash tests' hook (decision 0605); a real deployment has no faults and reads one property.
  if (ctx.faults !== undefined && claim !== undefined) crashPoint(ctx, "before-commit", claim);
  return prepared;
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
