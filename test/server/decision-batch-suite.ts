// The batch step's promises (decisions 0318 to 0322), on either database: two servers on one
// database decide their requests' batches with one read and one write per kind of row. Budgets
// stay exact, a key decides once, the keys of a burst are authenticated in its batches (401 and
// 403 as before), gated decisions write their events, a revoked grant denies the next batch, the
// sealed chains verify, and an agent's breakers are evaluated after each of its decisions in batch
// order and trip once: an armed revoking trip denies every decision sealed after it, however the
// burst fell into batches; an observing one records one trip, where the window's replay finds it.
// Each test also proves that the batch step decided requests.

import type { Grant } from "@agent-authority/sdk";
import { verifyLedger, type Store } from "@agent-authority/server";
import { expect, it } from "vitest";
import { ADMIN_KEY } from "./http-harness.js";
import { sentSixTimesEach, agentWithKey, ATTESTATION, get, grant, post, postRetryingContention } from "./server-processes.js";

/** Two servers on one database, the count of requests their batch steps decided, and the database's rows. */
export interface BatchServers {
  /** The base URL of the server for request `i` (they alternate). */
  readonly base: (i: number) => string;
  readonly stepped: () => number;
  /** Rows of a query with `?` parameters, straight from the database. */
  readonly rows: <T>(sql: string, values: readonly unknown[]) => Promise<T[]>;
  /** A store of its own on the same database, which the test closes. */
  readonly openStore: () => Store;
}

/** The batch step's tests, for the servers `env` gives once they run. */
export function batchStepTests(env: BatchServers): void {
  const count = async (sql: string, values: readonly unknown[]) => Number((await env.rows<{ n: number | string }>(sql, values))[0]!.n);

  it("spends a tree's budget exactly under 240 concurrent authorizes on two servers, most decided by the batch step", async () => {
    const agent = await agentWithKey(env.base(0), "batch-racer");
    const parent = await grant(env.base(0), agent.id, {
      budget_amount_minor: 4_000,
      budget_currency: "EUR",
      delegation_policy: "attenuating",
    });
    const children: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const child = await post<Grant>(env.base(i), `/grants/${parent}/delegate`, ADMIN_KEY, { agent_id: agent.id });
      expect(child.status, JSON.stringify(child.body)).toBe(201);
      children.push(child.body.id);
    }
    const before = env.stepped();
    const replies = await Promise.all(
      Array.from({ length: 240 }, (_, i) =>
        postRetryingContention(
          env.base(i),
          "/authorize",
          agent.key,
          {
            grant_id: i % 4 === 3 ? parent : children[i % 4]!,
            tool: "payments.send",
            amount_minor: 100,
            currency: "EUR",
            attestation: ATTESTATION,
          },
          `batch-tree-${i}`,
        ),
      ),
    );
    for (const reply of replies) expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(replies.filter((r) => r.body.outcome === "allow")).toHaveLength(40);
    expect(replies.filter((r) => r.body.outcome === "exhausted")).toHaveLength(200);
    expect(await get(env.base(1), `/grants/${parent}`, ADMIN_KEY)).toMatchObject({ uses: 40, held_minor: 4_000, settled_minor: 0 });
    let childUses = 0;
    for (const id of children) childUses += (await get<Grant>(env.base(0), `/grants/${id}`, ADMIN_KEY)).uses;
    expect(childUses + replies.filter((r, i) => i % 4 === 3 && r.body.outcome === "allow").length).toBe(40);
    // Without the step every decision runs its own function; with it, most of a burst is stepped.
    expect(env.stepped() - before).toBeGreaterThan(120);
  });

  it("decides once per idempotency key sent to both servers at once, a replay in the same batch included", async () => {
    const agent = await agentWithKey(env.base(1), "batch-keys");
    const grantId = await grant(env.base(1), agent.id, { budget_amount_minor: 1_000_000, budget_currency: "EUR" });
    const body = JSON.stringify({ grant_id: grantId, tool: "payments.send", amount_minor: 100, currency: "EUR", attestation: ATTESTATION });
    // Keys with what an array literal quotes and escapes: the step sends its rows as arrays (decision 0320).
    const keys = Array.from({ length: 10 }, (_, k) => `batch,"payment"\\{${k}},NULL`);
    const before = env.stepped();
    expect(await sentSixTimesEach(env.base, agent.key, body, keys)).toEqual({ oneAnswerPerKey: true, distinct: keys.length });
    expect(await get(env.base(0), `/grants/${grantId}`, ADMIN_KEY)).toMatchObject({ uses: keys.length, held_minor: 100 * keys.length });
    expect(env.stepped() - before).toBeGreaterThan(0);
    // The same key with another body is refused, in a batch or not.
    const reused = await Promise.all(
      [0, 1].map((i) =>
        fetch(`${env.base(i)}/authorize`, {
          method: "POST",
          body: JSON.stringify({ ...JSON.parse(body), amount_minor: 101 }),
          headers: { authorization: `Bearer ${agent.key}`, "content-type": "application/json", "idempotency-key": keys[0]! },
        }),
      ),
    );
    expect(reused.map((r) => r.status)).toEqual([422, 422]);
  });

  it("authenticates a burst's keys in its batches: three agents decide, a revoked key is refused 401 and an admin key 403", async () => {
    const agents = await Promise.all([0, 1, 2].map((i) => agentWithKey(env.base(i), `batch-keyed-${i}`)));
    const grants = await Promise.all(agents.map((a) => grant(env.base(0), a.id, { budget_amount_minor: 2_000, budget_currency: "EUR" })));
    const revoked = await agentWithKey(env.base(0), "batch-keyed-revoked");
    const revokedGrant = await grant(env.base(0), revoked.id, { budget_amount_minor: 2_000, budget_currency: "EUR" });
    const keys = await get<{ keys: { id: string; agent_id: string | null }[] }>(env.base(0), "/keys?limit=1000", ADMIN_KEY);
    const revokedKeyId = keys.keys.find((k) => k.agent_id === revoked.id)!.id;
    expect((await post(env.base(1), `/keys/${revokedKeyId}/revoke`, ADMIN_KEY, { reason: "gone" })).status).toBe(200);
    const before = env.stepped();
    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, i) => {
        const who = i % 5;
        const [key, grantId] =
          who < 3 ? [agents[who]!.key, grants[who]!] : who === 3 ? [revoked.key, revokedGrant] : [ADMIN_KEY, grants[0]!];
        return post(env.base(i), "/authorize", key, {
          grant_id: grantId,
          tool: "payments.send",
          amount_minor: 100,
          currency: "EUR",
          attestation: ATTESTATION,
        });
      }),
    );
    expect(replies.map((r) => r.status)).toEqual(replies.map((_, i) => [200, 200, 200, 401, 403][i % 5]));
    for (const [who, grantId] of grants.entries()) {
      expect(replies.filter((r, i) => i % 5 === who && r.body.outcome === "allow")).toHaveLength(20);
      expect(await get(env.base(1), `/grants/${grantId}`, ADMIN_KEY)).toMatchObject({ uses: 20, held_minor: 2_000 });
    }
    expect(await get(env.base(1), `/grants/${revokedGrant}`, ADMIN_KEY)).toMatchObject({ uses: 0, held_minor: 0 });
    expect(env.stepped() - before).toBeGreaterThan(0);
  });

  it("seals gated decisions in a batch with one decision.gated event each, holding nothing", async () => {
    const agent = await agentWithKey(env.base(0), "batch-gated");
    const live = await grant(env.base(0), agent.id, { budget_amount_minor: 1_000_000, budget_currency: "EUR" });
    // Above the auto-approval ceiling a grant waits for a human, and a decision on it is gated.
    const pending = await grant(env.base(0), agent.id, { budget_amount_minor: 20_000_000, budget_currency: "EUR" });
    const store = env.openStore();
    try {
      const before = await store.countRows();
      const steppedBefore = env.stepped();
      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          postRetryingContention(
            env.base(i),
            "/authorize",
            agent.key,
            {
              grant_id: i % 2 === 0 ? pending : live,
              tool: "payments.send",
              amount_minor: 100,
              currency: "EUR",
              attestation: ATTESTATION,
            },
            `batch-gated-${i}`,
          ),
        ),
      );
      expect(replies.map((r) => r.body.outcome)).toEqual(replies.map((_, i) => (i % 2 === 0 ? "gated" : "allow")));
      const after = await store.countRows();
      expect(after["events"]! - before["events"]!).toBe(20);
      expect(after["ledger"]! - before["ledger"]!).toBe(40);
      expect(await get(env.base(1), `/grants/${live}`, ADMIN_KEY)).toMatchObject({ uses: 20, held_minor: 2_000 });
      expect(await get(env.base(1), `/grants/${pending}`, ADMIN_KEY)).toMatchObject({ uses: 0, held_minor: 0 });
      expect(env.stepped() - steppedBefore).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  });

  it("denies every decision of the next burst once a grant is revoked on the other server, and the ledger verifies", async () => {
    const agent = await agentWithKey(env.base(0), "batch-revoked");
    const grantId = await grant(env.base(0), agent.id, { budget_amount_minor: 1_000_000, budget_currency: "EUR" });
    const burst = (tag: string) =>
      Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          postRetryingContention(
            env.base(i),
            "/authorize",
            agent.key,
            {
              grant_id: grantId,
              tool: "payments.send",
              amount_minor: 100,
              currency: "EUR",
              attestation: ATTESTATION,
            },
            `${tag}-${i}`,
          ),
        ),
      );
    expect(new Set((await burst("batch-live")).map((r) => r.body.outcome))).toEqual(new Set(["allow"]));
    expect((await post(env.base(1), `/grants/${grantId}/revoke`, ADMIN_KEY, { reason: "done" })).status).toBe(200);
    const after = await burst("batch-dead");
    expect(after.map((r) => r.status)).toEqual(after.map(() => 200));
    expect(new Set(after.map((r) => r.body.outcome))).toEqual(new Set(["deny"]));
    expect(await get(env.base(0), `/grants/${grantId}`, ADMIN_KEY)).toMatchObject({ uses: 40 });
    const store = env.openStore();
    try {
      const result = await verifyLedger(store);
      expect(result, JSON.stringify(result.broken)).toMatchObject({ ok: true, broken: null });
    } finally {
      await store.close();
    }
  });

  it("decides an agent with breakers and a grant not held in the same step, in the same bursts", async () => {
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
    // Any of the ninety may be decided by the step with others of its batch (decision 1841).
    expect(env.stepped() - before).toBeGreaterThan(0);
    expect(env.stepped() - before).toBeLessThanOrEqual(90);
    // The thirty on a grant not held are sealed in the caller's own chain, one after another.
    const own = await count(`SELECT count(*) AS n FROM ledger WHERE tree_id = ? AND grant_id = ?`, [plain.id, watchedGrant]);
    expect(own).toBe(30);
    const seqs = await count(`SELECT max(seq) AS n FROM ledger WHERE tree_id = ?`, [plain.id]);
    expect(seqs).toBe(30);
    // A notify breaker whose window stays below its ceiling: evaluated after every decision, it never trips.
    expect((await get<{ trips: unknown[] }>(env.base(1), `/breakers/${breaker.body.id}`, ADMIN_KEY)).trips).toEqual([]);
    const signals = await count(`SELECT count(*) AS n FROM decision_signals WHERE agent_id = ?`, [watched.id]);
    expect(signals).toBe(30);
    // The windows a batch carried in memory and wrote once (decision 1943) are what a count afresh finds:
    // they end at the agent's last signal and hold its last twenty, signal by signal.
    const [stored] = await env.rows<{ state: string | Record<string, unknown> }>(`SELECT state FROM breaker_windows WHERE agent_id = ?`, [
      watched.id,
    ]);
    const state = (typeof stored!.state === "string" ? JSON.parse(stored!.state) : stored!.state) as {
      head: [number, number];
      windows: Record<string, { n: number; counts: number[] }>;
    };
    const last = await env.rows<{ at: number | string; seq: number | string; signal: number | string }>(
      `SELECT at, seq, signal FROM decision_signals WHERE agent_id = ? ORDER BY at DESC, seq DESC LIMIT 20`,
      [watched.id],
    );
    expect(state.head.map(Number)).toEqual([Number(last[0]!.at), Number(last[0]!.seq)]);
    const window = Object.values(state.windows);
    expect(window).toHaveLength(1);
    expect(window[0]!.n).toBe(20);
    const counted = window[0]!.counts.map(() => 0);
    for (const row of last) counted[Number(row.signal)]! += 1;
    expect(window[0]!.counts).toEqual(counted);
  });

  /**
   * An agent whose `revoke` breaker on `exhausted_rate` over a window of twenty (armed or observing)
   * sees a budget of forty payments spent: thirteen one at a time, then two bursts on both
   * servers, of 27 (the rest of the budget) and of 93. The window breaches at the eighth exhausted
   * decision (a 95% lower bound above 0.2), the second burst's eighth, usually in the middle of a
   * batch; that batch, when it trips a revocation, is decided again one at a time, so the first
   * burst shows the step at work. Answers both bursts' decisions in the tree's order, the
   * breaker's trips and the trip's place among the tree's records.
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
    const send = (from: number, n: number) =>
      Promise.all(
        Array.from({ length: n }, (_, i) => postRetryingContention(env.base(i), "/authorize", agent.key, payment, `${name}-${from + i}`)),
      );
    const before = env.stepped();
    const replies = await send(0, 27);
    expect(env.stepped() - before).toBeGreaterThan(0);
    replies.push(...(await send(27, 93)));
    for (const reply of replies) expect(reply.status, JSON.stringify(reply.body)).toBe(200);
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
