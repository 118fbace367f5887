// The breakers' incremental windows against the engine's one-pass replay, on SQLite and
// PostgreSQL: decisions are sealed through the ledger's append function and evaluated one by one in
// their own transactions, as the decision path does; every trip recorded live must be exactly a
// trip `detectTrips` finds on the same history, for windows of decisions and of hours alike.

import { detectTrips, type DecisionRecord, type Outcome } from "@agent-authority/engine";
import { evaluateBreakersAfterDecision, sealRecord, watchBreakers, type ContractRow } from "@agent-authority/server";
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

function windowsSuite(target: StoreTarget): void {
  let db: TestStore;
  beforeAll(async () => {
    db = await openTestStore(target);
  });
  afterAll(async () => {
    await db?.close();
  });

  it("records live exactly the trips the replay finds", async () => {
    const store = db.store;
    const t0 = Date.now() - 10 * 86_400_000;
    const { agent } = await store.createAgentIfAbsent({
      id: "agt_0000000000000000000000000b",
      name: "windows",
      description: null,
      created_at: t0,
      created_by: "test",
    });
    const paths = store.breakerPath();
    for (const [i, c] of CONTRACTS.entries()) {
      const id = `ctr_00000000000000000000000${String(i).padStart(3, "0")}`;
      await paths.insertContract({
        ...c,
        id,
        agent_id: agent.id,
        description: null,
        declared_by: "owner@example.com",
        declared_by_email: null,
        declared_at: t0,
      });
      await paths.insertBreaker({
        id: `brk_00000000000000000000000${String(i).padStart(3, "0")}`,
        agent_id: agent.id,
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
    }
    const next = random(20_261_122);
    const history: DecisionRecord[] = [];
    let at = t0;
    for (let i = 0; i < 400; i += 1) {
      // Calm and stormy stretches, and gaps long enough to empty the windows of hours.
      const stormy = Math.floor(i / 40) % 2 === 1;
      at += next() < 0.05 ? 2 * 60 * MINUTE : Math.floor(next() * 3 * MINUTE);
      const roll = next();
      const outcome: Outcome = roll < (stormy ? 0.4 : 0.9) ? "allow" : roll < 0.94 ? "deny" : roll < 0.97 ? "gated" : "exhausted";
      const reason = outcome === "deny" && next() < 0.5 ? "scope.out_of_scope" : outcome === "allow" ? "decision.allow" : "other";
      const ledgerId = `led_${String(at).padStart(13, "0")}${String(i).padStart(13, "0")}`;
      await store.transaction(async (tx) => {
        const watched = await watchBreakers(tx, agent.id);
        await sealRecord(tx.decisionPath(), {
          id: ledgerId,
          tree_id: agent.id,
          kind: "decision",
          grant_id: "grt_none",
          agent_id: agent.id,
          outcome,
          created_at: at,
          body: { would_outcome: null, reason_code: reason },
        });
        await evaluateBreakersAfterDecision(tx, watched, {
          ledger_id: ledgerId,
          agent_id: agent.id,
          at,
          outcome,
          would_outcome: null,
          reason_code: reason,
        });
      });
      history.push({ at, outcome, reason_code: reason });
    }
    let total = 0;
    for (const [i, c] of CONTRACTS.entries()) {
      const expected = detectTrips(history, c).map((t) => t.at);
      const live = (await paths.listTrips(`brk_00000000000000000000000${String(i).padStart(3, "0")}`)).map((t) => t.at);
      expect(live, `${c.metric} ${c.window_decisions ?? `${c.window_hours} h`}`).toEqual(expected);
      total += expected.length;
    }
    // The history is stormy enough that the comparison is not vacuous.
    expect(total).toBeGreaterThan(5);
  });
}

forEachStore("breaker windows against the engine's replay", windowsSuite);
