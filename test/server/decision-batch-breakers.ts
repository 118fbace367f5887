// The batch step's promises for agents with breakers (decision 0321), on either database: two
// servers on one database decide an agent's requests in batches, evaluate its breakers after each
// decision in batch order, and trip once. An armed revoking trip denies every decision sealed after
// it, however the burst fell into batches; an observing one records one trip, where the window's
// replay finds it.

import { expect, it } from "vitest";
import { ADMIN_KEY } from "./http-harness.js";
import { agentWithKey, ATTESTATION, get, grant, post, postRetryingContention } from "./server-processes.js";

/** Two servers on one database, the count of requests their batch steps decided, and the database's rows. */
export interface BatchServers {
  /** The base URL of the server for request `i` (they alternate). */
  readonly base: (i: number) => string;
  readonly stepped: () => number;
  /** Rows of a query with `?` parameters, straight from the database. */
  readonly rows: <T>(sql: string, values: readonly unknown[]) => Promise<T[]>;
}

/** The tests of agents with breakers in the batch step, for the servers `env` gives once they run. */
export function batchBreakerTests(env: BatchServers): void {
  const count = async (sql: string, values: readonly unknown[]) => Number((await env.rows<{ n: number | string }>(sql, values))[0]!.n);

  it("decides an agent with breakers in the step and leaves a grant not held to its own transaction, in the same bursts", async () => {
    const watched = await agentWithKey(env.base(0), "batch-watched");
    const plain = await agentWithKey(env.base(0), "batch-plain");
    const contract = await post(env.base(0), `/agents/${watched.id}/contracts`, ADMIN_KEY, {
      metric: "out_of_scope_rate",
      ceiling: 0.5,
      window_decisions: 20,
    });
    expect(contract.status, JSON.stringify(contract.body)).toBe(201);
    // A breaker in `observe` is still watched: its agent's decisions are evaluated one after another.
    const breaker = await post<{ id: string }>(env.base(0), `/agents/${watched.id}/breakers`, ADMIN_KEY, {
      contract_id: contract.body.id,
      action: "notify",
    });
    expect(breaker.status, JSON.stringify(breaker.body)).toBe(201);
    const watchedGrant = await grant(env.base(0), watched.id, { budget_amount_minor: 1_000, budget_currency: "EUR" });
    const plainGrant = await grant(env.base(0), plain.id, { budget_amount_minor: 1_000, budget_currency: "EUR" });
    const before = env.stepped();
    const replies = await Promise.all(
      Array.from({ length: 90 }, (_, i) => {
        // A third of the requests present the other agent's grant: not held, denied, sealed in the caller's own chain.
        const [key, grantId] =
          i % 3 === 0 ? [watched.key, watchedGrant] : i % 3 === 1 ? [plain.key, plainGrant] : [plain.key, watchedGrant];
        return postRetryingContention(
          env.base(i),
          "/authorize",
          key,
          {
            grant_id: grantId,
            tool: "payments.send",
            amount_minor: 100,
            currency: "EUR",
            attestation: ATTESTATION,
          },
          `batch-mixed-${i}`,
        );
      }),
    );
    for (const reply of replies) expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(replies.filter((r, i) => i % 3 === 0 && r.body.outcome === "allow")).toHaveLength(10);
    expect(replies.filter((r, i) => i % 3 === 1 && r.body.outcome === "allow")).toHaveLength(10);
    expect(replies.filter((r, i) => i % 3 === 2 && r.body.outcome === "allow")).toHaveLength(0);
    expect(await get(env.base(1), `/grants/${watchedGrant}`, ADMIN_KEY)).toMatchObject({ uses: 10, held_minor: 1_000 });
    expect(await get(env.base(1), `/grants/${plainGrant}`, ADMIN_KEY)).toMatchObject({ uses: 10, held_minor: 1_000 });
    // The watched agent's thirty and the plain agent's own grant's thirty may be stepped; the grant not held never is.
    expect(env.stepped() - before).toBeGreaterThan(0);
    expect(env.stepped() - before).toBeLessThanOrEqual(60);
    // A notify breaker whose window stays below its ceiling: evaluated after every decision, it never trips.
    expect((await get<{ trips: unknown[] }>(env.base(1), `/breakers/${breaker.body.id}`, ADMIN_KEY)).trips).toEqual([]);
    const signals = await count(`SELECT count(*) AS n FROM decision_signals WHERE agent_id = ?`, [watched.id]);
    expect(signals).toBe(30);
  });

  /**
   * An agent whose `revoke` breaker on `exhausted_rate` over a window of twenty (armed or observing)
   * sees a budget of forty payments spent: thirteen one at a time, then a burst of 120 on both
   * servers. The window breaches at the eighth exhausted decision (a 95% lower bound above 0.2),
   * the burst's thirty-fifth, usually in the middle of a batch. Answers the burst's decisions in
   * the tree's order, the breaker's trips and the trip's place among the tree's records.
   */
  async function tripInBurst(name: string, armed: boolean) {
    const agent = await agentWithKey(env.base(0), name);
    const contract = await post(env.base(0), `/agents/${agent.id}/contracts`, ADMIN_KEY, {
      metric: "exhausted_rate",
      ceiling: 0.2,
      window_decisions: 20,
    });
    expect(contract.status, JSON.stringify(contract.body)).toBe(201);
    const breaker = await post<{ id: string }>(env.base(0), `/agents/${agent.id}/breakers`, ADMIN_KEY, {
      contract_id: contract.body.id,
      action: "revoke",
    });
    expect(breaker.status, JSON.stringify(breaker.body)).toBe(201);
    if (armed) {
      const approver = await post<{ key: string }>(env.base(0), "/keys", ADMIN_KEY, {
        identity: `risk-${name}@example.com`,
        kind: "human",
        roles: ["approver"],
      });
      expect(approver.status, JSON.stringify(approver.body)).toBe(201);
      const arm = await post(env.base(0), `/breakers/${breaker.body.id}/arm`, approver.body.key, {
        basis: "a fresh agent",
        expecting_trips: 0,
      });
      expect(arm.status, JSON.stringify(arm.body)).toBe(200);
    }
    const grantId = await grant(env.base(0), agent.id, { budget_amount_minor: 4_000, budget_currency: "EUR" });
    const payment = { grant_id: grantId, tool: "payments.send", amount_minor: 100, currency: "EUR", attestation: ATTESTATION };
    for (let i = 0; i < 13; i += 1) expect((await post(env.base(i), "/authorize", agent.key, payment)).body.outcome).toBe("allow");
    const before = env.stepped();
    const replies = await Promise.all(
      Array.from({ length: 120 }, (_, i) => postRetryingContention(env.base(i), "/authorize", agent.key, payment, `${name}-${i}`)),
    );
    for (const reply of replies) expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(env.stepped() - before).toBeGreaterThan(0);
    const trips = (
      await get<{ trips: { ledger_id: string; at: string; grant_ids: string[]; mode: string }[] }>(
        env.base(1),
        `/breakers/${breaker.body.id}`,
        ADMIN_KEY,
      )
    ).trips;
    const answered = new Map(replies.map((r) => [r.body.ledger_id as string, r.body]));
    const sealed = await env.rows<{ id: string }>("SELECT id FROM ledger WHERE tree_id = ? AND kind = 'decision' ORDER BY seq", [grantId]);
    expect(sealed).toHaveLength(133);
    const burst = sealed.slice(13).map((r) => answered.get(r.id)!);
    // Every decision has its signal; the windows replayed trip at the same decisions as the live breaker.
    expect(await count("SELECT count(*) AS n FROM decision_signals WHERE agent_id = ?", [agent.id])).toBe(133);
    const replay = await get<{ breakers: { trips: number; trip_times: string[] }[] }>(
      env.base(0),
      `/agents/${agent.id}/breakers/counterfactual?breaker_id=${breaker.body.id}`,
      ADMIN_KEY,
    );
    expect(replay.breakers[0]).toMatchObject({ trips: trips.length, trip_times: trips.map((t) => t.at) });
    return {
      grantId,
      breakerId: breaker.body.id,
      trips,
      tripAt: sealed.findIndex((r) => r.id === trips[0]?.ledger_id),
      burst: burst.map((d) => (d.outcome === "deny" ? d.reason_code : d.outcome)),
    };
  }

  const times = (n: number, what: string) => Array.from({ length: n }, () => what);

  it("trips an armed revoke breaker once in a burst on two servers, and denies every decision sealed after its trip", async () => {
    const { grantId, breakerId, trips, tripAt, burst } = await tripInBurst("batch-armed-trip", true);
    expect(trips).toHaveLength(1);
    expect(trips[0]).toMatchObject({ mode: "armed", grant_ids: [grantId] });
    expect(await get(env.base(0), `/grants/${grantId}`, ADMIN_KEY)).toMatchObject({ status: "revoked", revoked_by: breakerId, uses: 40 });
    // In the tree's order: twenty-seven allowed, eight exhausted (the last of them tripped), then
    // every one refused as revoked. Decided in a batch before the trip was known, the decisions
    // after it would be exhausted: the batch is decided again one at a time.
    expect(burst).toEqual([...times(27, "allow"), ...times(8, "exhausted"), ...times(85, "status.revoked")]);
    expect(tripAt).toBe(13 + 27 + 7);
  });

  it("records an observing breaker's trip once within a batch, and the decisions after it stand", async () => {
    const { grantId, trips, tripAt, burst } = await tripInBurst("batch-observed-trip", false);
    // Observing changes nothing: the trip is recorded at the eighth exhausted decision, once,
    // though the window stays breached for every decision after it in the same batch.
    expect(trips).toHaveLength(1);
    expect(trips[0]).toMatchObject({ mode: "observe", grant_ids: [grantId] });
    expect(await get(env.base(0), `/grants/${grantId}`, ADMIN_KEY)).toMatchObject({ status: "active", uses: 40 });
    expect(burst).toEqual([...times(27, "allow"), ...times(93, "exhausted")]);
    expect(tripAt).toBe(13 + 27 + 7);
  });
}
