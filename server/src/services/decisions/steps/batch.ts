// The decision path: every authorize, a batch of one included, in three steps (decisions 0318,
// 1841): read everything once under the batch's locks, decide in order in memory, write once per
// table. The group commit runs it for a batch's first try on PostgreSQL and on SQLite (decision
// 0319); a batch that fails is tried again one decision at a time, each a batch of one of the same
// step. Agents with breakers are evaluated after the writes, one decision after another in batch
// order (decision 0321).

import { settledInOrder } from "../../../store/sql/index.js";
import type { StoreBatchStep, Store } from "../../../store/core/index.js";
import type { SignalKey, TripRow, WatchedBreaker } from "../../../store/breakers/index.js";
import { CarriedWindows, evaluateBreakers, watchBreakers } from "../../breakers/index.js";
import { crashPoint } from "../../idempotency/index.js";
import { decideBatch, type BatchDecisions, type BatchInput } from "./decide.js";
import { batchCallers, readBatch, type StepInput } from "./read.js";
import { emitGatedEvents, writeBatch } from "./write.js";
import type { PreparedAnswer } from "../../common/index.js";
import { Refusal } from "../../common/index.js";

/**
 * A breaker revoked grants on a decision that others of the batch follow: they were decided before
 * the revocation was known, so the batch is rolled back and decided one at a time.
 */
export class TripWithinBatch extends Error {}

/**
 * Requests of two servers' contexts met in one batch (two servers on one store): the batch is
 * rolled back and decided one at a time, each with its own context.
 */
export class ContextsWithinBatch extends Error {}

/** Whether a trip changed what a later decision reads: an armed `revoke` revokes grants; the rest record. */
const revokes = (trip: TripRow): boolean => trip.mode === "armed" && trip.action === "revoke";

/** Last-signal keys beyond any decision's: `previousSignal` before them answers the agent's last signal. */
const AFTER_EVERY_SIGNAL = [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] as const;

/**
 * The breakers of every agent of the batch that has any (their rows are already locked by the read
 * step) and the latest of those agents' last signals' times: INVARIANT signals-in-order wants
 * each decision's time at or after its agent's last signal's, which on PostgreSQL another
 * replica may have sealed, with a later clock, while this batch waited for the locks.
 */
async function watchedOf(
  tx: Store,
  agents: readonly string[],
): Promise<{ breakers: Map<string, readonly WatchedBreaker[]>; latest: number; lastSignals: Map<string, SignalKey | null> }> {
  const paths = tx.breakerPath();
  const reads = (await settledInOrder([
    ...agents.map((agentId) => watchBreakers(tx, agentId)),
    ...agents.map((agentId) => paths.previousSignal(agentId, AFTER_EVERY_SIGNAL)),
  ])) as unknown[];
  const breakers = new Map<string, readonly WatchedBreaker[]>();
  const lastSignals = new Map<string, SignalKey | null>();
  let latest = Number.NEGATIVE_INFINITY;
  for (const [i, agentId] of agents.entries()) {
    breakers.set(agentId, reads[i] as readonly WatchedBreaker[]);
    const last = (reads[agents.length + i] as SignalKey | null | undefined) ?? null;
    lastSignals.set(agentId, last);
    if (last !== null) latest = Math.max(latest, last[0]);
  }
  return { breakers, latest, lastSignals };
}

/**
 * Evaluates the breakers after each watched decision in batch order, each seeing the signals of
 * those before it; answers each watched decision's trips by its place in the batch. A trip that
 * revoked grants on a decision that a later decision of the batch follows throws TripWithinBatch.
 * Each agent's windows are read once, carried through its decisions in memory and written once
 * (decision 1943).
 */
async function evaluateInOrder(
  tx: Store,
  decided: BatchDecisions,
  breakers: Map<string, readonly WatchedBreaker[]>,
  lastSignals: ReadonlyMap<string, SignalKey | null>,
): Promise<Map<number, TripRow[]>> {
  const trips = new Map<number, TripRow[]>();
  const lastDecided = decided.lastSealed;
  const windows = new CarriedWindows(lastSignals);
  for (const { index, seen } of decided.watched) {
    const result = await evaluateBreakers(tx, breakers.get(seen.agent_id) ?? [], seen, windows);
    breakers.set(seen.agent_id, result.watched);
    if (result.trips.length === 0) continue;
    if (index !== lastDecided && result.trips.some(revokes))
      throw new TripWithinBatch(`a breaker of ${seen.agent_id} revoked grants within a batch`);
    trips.set(index, result.trips);
  }
  await windows.flush(tx.breakerPath());
  return trips;
}

/** The decision step: each input a StepInput, each answered its PreparedAnswer or Refusal. */
export const authorizeBatchStep: StoreBatchStep = async (tx, batchInputs) => {
  const requests = batchInputs as readonly StepInput[];
  const ctx = requests[0]!.ctx;
  if (requests.some((request) => request.ctx !== ctx)) throw new ContextsWithinBatch("two servers' decisions in one batch");
  const callers = await batchCallers(tx, requests);
  const inputs = callers.filter((input): input is BatchInput => !(input instanceof Refusal));
  if (inputs.length === 0) return callers.map((refusal) => ({ value: refusal }));
  const clock = ctx.now();
  let reads = await readBatch(tx, inputs, ctx.environment, clock);
  const { breakers, latest, lastSignals } = await watchedOf(tx, [...reads.watchedAgents]);
  // The batch's time moves on to an agent's later last signal; the usage is then read again at it
  // (INVARIANT live-holds: a hold counts while it has not expired at the decision's own time).
  const now = Math.max(clock, latest);
  if (now > clock) reads = { ...reads, usage: await tx.decisionPath().liveUsage([...reads.grants.keys()], now) };
  // A stored answer is replaced only when every claim of the batch sees it expired.
  const expiredUpTo = Math.min(...inputs.map((input) => input.expiredUpTo));
  const decided = decideBatch(inputs, reads, now, expiredUpTo);
  await writeBatch(tx, decided);
  // Breakers read the sealed decisions in their transaction: a trip commits with them or not at all.
  const trips = await evaluateInOrder(tx, decided, breakers, lastSignals);
  await emitGatedEvents(tx, decided);
  // The crash tests' hook (decision 0605), as in a decision's own transaction.
  if (ctx.faults !== undefined) for (const input of decided.claimed) crashPoint(ctx, "before-commit", input.claim!);
  // Each request's answer, by its place in the batch: its refusal, or what the step decided.
  let next = 0;
  return callers.map((input) => {
    if (input instanceof Refusal) return { value: input };
    const i = next++;
    return { value: withTrips(decided.answers[i]!, trips.get(i)) };
  });
};

/** The decision step on a batch of one: the transaction's own function of a decision. */
export async function decideAlone(tx: Store, input: StepInput): Promise<PreparedAnswer | Refusal> {
  const [answer] = await authorizeBatchStep(tx, [input]);
  return answer!.value as PreparedAnswer | Refusal;
}

/** An answer with the trips its decision caused, which the metrics count. */
function withTrips(answer: PreparedAnswer | Refusal, trips: readonly TripRow[] | undefined): PreparedAnswer | Refusal {
  if (trips === undefined || answer instanceof Refusal) return answer;
  return { ...answer, trips: trips.map((t) => ({ action: t.action, mode: t.mode })) };
}
