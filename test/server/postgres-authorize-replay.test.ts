// Authorize's replay after both of its tries found the idempotency key taken: the answer is read
// through the one replay path of the Express routes (replayStored), with its check that a key taken
// is a key answered. The race is made real on PostgreSQL: a trigger of the test's own schema finds
// the key taken on the first try, and on the second commits another process's row for the key
// (through dblink, a connection of its own) just before the decision's own insert meets it.

import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, certifiedAgentId, startTestServer, type LogLine, type TestServer } from "./http-harness.js";
import { ATTESTATION } from "./post-cases.js";
import { pgProblem, PG_URL, postgresTarget } from "./targets.js";

/** Why dblink cannot be used here, or null when it can. */
async function dblinkProblem(): Promise<string | null> {
  const client = new pg.Client({ connectionString: PG_URL });
  try {
    await client.connect();
    const found = await client.query("SELECT 1 FROM pg_available_extensions WHERE name = 'dblink'");
    return found.rowCount === 0 ? "the dblink extension is not installed" : null;
  } catch (error) {
    return String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const problem = pgProblem ?? (await dblinkProblem());

describe("authorize: the replay after two lost races for its idempotency key", () => {
  if (problem !== null) {
    it.skip(`skipped because PostgreSQL with dblink is not available at ${PG_URL}: ${problem}`, () => undefined);
    return;
  }
  const logs: LogLine[] = [];
  let t: TestServer;
  let sql: pg.Client;
  let agentKey: string;
  let grantId: string;

  beforeAll(async () => {
    t = await startTestServer(postgresTarget, {}, logs);
    const schema = t.db.schema!;
    sql = new pg.Client({ connectionString: t.db.url, options: `-c search_path=${schema}` });
    await sql.connect();
    await sql.query(`CREATE EXTENSION IF NOT EXISTS dblink WITH SCHEMA ${schema}`);
    const extension = (
      await sql.query("SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'dblink'")
    ).rows[0].nspname as string;
    const racer = `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}application_name=racer`;
    await sql.query(`
      CREATE SEQUENCE raced_tries;
      CREATE TABLE raced_answer (status INTEGER NOT NULL, response TEXT NOT NULL);
      CREATE FUNCTION raced_key() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        answer_status INTEGER;
        answer_response TEXT;
      BEGIN
        IF NEW.idempotency_key NOT LIKE 'raced-%' OR current_setting('application_name') = 'racer' THEN RETURN NEW; END IF;
        -- First try: the key is found taken (its row gone again before the next read).
        IF nextval('${schema}.raced_tries') % 2 = 1 THEN RETURN NULL; END IF;
        -- Second try: another process commits its answer for the key just before this insert.
        SELECT status, response INTO answer_status, answer_response FROM ${schema}.raced_answer;
        PERFORM ${extension}.dblink_exec(${pg.escapeLiteral(racer)}, format(
          'INSERT INTO %I.idempotency_keys (caller_key_id, idempotency_key, method, path, request_hash, status, response, created_at) VALUES (%L, %L, %L, %L, %L, %s, %L, %s)',
          ${pg.escapeLiteral(schema)}, NEW.caller_key_id, NEW.idempotency_key, NEW.method, NEW.path, NEW.request_hash, answer_status, answer_response, NEW.created_at));
        RETURN NEW;
      END $$;
      CREATE TRIGGER raced_key BEFORE INSERT ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION raced_key();
    `);
    const agentId = await certifiedAgentId(t, "raced-agent");
    agentKey = await t.key("raced-agent-key", ["agent"], { kind: "service", agent_id: agentId });
    grantId = (
      await t.call("POST", "/grants", {
        key: ADMIN_KEY,
        body: {
          agent_id: agentId,
          principal_type: "human",
          principal_id: "alice@example.com",
          scope: { tool: ["payments.*"] },
          budget_amount_minor: 10_000,
          budget_currency: "EUR",
        },
      })
    ).body.id;
  });
  afterAll(async () => {
    await sql?.end();
    await t?.close();
  });

  const decide = (key: string) =>
    fetch(`${t.baseUrl}/authorize`, {
      method: "POST",
      headers: { authorization: `Bearer ${agentKey}`, "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify({ grant_id: grantId, tool: "payments.send", amount_minor: 100, currency: "EUR", attestation: ATTESTATION }),
    });
  const count = async (table: string, where: string, params: unknown[]) =>
    Number((await sql.query(`SELECT COUNT(*)::int AS n FROM ${table} WHERE ${where}`, params)).rows[0].n);

  it("replays the answer the other process committed with the key, and decides nothing itself", async () => {
    const stored = '{"outcome":"allow","ledger_id":"led_of_the_other_process"}';
    await sql.query("DELETE FROM raced_answer");
    await sql.query("INSERT INTO raced_answer VALUES (200, $1)", [`application/json; charset=utf-8\n${stored}`]);
    const reply = await decide("raced-answered");
    expect(reply.status).toBe(200);
    expect(reply.headers.get("idempotent-replayed")).toBe("true");
    expect(await reply.text()).toBe(stored);
    expect(await count("ledger", "grant_id = $1", [grantId])).toBe(0);
    expect(await count("charges", "grant_id = $1", [grantId])).toBe(0);
  });

  it("refuses to replay a key taken without an answer (INVARIANT claims-commit-answered): 500, logged, nothing decided", async () => {
    // A claim committed without its answer cannot happen (a claim commits only with it); if it
    // ever did, its status 0 must never be sent as an answer.
    await sql.query("DELETE FROM raced_answer");
    await sql.query("INSERT INTO raced_answer VALUES (0, '')");
    const reply = await decide("raced-unanswered");
    expect(reply.status).toBe(500);
    expect(await reply.json()).toMatchObject({ code: "internal_error" });
    const logged = logs.filter((line) => line.msg === "internal error").map((line) => String(line.fields["error"]));
    expect(
      logged.some((error) => error.includes("idempotency key taken but no answer found")),
      logged.join("\n"),
    ).toBe(true);
    expect(await count("ledger", "grant_id = $1", [grantId])).toBe(0);
    // The server answers the next request as before.
    const next = await decide("after-the-race");
    expect(next.status).toBe(200);
  });
});
