// A request whose transaction keeps failing with a real serialization failure (SQLSTATE 40001)
// past the server's retries answers 409 `contention` with `Retry-After`, on every POST endpoint,
// the authorize hot path (a group-commit transaction) and the Express routes (plain ones) alike:
// nothing was written, its idempotency key included, and the same request with the same key runs
// as new once the cause is gone (decision 0314). The failures are raised by PostgreSQL itself, from
// a trigger this test adds to its own schema.

import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTENTION_RETRY_AFTER_SECONDS } from "@agent-authority/api";
import { POSTGRES_LIMITS } from "@agent-authority/server";
import { ADMIN_KEY } from "./http-harness.js";
import { certifiedAgent, startDecisionServer, type DecisionServer, type Reply } from "./decisions-http.js";
import { APPROVER_IDENTITY, ATTESTATION, postCases, type Post } from "./post-cases.js";
import { pgProblem, PG_URL, postgresTarget } from "./targets.js";
import type { KeyCreated } from "@agent-authority/sdk";

/** Every table of the store that a request may write. */
const TABLES_OF =
  "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename NOT IN ('schema_migrations', 'contention_switch')";

describe("409 contention after exhausted retries on PostgreSQL", () => {
  if (pgProblem !== null) {
    it.skip(`skipped because PostgreSQL is unreachable at ${PG_URL}: ${pgProblem}`, () => undefined);
    return;
  }
  let s: DecisionServer;
  let sql: pg.Client;
  let agent: { id: string; key: string };
  let approverKey: string;
  let n = 0;
  const unique = (label: string) => `${label}-${(n += 1)}`;

  /** Raises 40001 on every row written to `tables` while the switch holds a row; counts its raises in a sequence (which no rollback undoes). */
  const force = async (tables: readonly string[]): Promise<void> => {
    await sql.query("INSERT INTO contention_switch VALUES (true)");
    for (const table of tables) {
      await sql.query(
        `CREATE TRIGGER forced_contention BEFORE INSERT OR UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION forced_contention()`,
      );
    }
  };
  const release = async (tables: readonly string[]): Promise<void> => {
    await sql.query("DELETE FROM contention_switch");
    for (const table of tables) await sql.query(`DROP TRIGGER IF EXISTS forced_contention ON ${table}`);
  };
  const raises = async (): Promise<number> =>
    Number((await sql.query("SELECT last_value, is_called FROM contention_raises")).rows.map((r) => (r.is_called ? r.last_value : 0))[0]);
  /** Sends the request while every write to `tables` raises 40001: its answer, and how many times the server tried. */
  const sendContended = async (tables: readonly string[], post: Post, key?: string): Promise<{ reply: Reply; raised: number }> => {
    const raisedBefore = await raises();
    await force(tables);
    try {
      const reply = await send(post, key);
      return { reply, raised: (await raises()) - raisedBefore };
    } finally {
      await release(tables);
    }
  };
  let allTables: string[];

  beforeAll(async () => {
    s = await startDecisionServer(postgresTarget);
    sql = new pg.Client({ connectionString: s.db.url, options: `-c search_path=${s.db.schema}` });
    await sql.connect();
    await sql.query(`
      CREATE TABLE contention_switch (on_ BOOLEAN NOT NULL);
      CREATE SEQUENCE contention_raises;
      CREATE FUNCTION forced_contention() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM contention_switch) THEN
          PERFORM nextval('contention_raises');
          RAISE EXCEPTION 'forced by the test' USING ERRCODE = '40001';
        END IF;
        RETURN COALESCE(NEW, OLD);
      END $$;
    `);
    allTables = (await sql.query(TABLES_OF)).rows.map((row) => String(row.tablename));
    agent = await certifiedAgent(s, "contention-agent");
    approverKey = (
      await s.call<KeyCreated>("POST", "/keys", ADMIN_KEY, { identity: APPROVER_IDENTITY, kind: "human", roles: ["approver"] })
    ).body.key;
  });
  afterAll(async () => {
    await sql?.end();
    await s?.close();
  });

  const send = (post: Post, key?: string): Promise<Reply> =>
    s.call("POST", post.path, post.key, post.body, key === undefined ? {} : { "idempotency-key": key });
  const post = async (key: string, path: string, body: unknown, status: number): Promise<Record<string, unknown>> => {
    const reply = await s.call("POST", path, key, body);
    expect(reply.status, reply.text).toBe(status);
    return reply.body;
  };
  const CASES: Record<string, () => Promise<Post>> = {
    ...postCases({ post, agent: () => agent, approverKey: () => approverKey, unique }),
    "POST /v1/keys": async (): Promise<Post> => ({
      key: ADMIN_KEY,
      path: "/keys",
      body: { identity: unique("key"), kind: "service", roles: ["auditor"] },
    }),
  };

  const expectContention = (reply: Reply): void => {
    expect(reply.status, reply.text).toBe(409);
    expect(reply.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(reply.headers.get("retry-after")).toBe(String(CONTENTION_RETRY_AFTER_SECONDS));
    expect(reply.headers.get("idempotent-replayed")).toBeNull();
    expect(reply.body).toMatchObject({ type: "urn:agent-authority:problem:contention", status: 409, code: "contention" });
    expect(reply.body.detail).toMatch(/nothing was written/);
    expect(reply.body.detail).toMatch(/same `Idempotency-Key` that is safe/);
  };

  for (const [name, prepare] of Object.entries(CASES)) {
    it(`${name}: 409 contention, nothing written, the key not kept; the same request and key then succeed`, async () => {
      const request = await prepare();
      const key = unique("contended");
      const before = await s.db.store.countRows();
      const { reply: contended, raised } = await sendContended(allTables, request, key);
      expectContention(contended);
      // Tried again inside the server, and given up within its bounds.
      expect(raised).toBeGreaterThan(1);
      expect(await s.db.store.countRows()).toEqual(before);

      const retried = await send(request, key);
      expect(retried.status, retried.text).toBeLessThan(300);
      expect(retried.headers.get("idempotent-replayed")).toBeNull();
      expect((await s.db.store.countRows())["idempotency_keys"]).toBe(before["idempotency_keys"]! + 1);
      const replayed = await send(request, key);
      expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    });
  }

  it("authorize: the decision's group transaction is tried transactionAttempts times, then 409; no record, hold or key is left", async () => {
    const grant = await post(
      ADMIN_KEY,
      "/grants",
      {
        agent_id: agent.id,
        principal_type: "human",
        principal_id: "alice@example.com",
        scope: { tool: ["payments.*"] },
        budget_amount_minor: 1_000,
        budget_currency: "EUR",
      },
      201,
    );
    const request: Post = {
      key: agent.key,
      path: "/authorize",
      body: { grant_id: grant.id, tool: "payments.send", amount_minor: 400, currency: "EUR", attestation: ATTESTATION },
    };
    const ledgerOnly = ["ledger"];
    const count = async (table: string, where = "TRUE", params: unknown[] = []) =>
      Number((await sql.query(`SELECT COUNT(*)::int AS n FROM ${table} WHERE ${where}`, params)).rows[0].n);
    for (const key of [undefined, "decision-contended"]) {
      const { reply: contended, raised } = await sendContended(ledgerOnly, request, key);
      expectContention(contended);
      // Each try reached the sealed record (the decision's last writes) and was rolled back; the
      // tries stop at the limit, or earlier at transactionRetryMs on a slow machine.
      expect(raised).toBeGreaterThan(1);
      expect(raised).toBeLessThanOrEqual(POSTGRES_LIMITS.transactionAttempts);
      expect(await count("ledger", "grant_id = $1", [grant.id])).toBe(0);
      expect(await count("charges", "grant_id = $1", [grant.id])).toBe(0);
      expect(await count("idempotency_keys", "idempotency_key = 'decision-contended'")).toBe(0);
    }
    const decided = await send(request, "decision-contended");
    expect(decided.status, decided.text).toBe(200);
    expect(decided.body).toMatchObject({ outcome: "allow" });
    expect(decided.headers.get("idempotent-replayed")).toBeNull();
    expect(await count("ledger", "grant_id = $1", [grant.id])).toBe(1);
    expect(await count("charges", "grant_id = $1", [grant.id])).toBe(1);
    expect(await count("idempotency_keys", "idempotency_key = 'decision-contended'")).toBe(1);
  });

  it("a route without an Idempotency-Key: its plain transaction is tried transactionAttempts times, then 409, nothing written", async () => {
    const request = await CASES["POST /v1/grants"]!();
    const before = await s.db.store.countRows();
    const { reply: contended, raised } = await sendContended(["grants"], request);
    expectContention(contended);
    expect(raised).toBeGreaterThan(1);
    expect(raised).toBeLessThanOrEqual(POSTGRES_LIMITS.transactionAttempts);
    expect(await s.db.store.countRows()).toEqual(before);
    expect((await send(request)).status).toBe(201);
  });
});
