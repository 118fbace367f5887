// A batch of decisions in three steps on PostgreSQL (decision 0318): two servers on one schema,
// each deciding its batches with one read and one write per kind of row. Budgets stay exact, a
// key decides once, gated decisions write their events, the sealed chains verify, a revoked
// grant denies the next batch, and an agent's breakers are evaluated after each of its decisions
// and trip once (decision 0321, decision-batch-breakers.ts), while what the batch step leaves (a
// grant not held) is decided by its own transaction in the same batch. Each test also proves that
// the batch step decided requests.

import type { Grant } from "@agent-authority/sdk";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ENGINE_PROFILES,
  loadConfig,
  openStore,
  PostgresDriver,
  SqlStore,
  startServer,
  verifyLedger,
  type AuthorityServer,
} from "@agent-authority/server";
import { ADMIN_KEY } from "./http-harness.js";
import { agentWithKey, ATTESTATION, get, grant, post, postRetryingContention } from "./server-processes.js";
import { pgProblem, PG_URL, postgresTarget } from "./targets.js";
import { batchBreakerTests } from "./decision-batch-breakers.js";

describe("a batch of decisions read, decided and written once per kind of row on PostgreSQL", () => {
  if (pgProblem !== null) {
    it.skip(`skipped because PostgreSQL is unreachable at ${PG_URL}: ${pgProblem}`, () => undefined);
    return;
  }
  let db: Awaited<ReturnType<typeof postgresTarget.create>>;
  const drivers: PostgresDriver[] = [];
  const servers: AuthorityServer[] = [];
  const base = (i: number) => servers[i % servers.length]!.baseUrl;
  const stepped = () => drivers.reduce((sum, driver) => sum + driver.stepped, 0);

  beforeAll(async () => {
    db = await postgresTarget.create();
    for (let i = 0; i < 2; i += 1) {
      const driver = new PostgresDriver(db.url, { schema: db.schema! });
      drivers.push(driver);
      const config = loadConfig({
        AUTHORITY_DATABASE_URL: PG_URL,
        AUTHORITY_DATABASE_SCHEMA: db.schema!,
        AUTHORITY_PORT: "0",
        AUTHORITY_LOG_LEVEL: "silent",
        AUTHORITY_ENVIRONMENT: "test-env",
        AUTHORITY_ADMIN_KEY: ADMIN_KEY,
        AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "10000000",
      });
      servers.push(await startServer(config, { store: new SqlStore(driver, db.schema, ENGINE_PROFILES.postgresql), ownsStore: true }));
    }
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await db?.dispose();
  });

  /** Rows read straight from the test's schema; `?` parameters. */
  async function rows<T>(sql: string, values: readonly unknown[]): Promise<T[]> {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await client.query(`SET search_path TO "${db.schema!}"`);
      let n = 0;
      return (
        await client.query(
          sql.replace(/\?/g, () => `$${++n}`),
          [...values],
        )
      ).rows as T[];
    } finally {
      await client.end();
    }
  }

  batchBreakerTests({ base, stepped, rows });

  it("spends a tree's budget exactly under 240 concurrent authorizes on two servers, most decided by the batch step", async () => {
    const agent = await agentWithKey(base(0), "batch-racer");
    const parent = await grant(base(0), agent.id, { budget_amount_minor: 4_000, budget_currency: "EUR", delegation_policy: "attenuating" });
    const children: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const child = await post<Grant>(base(i), `/grants/${parent}/delegate`, ADMIN_KEY, { agent_id: agent.id });
      expect(child.status, JSON.stringify(child.body)).toBe(201);
      children.push(child.body.id);
    }
    const before = stepped();
    const replies = await Promise.all(
      Array.from({ length: 240 }, (_, i) =>
        postRetryingContention(
          base(i),
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
    expect(await get(base(1), `/grants/${parent}`, ADMIN_KEY)).toMatchObject({ uses: 40, held_minor: 4_000, settled_minor: 0 });
    let childUses = 0;
    for (const id of children) childUses += (await get<Grant>(base(0), `/grants/${id}`, ADMIN_KEY)).uses;
    expect(childUses + replies.filter((r, i) => i % 4 === 3 && r.body.outcome === "allow").length).toBe(40);
    // Without the step every decision runs its own function; with it, most of a burst is stepped.
    expect(stepped() - before).toBeGreaterThan(120);
  });

  it("decides once per idempotency key sent to both servers at once, a replay in the same batch included", async () => {
    const agent = await agentWithKey(base(1), "batch-keys");
    const grantId = await grant(base(1), agent.id, { budget_amount_minor: 1_000_000, budget_currency: "EUR" });
    const body = JSON.stringify({ grant_id: grantId, tool: "payments.send", amount_minor: 100, currency: "EUR", attestation: ATTESTATION });
    // Keys with what an array literal quotes and escapes: the step sends its rows as arrays (decision 0320).
    const keys = Array.from({ length: 10 }, (_, k) => `batch,"payment"\\{${k}},NULL`);
    const before = stepped();
    const texts = await Promise.all(
      keys.flatMap((key) =>
        Array.from({ length: 6 }, async (_, i) => {
          const response = await fetch(`${base(i)}/authorize`, {
            method: "POST",
            body,
            headers: { authorization: `Bearer ${agent.key}`, "content-type": "application/json", "idempotency-key": key },
          });
          expect(response.status).toBe(200);
          return { key, text: await response.text() };
        }),
      ),
    );
    for (const key of keys) expect(new Set(texts.filter((t) => t.key === key).map((t) => t.text)).size).toBe(1);
    expect(new Set(texts.map((t) => t.text)).size).toBe(keys.length);
    expect(await get(base(0), `/grants/${grantId}`, ADMIN_KEY)).toMatchObject({ uses: keys.length, held_minor: 100 * keys.length });
    expect(stepped() - before).toBeGreaterThan(0);
    // The same key with another body is refused, in a batch or not.
    const reused = await fetch(`${base(0)}/authorize`, {
      method: "POST",
      body: JSON.stringify({ ...JSON.parse(body), amount_minor: 101 }),
      headers: { authorization: `Bearer ${agent.key}`, "content-type": "application/json", "idempotency-key": keys[0]! },
    });
    expect(reused.status).toBe(422);
  });

  it("authenticates a burst's keys in its batches: three agents decide, a revoked key is refused 401 and an admin key 403", async () => {
    const agents = await Promise.all([0, 1, 2].map((i) => agentWithKey(base(i), `batch-keyed-${i}`)));
    const grants = await Promise.all(agents.map((a) => grant(base(0), a.id, { budget_amount_minor: 2_000, budget_currency: "EUR" })));
    const revoked = await agentWithKey(base(0), "batch-keyed-revoked");
    const revokedGrant = await grant(base(0), revoked.id, { budget_amount_minor: 2_000, budget_currency: "EUR" });
    const keys = await get<{ keys: { id: string; agent_id: string | null }[] }>(base(0), "/keys?limit=1000", ADMIN_KEY);
    const revokedKeyId = keys.keys.find((k) => k.agent_id === revoked.id)!.id;
    expect((await post(base(1), `/keys/${revokedKeyId}/revoke`, ADMIN_KEY, { reason: "gone" })).status).toBe(200);
    const before = stepped();
    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, i) => {
        const who = i % 5;
        const [key, grantId] =
          who < 3 ? [agents[who]!.key, grants[who]!] : who === 3 ? [revoked.key, revokedGrant] : [ADMIN_KEY, grants[0]!];
        return post(base(i), "/authorize", key, {
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
      expect(await get(base(1), `/grants/${grantId}`, ADMIN_KEY)).toMatchObject({ uses: 20, held_minor: 2_000 });
    }
    expect(await get(base(1), `/grants/${revokedGrant}`, ADMIN_KEY)).toMatchObject({ uses: 0, held_minor: 0 });
    expect(stepped() - before).toBeGreaterThan(0);
  });

  it("seals gated decisions in a batch with one decision.gated event each, holding nothing", async () => {
    const agent = await agentWithKey(base(0), "batch-gated");
    const live = await grant(base(0), agent.id, { budget_amount_minor: 1_000_000, budget_currency: "EUR" });
    // Above the auto-approval ceiling a grant waits for a human, and a decision on it is gated.
    const pending = await grant(base(0), agent.id, { budget_amount_minor: 20_000_000, budget_currency: "EUR" });
    const store = openStore(db.url, { schema: db.schema! });
    try {
      const before = await store.countRows();
      const steppedBefore = stepped();
      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          postRetryingContention(
            base(i),
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
      expect(await get(base(1), `/grants/${live}`, ADMIN_KEY)).toMatchObject({ uses: 20, held_minor: 2_000 });
      expect(await get(base(1), `/grants/${pending}`, ADMIN_KEY)).toMatchObject({ uses: 0, held_minor: 0 });
      expect(stepped() - steppedBefore).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  });

  it("denies every decision of the next burst once a grant is revoked on the other server, and the ledger verifies", async () => {
    const agent = await agentWithKey(base(0), "batch-revoked");
    const grantId = await grant(base(0), agent.id, { budget_amount_minor: 1_000_000, budget_currency: "EUR" });
    const burst = (tag: string) =>
      Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          postRetryingContention(
            base(i),
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
    expect((await post(base(1), `/grants/${grantId}/revoke`, ADMIN_KEY, { reason: "done" })).status).toBe(200);
    const after = await burst("batch-dead");
    expect(after.map((r) => r.status)).toEqual(after.map(() => 200));
    expect(new Set(after.map((r) => r.body.outcome))).toEqual(new Set(["deny"]));
    expect(await get(base(0), `/grants/${grantId}`, ADMIN_KEY)).toMatchObject({ uses: 40 });
    const store = openStore(db.url, { schema: db.schema! });
    try {
      const result = await verifyLedger(store);
      expect(result, JSON.stringify(result.broken)).toMatchObject({ ok: true, broken: null });
    } finally {
      await store.close();
    }
  });
});
