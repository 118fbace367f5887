// Two replicas whose clocks disagree feed one agent's breaker on PostgreSQL. A decision sealed on
// the replica whose clock is behind must still see every decision sealed before it; otherwise its
// window, counted up to its own earlier time, leaves `breached` and the next decision trips the
// breaker a second time (INVARIANT signals-in-order, decision 0312).

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type AuthorityServer } from "@agent-authority/server";
import { ADMIN_KEY, ENVIRONMENT, TEST_SERVER_KEY } from "./http-harness.js";
import { agentWithKey, ATTESTATION, get, grant, post } from "./server-processes.js";
import { pgProblem, PG_URL, postgresTarget } from "./targets.js";

const T0 = Date.parse("2026-03-01T12:00:00Z");

describe("a breaker fed by two replicas whose clocks disagree", () => {
  if (pgProblem !== null) {
    it.skip(`skipped because PostgreSQL is unreachable at ${PG_URL}: ${pgProblem}`, () => undefined);
    return;
  }
  let db: Awaited<ReturnType<typeof postgresTarget.create>>;
  const clocks = { behind: T0, ahead: T0 + 600_000 };
  const servers: AuthorityServer[] = [];
  beforeAll(async () => {
    db = await postgresTarget.create();
    for (const which of ["behind", "ahead"] as const) {
      servers.push(
        await startServer(
          {
            host: "127.0.0.1",
            port: 0,
            dataDir: "unused",
            databaseUrl: db.url,
            databaseSchema: db.schema,
            environment: ENVIRONMENT,
            adminKey: ADMIN_KEY,
            autoApprovalCeilingMinor: 1_000_000,
            logLevel: "silent",
            serverKey: TEST_SERVER_KEY,
          },
          { now: () => (clocks[which] += 1_000) },
        ),
      );
    }
  });
  afterAll(async () => {
    for (const server of servers) await server.close();
    await db?.dispose();
  });

  it("trips once", async () => {
    const [behind, ahead] = servers.map((s) => s.baseUrl) as [string, string];
    const agent = await agentWithKey(behind, "skewed");
    const grantId = await grant(behind, agent.id, { budget_count: 1_000 });
    const contract = await post(behind, `/agents/${agent.id}/contracts`, ADMIN_KEY, {
      metric: "out_of_scope_rate",
      ceiling: 0.1,
      window_decisions: 20,
    });
    const breaker = await post(behind, `/agents/${agent.id}/breakers`, ADMIN_KEY, { contract_id: contract.body.id, action: "notify" });
    expect(breaker.status, JSON.stringify(breaker.body)).toBe(201);
    const decide = async (base: string, inScope: boolean): Promise<void> => {
      const reply = await post(base, "/authorize", agent.key, {
        grant_id: grantId,
        tool: inScope ? "payments.send" : "mail.send",
        attestation: ATTESTATION,
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    };
    // Sealed by the replica whose clock is ahead: a clear breach, one trip.
    for (let i = 0; i < 10; i += 1) await decide(ahead, true);
    for (let i = 0; i < 6; i += 1) await decide(ahead, false);
    expect((await get(ahead, `/breakers/${breaker.body.id}`, ADMIN_KEY)).trips).toHaveLength(1);
    // Then an allowed decision on the replica whose clock is behind (counted up to its own time
    // alone, its window holds no breach), and one more breach on the first.
    await decide(behind, true);
    await decide(ahead, false);
    expect((await get(behind, `/breakers/${breaker.body.id}`, ADMIN_KEY)).trips).toHaveLength(1);
  });
});
