// The breakers' incremental windows against the engine's one-pass replay, on SQLite and
// PostgreSQL: decisions are sealed through the ledger's append function and evaluated in order,
// one per transaction or several per transaction with the windows carried in memory between them
// (the batch step's way, decision 1943); every trip recorded live must be exactly a trip
// `detectTrips` finds on the same history, for windows of decisions and of hours alike, and the
// stored windows must end at the agent's last decision.

import { detectTrips, type DecisionRecord, type Outcome } from "@agent-authority/engine";
import {
  CarriedWindows,
  evaluateBreakers,
  evaluateBreakersAfterDecision,
  sealRecord,
  watchBreakers,
  type ContractRow,
  type SealedDecision,
  type Store,
} from "@agent-authority/server";
import { afterAll, beforeAll, expect, it } from "vitest";
import { forEachStore, openTestStore, type StoreTarget, type TestStore } from "./targets.js";

const MINUTE = 60_000;

/** A small deterministic generator, so a failure replays exactly. */
function random(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (x * 1_664_525 + 1_013_904_223) >>> 0;
    return x / 2 ** 32;
  };
}

const CONTRACTS: readonly Omit<ContractRow, "id" | "agent_id" | "declared_by" | "declared_by_email" | "declared_at" | "description">[] = [
  { metric: "refusal_rate", ceiling: 0.2, window_decisions: 10, window_hours: null },
  { metric: "deny_rate", ceiling: 0.1, window_decisions: 37, window_hours: null },
  { metric: "out_of_scope_rate", ceiling: 0.05, window_decisions: null, window_hours: 1 },
  { metric: "gated_rate", ceiling: 0.15, window_decisions: null, window_hours: 0.5 },
  { metric: "exhausted_rate", ceiling: 0.1, window_decisions: 25, window_hours: null },
];

/** A history of decisions: calm and stormy stretches, and gaps long enough to empty the windows of hours. */
function historyFrom(t0: number, agentId: string, tag: string): SealedDecision[] {
  const next = random(20_261_122);
  const decisions: SealedDecision[] = [];
  let at = t0;
  for (let i = 0; i < 400; i += 1) {
    const stormy = Math.floor(i / 40) % 2 === 1;
    at += next() < 0.05 ? 2 * 60 * MINUTE : Math.floor(next() * 3 * MINUTE);
    const roll = next();
    const outcome: Outcome = roll < (stormy ? 0.4 : 0.9) ? "allow" : roll < 0.94 ? "deny" : roll < 0.97 ? "gated" : "exhausted";
    const reason = outcome === "deny" && next() < 0.5 ? "scope.out_of_scope" : outcome === "allow" ? "decision.allow" : "other";
    const ledger_id = `led_${tag}${String(at).padStart(13, "0")}${String(i).padStart(12, "0")}`;
    decisions.push({ ledger_id, agent_id: agentId, at, outcome, would_outcome: null, reason_code: reason });
  }
  return decisions;
}

/** The agent, its five contracts and a breaker on each; answers the breakers' ids in contract order. */
async function watchedAgent(store: Store, agentId: string, tag: string, t0: number): Promise<string[]> {
  await store.createAgentIfAbsent({ id: agentId, name: `windows-${tag}`, description: null, created_at: t0, created_by: "test" });
  const paths = store.breakerPath();
  const breakers: string[] = [];
  for (const [i, c] of CONTRACTS.entries()) {
    const id = `ctr_${tag}0000000000000000000000${String(i).padStart(3, "0")}`;
    await paths.insertContract({
      ...c,
      id,
      agent_id: agentId,
      description: null,
      declared_by: "owner@example.com",
      declared_by_email: null,
      declared_at: t0,
    });
    const breaker = `brk_${tag}0000000000000000000000${String(i).padStart(3, "0")}`;
    await paths.insertBreaker({
      id: breaker,
      agent_id: agentId,
      contract_id: id,
      action: "notify",
      mode: "observe",
      breached: false,
      created_at: t0,
      created_by: "test",
      armed_at: null,
      armed_by: null,
      basis: null,
      expecting_trips: null,
    });
    breakers.push(breaker);
  }
  return breakers;
}

/** Seals one decision as the decision path does. */
function seal(tx: Store, d: SealedDecision): Promise<unknown> {
  return sealRecord(tx.decisionPath(), {
    id: d.ledger_id,
    tree_id: d.agent_id,
    kind: "decision",
    grant_id: "grt_none",
    agent_id: d.agent_id,
    outcome: d.outcome,
    created_at: d.at,
    body: { would_outcome: null, reason_code: d.reason_code },
  });
}

/** After every signal, as the batch step asks for an agent's last one. */
const AFTER_EVERY_SIGNAL = [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] as const;

/**
 * Evaluates the history: one decision per transaction (`batches` false), or in transactions of 1 to
 * 8 decisions, each sealed, then each evaluated in order with the windows carried, then flushed.
 * `lastKnown`: the agent's last signal is read before the transaction's first, as the batch step
 * reads it under the breaker locks, and given to the carried windows (decision 1954).
 */
async function evaluateHistory(store: Store, history: readonly SealedDecision[], batches: boolean, lastKnown = false): Promise<void> {
  const sizes = random(7);
  for (let start = 0; start < history.length; ) {
    const size = batches ? 1 + Math.floor(sizes() * 8) : 1;
    const group = history.slice(start, start + size);
    start += size;
    await store.transaction(async (tx) => {
      let watched = await watchBreakers(tx, group[0]!.agent_id);
      if (!batches) {
        await seal(tx, group[0]!);
        await evaluateBreakersAfterDecision(tx, watched, group[0]!);
        return;
      }
      const agentId = group[0]!.agent_id;
      const last = lastKnown ? await tx.breakerPath().previousSignal(agentId, AFTER_EVERY_SIGNAL) : undefined;
      const carried = new CarriedWindows(last === undefined ? undefined : new Map([[agentId, last]]));
      for (const d of group) await seal(tx, d);
      for (const d of group) watched = (await evaluateBreakers(tx, watched, d, carried)).watched;
      await carried.flush(tx.breakerPath());
    });
  }
}

function windowsSuite(target: StoreTarget): void {
  let db: TestStore;
  beforeAll(async () => {
    db = await openTestStore(target);
  });
  afterAll(async () => {
    await db?.close();
  });

  for (const [name, tag, batches, lastKnown] of [
    ["one decision per transaction", "a", false, false],
    ["decisions in batches, the windows carried through each", "b", true, false],
    ["decisions in batches, the agent's last signal read before each", "c", true, true],
  ] as const) {
    it(`records live exactly the trips the replay finds: ${name}`, async () => {
      const store = db.store;
      const t0 = Date.now() - 10 * 86_400_000;
      const agentId = `agt_${tag}000000000000000000000000b`;
      const breakers = await watchedAgent(store, agentId, tag, t0);
      const history = historyFrom(t0, agentId, tag);
      await evaluateHistory(store, history, batches, lastKnown);
      const records: DecisionRecord[] = history.map((d) => ({ at: d.at, outcome: d.outcome as Outcome, reason_code: d.reason_code }));
      let total = 0;
      for (const [i, c] of CONTRACTS.entries()) {
        const expected = detectTrips(records, c).map((t) => t.at);
        const live = (await store.breakerPath().listTrips(breakers[i]!)).map((t) => t.at);
        expect(live, `${c.metric} ${c.window_decisions ?? `${c.window_hours} h`}`).toEqual(expected);
        total += expected.length;
      }
      // The history is stormy enough that the comparison is not vacuous.
      expect(total).toBeGreaterThan(5);
      // The stored windows end at the agent's last decision: a carry that was not written is seen here.
      const state = await store.breakerPath().windowState(agentId);
      expect(state?.head?.[0]).toBe(history.at(-1)!.at);
    });
  }
}

forEachStore("breaker windows against the engine's replay", windowsSuite);
