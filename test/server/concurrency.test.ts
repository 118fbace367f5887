// HEAVY (about ten seconds per database): the concurrency proof. Two server processes on one
// database take 200 concurrent authorizes against a count budget of 50 and an amount budget:
// exactly 50 allows each, nothing overspent; children of one parent racing never spend more than
// the parent. Run on one SQLite file and on one PostgreSQL database.

import { openStore, verifyLedger } from "@agent-authority/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY } from "./http-harness.js";
import {
  agentWithKey,
  ATTESTATION,
  get,
  grant,
  post,
  SERVER_BUILT,
  startServerProcess,
  type ServerProcess,
  type SharedDatabase,
} from "./server-processes.js";
import { forEachStore, type StoreTarget } from "./targets.js";
import type { Grant } from "@agent-authority/sdk";

function concurrencySuite(target: StoreTarget): void {
  let db: SharedDatabase & { dispose(): Promise<void> };
  let servers: ServerProcess[] = [];
  beforeAll(async () => {
    db = await target.create();
    // Migrated once up front; the processes then start on a current schema.
    const store = openStore(db.url, db.schema === undefined ? {} : { schema: db.schema });
    await store.migrate(Date.now());
    await store.close();
    servers = await Promise.all([startServerProcess(db), startServerProcess(db)]);
  });
  afterAll(async () => {
    for (const server of servers) {
      server.child.kill("SIGKILL");
      await server.exited;
    }
    await db?.dispose();
  });

  /** `n` authorizes at once, alternating between the processes; answers the outcomes. */
  async function race(key: string, bodies: readonly Record<string, unknown>[]): Promise<string[]> {
    const replies = await Promise.all(bodies.map((body, i) => post(servers[i % servers.length]!.baseUrl, "/authorize", key, body)));
    for (const reply of replies) expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return replies.map((reply) => reply.body.outcome as string);
  }

  it("200 concurrent authorizes on two processes: exactly 50 allows against a count and an amount budget", async () => {
    const base = servers[0]!.baseUrl;
    const agent = await agentWithKey(base, "racer");
    const byCount = await grant(base, agent.id, { budget_count: 50, budget_amount_minor: 1_000_000, budget_currency: "EUR" });
    const byAmount = await grant(base, agent.id, { budget_amount_minor: 5_000, budget_currency: "EUR" });
    const request = (grantId: string) => ({
      grant_id: grantId,
      tool: "payments.send",
      amount_minor: 100,
      currency: "EUR",
      attestation: ATTESTATION,
    });
    // 200 on each grant, all 400 in flight at once, alternating between the two processes.
    const bodies = Array.from({ length: 400 }, (_, i) => request(i % 2 === 0 ? byCount : byAmount));
    const outcomes = await race(agent.key, bodies);
    const total = (grantId: string, outcome: string) => outcomes.filter((o, i) => o === outcome && bodies[i]!.grant_id === grantId).length;
    expect(total(byCount, "allow")).toBe(50);
    expect(total(byCount, "exhausted")).toBe(150);
    expect(total(byAmount, "allow")).toBe(50);
    expect(total(byAmount, "exhausted")).toBe(150);
    const countGrant = await get(base, `/grants/${byCount}`, ADMIN_KEY);
    const amountGrant = await get(base, `/grants/${byAmount}`, ADMIN_KEY);
    expect(countGrant).toMatchObject({ uses: 50, held_minor: 5_000 });
    expect(amountGrant).toMatchObject({ uses: 50, held_minor: 5_000 });
  });

  it("children of one parent racing on two processes never spend more than the parent", async () => {
    const base = servers[0]!.baseUrl;
    const agent = await agentWithKey(base, "family");
    const parent = await grant(base, agent.id, { budget_amount_minor: 3_000, budget_currency: "EUR", delegation_policy: "attenuating" });
    const children: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const child = await post<Grant>(base, `/grants/${parent}/delegate`, ADMIN_KEY, { agent_id: agent.id });
      expect(child.status, JSON.stringify(child.body)).toBe(201);
      children.push(child.body.id);
    }
    const bodies = Array.from({ length: 150 }, (_, i) => ({
      grant_id: children[i % 3]!,
      tool: "payments.send",
      amount_minor: 100,
      currency: "EUR",
      attestation: ATTESTATION,
    }));
    const outcomes = await race(agent.key, bodies);
    expect(outcomes.filter((o) => o === "allow")).toHaveLength(30);
    const root = await get<Grant>(base, `/grants/${parent}`, ADMIN_KEY);
    expect(root.held_minor + root.settled_minor).toBe(3_000);
    let childSpend = 0;
    for (const id of children) childSpend += (await get<Grant>(base, `/grants/${id}`, ADMIN_KEY)).held_minor;
    expect(childSpend).toBe(3_000);
  });

  it("one Idempotency-Key sent to both processes at once decides once", async () => {
    const base = servers[0]!.baseUrl;
    const agent = await agentWithKey(base, "retrier");
    const grantId = await grant(base, agent.id, { budget_amount_minor: 1_000_000, budget_currency: "EUR" });
    const body = JSON.stringify({ grant_id: grantId, tool: "payments.send", amount_minor: 100, currency: "EUR", attestation: ATTESTATION });
    const texts = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const response = await fetch(`${servers[i % 2]!.baseUrl}/authorize`, {
          method: "POST",
          body,
          headers: { authorization: `Bearer ${agent.key}`, "content-type": "application/json", "idempotency-key": "one-payment" },
        });
        expect(response.status).toBe(200);
        return response.text();
      }),
    );
    expect(new Set(texts).size).toBe(1);
    expect(await get(base, `/grants/${grantId}`, ADMIN_KEY)).toMatchObject({ uses: 1, held_minor: 100 });
  });

  it("every chain written by both processes verifies", async () => {
    const store = openStore(db.url, db.schema === undefined ? {} : { schema: db.schema });
    try {
      const result = await verifyLedger(store);
      expect(result, JSON.stringify(result.broken)).toMatchObject({ ok: true, broken: null });
      expect(result.records).toBeGreaterThanOrEqual(550);
    } finally {
      await store.close();
    }
  });
}

describe.skipIf(!SERVER_BUILT)("concurrency proof (heavy)", () => {
  forEachStore("two server processes on one database", concurrencySuite);
});
