// Circuit breakers (docs/breakers.md): created in `observe`, armed by a human who names the 90-day trip
// count, and evaluated after every sealed decision of their agent, inside that decision's
// transaction. A trip is the contract's status entering `breached`; in `observe` it records what it
// would have done, armed it raises a finding (`notify`) or revokes the agent's grants (`revoke`).

import type { BreakerArmBody, BreakerCreateBody } from "@agent-authority/api";
import { wilsonInterval } from "@agent-authority/engine";
import { Refusal } from "../common/index.js";
import { newId } from "../../ids.js";
import type { BreakerRow, BreakerStore, ContractRow, TripRow, WatchedBreaker } from "../../store/breakers/index.js";
import type { Store } from "../../store/core/index.js";
import { visibleAgent } from "../agents/index.js";
import type { Caller, ServiceContext } from "../common/index.js";
import { contractView, countWindow, measureCounts, signalOf, windowKey } from "./contracts.js";
import { findBreaker } from "./breaker-reads.js";
import { windowCounts, type CarriedWindows } from "./breaker-windows.js";
import { countTrips } from "./counterfactual.js";
import { emitEvent } from "../events/index.js";
import { revokeSubtreeWithin } from "../grants/index.js";
import { iso } from "../common/index.js";

/** What the decision path tells the breakers about one sealed decision. */
export interface SealedDecision {
  readonly ledger_id: string;
  readonly agent_id: string;
  readonly at: number;
  readonly outcome: string;
  readonly would_outcome: string | null;
  readonly reason_code: string | null;
}

/**
 * Reads the agent's breakers with their contracts and, on PostgreSQL, locks their rows until the
 * decision's transaction ends. The decision path calls it before it takes the delegation tree's
 * lock (INVARIANT breaker-lock-first): decisions of one agent with breakers are then evaluated one
 * at a time, so an entry into `breached` is seen, and acted on, exactly once, and a revocation of
 * the agent's other trees never waits on a decision that waits on these rows.
 */
export function watchBreakers(tx: Store, agentId: string): Promise<readonly WatchedBreaker[]> {
  return tx.breakerPath().watchedBreakers(agentId, true);
}

/**
 * Evaluates every breaker of the agent after one sealed decision, in the decision's transaction:
 * records the decision's signal, measures each contract once per distinct window, and records and
 * performs each trip. Answers the trips. `watched` is what `watchBreakers` answered for the agent.
 */
export async function evaluateBreakersAfterDecision(
  tx: Store,
  watched: readonly WatchedBreaker[],
  decision: SealedDecision,
): Promise<TripRow[]> {
  return (await evaluateBreakers(tx, watched, decision)).trips;
}

/**
 * What `evaluateBreakersAfterDecision` does, answering besides the trips the agent's breakers as
 * they stand after it (each `breached` as it set it), for the next decision of the same agent in
 * the same transaction (a batch of decisions, decision 0321). With `carried`, the agent's windows
 * move on in memory until the caller flushes them (decision 1943).
 */
export async function evaluateBreakers(
  tx: Store,
  watched: readonly WatchedBreaker[],
  decision: SealedDecision,
  carried?: CarriedWindows,
): Promise<{ trips: TripRow[]; watched: readonly WatchedBreaker[] }> {
  const paths = tx.breakerPath();
  const signal = signalOf(decision.outcome, decision.would_outcome, decision.reason_code);
  const seq = await paths.insertSignal(decision.ledger_id, decision.agent_id, decision.at, signal);
  if (watched.length === 0) return { trips: [], watched };
  const windows = await windowCounts(
    paths,
    watched.map((w) => w.contract),
    { agent_id: decision.agent_id, at: decision.at, seq, signal },
    carried,
  );
  const trips: TripRow[] = [];
  const announced = new Set<string>();
  const after: WatchedBreaker[] = [];
  for (const w of watched) {
    const { breaker, contract } = w;
    const measure = measureCounts(contract, windows.get(windowKey(contract))!);
    const breached = measure.status === "breached";
    if (breached === breaker.breached) {
      after.push(w);
      continue;
    }
    await paths.setBreached(breaker.id, breached);
    after.push(Object.freeze({ breaker: Object.freeze({ ...breaker, breached }), contract }));
    // INVARIANT (trip-on-entry): only the entry into `breached` trips; a breaker never acts on
    // `not_demonstrated` or `within`, and a run of breached decisions is one trip.
    if (!breached) continue;
    // One `contract.breached` per contract and entry, however many breakers watch it.
    if (!announced.has(contract.id)) {
      announced.add(contract.id);
      await emitContractBreached(tx, contract, decision, measure.successes, measure.n);
    }
    trips.push(await trip(tx, paths, breaker, contract, decision, measure.successes, measure.n));
  }
  return { trips, watched: after };
}

async function emitContractBreached(
  tx: Store,
  contract: ContractRow,
  decision: SealedDecision,
  successes: number,
  n: number,
): Promise<void> {
  await emitEvent(tx, "contract.breached", {
    subject: contract.id,
    agentId: contract.agent_id,
    at: decision.at,
    data: {
      contract_id: contract.id,
      agent_id: contract.agent_id,
      metric: contract.metric,
      ceiling: contract.ceiling,
      declared_by: contract.declared_by,
      ledger_id: decision.ledger_id,
      n,
      successes,
      lower_bound: wilsonInterval(successes, n).lower,
    },
  });
}

/** The events of one trip: `finding.raised` when it raised one, then `breaker.tripped`. */
async function emitTrip(tx: Store, row: TripRow, wouldRevoke: readonly string[], findingMessage: string): Promise<void> {
  if (row.finding_id !== null) {
    await emitEvent(tx, "finding.raised", {
      subject: row.finding_id,
      agentId: row.agent_id,
      at: row.at,
      data: {
        finding_id: row.finding_id,
        kind: "breaker_trip",
        agent_id: row.agent_id,
        breaker_id: row.breaker_id,
        trip_id: row.id,
        message: findingMessage,
      },
    });
  }
  await emitEvent(tx, "breaker.tripped", {
    subject: row.breaker_id,
    agentId: row.agent_id,
    at: row.at,
    data: {
      breaker_id: row.breaker_id,
      trip_id: row.id,
      agent_id: row.agent_id,
      contract_id: row.contract_id,
      ledger_id: row.ledger_id,
      action: row.action,
      mode: row.mode,
      performed: row.mode === "armed",
      would: row.action === "revoke" ? { revoke: [...wouldRevoke] } : { raise_finding: true },
      declared_by: row.declared_by,
      grant_ids: row.grant_ids,
      finding_id: row.finding_id,
    },
  });
}

/** The grants a revoking trip revokes: every live tree of the agent when armed; observed, the same list and nothing touched. */
async function revokeForTrip(
  tx: Store,
  paths: BreakerStore,
  breaker: BreakerRow,
  contract: ContractRow,
  at: number,
  tripId: string,
  why: string,
): Promise<string[]> {
  const trees = await paths.liveGrantTreesOf(breaker.agent_id);
  if (breaker.mode !== "armed") return trees.all;
  const revocation = { at, by: breaker.id, reason: why };
  const grantIds: string[] = [];
  for (const root of trees.roots) {
    grantIds.push(
      ...(await revokeSubtreeWithin(tx, root, revocation, { breaker_id: breaker.id, trip_id: tripId, declared_by: contract.declared_by })),
    );
  }
  return grantIds;
}

/** The finding an armed finding-raising trip records, with the contract and the figures that breached it. */
async function raiseFinding(
  paths: BreakerStore,
  breaker: BreakerRow,
  contract: ContractRow,
  decision: SealedDecision,
  trip: { readonly id: string; readonly why: string; readonly successes: number; readonly n: number },
): Promise<string> {
  const findingId = newId("fnd", decision.at);
  await paths.insertFinding({
    id: findingId,
    kind: "breaker_trip",
    agent_id: breaker.agent_id,
    breaker_id: breaker.id,
    trip_id: trip.id,
    at: decision.at,
    detail: {
      message: trip.why,
      contract_id: contract.id,
      metric: contract.metric,
      ceiling: contract.ceiling,
      declared_by: contract.declared_by,
      ledger_id: decision.ledger_id,
      successes: trip.successes,
      n: trip.n,
    },
  });
  return findingId;
}

/** Records one trip and, when armed, performs its action. No action widens anything. */
async function trip(
  tx: Store,
  paths: BreakerStore,
  breaker: BreakerRow,
  contract: ContractRow,
  decision: SealedDecision,
  successes: number,
  n: number,
): Promise<TripRow> {
  const id = newId("trp", decision.at);
  const why = `breaker \`${breaker.id}\` tripped: contract \`${contract.id}\` (${contract.metric} at most ${contract.ceiling}) declared by ${contract.declared_by} is breached`;
  const grantIds = breaker.action === "revoke" ? await revokeForTrip(tx, paths, breaker, contract, decision.at, id, why) : [];
  const findingId =
    breaker.action !== "revoke" && breaker.mode === "armed"
      ? await raiseFinding(paths, breaker, contract, decision, { id, why, successes, n })
      : null;
  const interval = wilsonInterval(successes, n);
  const row: TripRow = {
    id,
    breaker_id: breaker.id,
    agent_id: breaker.agent_id,
    contract_id: contract.id,
    ledger_id: decision.ledger_id,
    at: decision.at,
    mode: breaker.mode,
    action: breaker.action,
    declared_by: contract.declared_by,
    armed_by: breaker.armed_by,
    successes,
    n,
    lower_bound: interval.lower,
    upper_bound: interval.upper,
    grant_ids: grantIds,
    finding_id: findingId,
  };
  await paths.insertTrip(row);
  await emitTrip(tx, row, grantIds, why);
  return row;
}

export function tripView(t: TripRow): Record<string, unknown> {
  return {
    id: t.id,
    breaker_id: t.breaker_id,
    contract_id: t.contract_id,
    ledger_id: t.ledger_id,
    at: iso(t.at),
    mode: t.mode,
    action: t.action,
    performed: t.mode === "armed",
    declared_by: t.declared_by,
    armed_by: t.armed_by,
    n: t.n,
    successes: t.successes,
    interval: { lower: t.lower_bound, upper: t.upper_bound },
    grant_ids: t.grant_ids,
    finding_id: t.finding_id,
  };
}

async function breakerView(store: Store, breaker: BreakerRow, now: number): Promise<Record<string, unknown>> {
  const paths = store.breakerPath();
  const contract = (await paths.getContract(breaker.contract_id))!;
  return {
    id: breaker.id,
    agent_id: breaker.agent_id,
    contract_id: breaker.contract_id,
    action: breaker.action,
    mode: breaker.mode,
    created_at: iso(breaker.created_at),
    created_by: breaker.created_by,
    armed_at: breaker.armed_at === null ? null : iso(breaker.armed_at),
    armed_by: breaker.armed_by,
    basis: breaker.basis,
    expecting_trips: breaker.expecting_trips,
    contract: contractView(contract, measureCounts(contract, await countWindow(paths, contract, breaker.agent_id, now)), now),
    trips: (await paths.listTrips(breaker.id)).map(tripView),
    history: (await paths.listEvents(breaker.id)).map((e) => ({ kind: e.kind, actor: e.actor, at: iso(e.at), detail: e.detail })),
  };
}

/** `POST /v1/agents/{agent_id}/breakers`: always in `observe`, whatever is asked. */
export async function createBreaker(
  ctx: ServiceContext,
  caller: Caller,
  agentId: string,
  body: BreakerCreateBody,
): Promise<Record<string, unknown>> {
  await visibleAgent(ctx.store, caller, agentId);
  return ctx.store.transaction(async (tx) => {
    const paths = tx.breakerPath();
    const contract = await paths.getContract(body.contract_id);
    if (contract === undefined || contract.agent_id !== agentId)
      throw new Refusal("contract_not_found", `no contract \`${body.contract_id}\` of agent \`${agentId}\``);
    const now = ctx.now();
    // A breaker starts from the contract's present reading: a contract already breached trips only
    // after it has left `breached`, as the counterfactual replay would see it.
    const breached = measureCounts(contract, await countWindow(paths, contract, agentId, now)).status === "breached";
    const breaker: BreakerRow = {
      id: newId("brk", now),
      agent_id: agentId,
      contract_id: contract.id,
      action: body.action,
      mode: "observe",
      breached,
      created_at: now,
      created_by: caller.identity,
      armed_at: null,
      armed_by: null,
      basis: null,
      expecting_trips: null,
    };
    await paths.insertBreaker(breaker);
    await paths.appendEvent({
      id: newId("bev", now),
      breaker_id: breaker.id,
      kind: "created",
      actor: caller.identity,
      at: now,
      detail: { action: body.action },
    });
    return breakerView(tx, breaker, now);
  });
}

/** `GET /v1/breakers/{breaker_id}`: the breaker, its contract's live reading and its trip history. */
export async function getBreaker(ctx: ServiceContext, id: string): Promise<Record<string, unknown>> {
  return breakerView(ctx.store, await findBreaker(ctx.store, id), ctx.now());
}

/**
 * `POST /v1/breakers/{breaker_id}/arm`: the arming human must name the trip count of the last 90
 * days. A different count is 409 and the answer does not contain the count, so arming can only
 * follow a reading of the counterfactual, never a guess corrected by the error.
 */
export async function armBreaker(ctx: ServiceContext, caller: Caller, id: string, body: BreakerArmBody): Promise<Record<string, unknown>> {
  const breaker = await findBreaker(ctx.store, id);
  if (breaker.mode === "armed") throw new Refusal("breaker_already_armed", `breaker \`${id}\` is already armed`);
  const now = ctx.now();
  const contract = (await ctx.store.breakerPath().getContract(breaker.contract_id))!;
  const computed = await countTrips(ctx.store, breaker.agent_id, [{ breaker, contract }], now);
  if (computed[0]!.trip_times.length !== body.expecting_trips) {
    throw new Refusal(
      "trip_count_mismatch",
      "`expecting_trips` differs from the trip count of the last 90 days; read the counterfactual again",
    );
  }
  return ctx.store.transaction(async (tx) => {
    const paths = tx.breakerPath();
    const changed = await paths.setMode(id, "observe", "armed", {
      at: now,
      by: caller.identity,
      basis: body.basis,
      expecting_trips: body.expecting_trips,
    });
    if (!changed) throw new Refusal("breaker_already_armed", `breaker \`${id}\` is already armed`);
    await paths.appendEvent({
      id: newId("bev", now),
      breaker_id: id,
      kind: "armed",
      actor: caller.identity,
      at: now,
      detail: { basis: body.basis, expecting_trips: body.expecting_trips },
    });
    await emitEvent(tx, "breaker.armed", {
      subject: id,
      agentId: breaker.agent_id,
      at: now,
      data: {
        breaker_id: id,
        agent_id: breaker.agent_id,
        contract_id: breaker.contract_id,
        action: breaker.action,
        armed_by: caller.identity,
        basis: body.basis,
        expecting_trips: body.expecting_trips,
      },
    });
    return breakerView(tx, (await paths.getBreaker(id))!, now);
  });
}

/** `POST /v1/breakers/{breaker_id}/disarm`: back to `observe`, where it changes nothing. */
export async function disarmBreaker(
  ctx: ServiceContext,
  caller: Caller,
  id: string,
  reason: string | undefined,
): Promise<Record<string, unknown>> {
  await findBreaker(ctx.store, id);
  const now = ctx.now();
  return ctx.store.transaction(async (tx) => {
    const paths = tx.breakerPath();
    const changed = await paths.setMode(id, "armed", "observe", { at: null, by: null, basis: null, expecting_trips: null });
    if (!changed) throw new Refusal("breaker_not_armed", `breaker \`${id}\` is in \`observe\``);
    await paths.appendEvent({
      id: newId("bev", now),
      breaker_id: id,
      kind: "disarmed",
      actor: caller.identity,
      at: now,
      detail: { reason: reason ?? null },
    });
    return breakerView(tx, (await paths.getBreaker(id))!, now);
  });
}

/** `GET /v1/findings`: findings of armed `notify` breakers, oldest first. */
export async function listFindings(
  ctx: ServiceContext,
  agentId: string | undefined,
  after: string | undefined,
  limit: number,
): Promise<{ findings: Record<string, unknown>[]; next_after: string | null }> {
  const rows = await ctx.store.breakerPath().listFindings({ agent_id: agentId }, after, limit);
  return {
    findings: rows.map((f) => ({
      id: f.id,
      kind: f.kind,
      agent_id: f.agent_id,
      breaker_id: f.breaker_id,
      trip_id: f.trip_id,
      at: iso(f.at),
      detail: f.detail,
    })),
    next_after: rows.length === limit ? rows[rows.length - 1]!.id : null,
  };
}
