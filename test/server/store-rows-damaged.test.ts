// A row edited by hand into what the schema forbids is refused by its table's decoder with a
// StoreRowError naming the table and column, never handed on as a wrong value; over HTTP the
// request answers a problem without internals and the server goes on serving (decision 0350).

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BreakerRow, ContractRow, GrantRecord, KeyRecord } from "@agent-authority/server";
import { StoreRowError } from "../../server/src/store/sql/index.js";
import { ADMIN_KEY, startTestServer, type LogLine, type TestServer } from "./http-harness.js";
import { grantRecord, recordId, T0 } from "./store-records.js";
import { forEachStore, openTestStore, sqliteTarget, type StoreTarget, type TestStore } from "./targets.js";

const nextId = recordId;
const grant = (agentId: string): GrantRecord => grantRecord(agentId);

/** Reading `read()` fails with the decoder's error for `table`.`column`. */
async function refused(read: () => Promise<unknown>, table: string, column: string): Promise<void> {
  const error = await read().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoreRowError);
  expect(error).toMatchObject({ table, column });
}

function damagedRows(target: StoreTarget): void {
  let db: TestStore;
  let agentId: string;
  beforeAll(async () => {
    db = await openTestStore(target, T0);
    agentId = (
      await db.store.createAgentIfAbsent({ id: nextId("agt"), name: "damaged", description: null, created_at: T0, created_by: "admin" })
    ).agent.id;
  });
  afterAll(async () => {
    await db?.close();
  });

  it("a grant whose JSON no longer parses, or no longer has its shape, is refused", async () => {
    const broken = grant(agentId);
    await db.store.insertGrant(broken);
    await db.raw("UPDATE grants SET scope = ? WHERE id = ?", ['{"tool": ["payments.*"', broken.id]);
    await refused(() => db.store.getGrant(broken.id), "grants", "scope");
    await db.raw("UPDATE grants SET scope = ? WHERE id = ?", ['{"tool": "payments.*"}', broken.id]);
    await refused(() => db.store.getGrant(broken.id), "grants", "scope");
    // The chain the decision path reads is refused the same way.
    await refused(() => db.store.grantChain(broken.id), "grants", "scope");
    await db.raw("UPDATE grants SET scope = ?, conditions = ? WHERE id = ?", ['{"tool": []}', '{"clean_context": "no"}', broken.id]);
    await refused(() => db.store.getGrant(broken.id), "grants", "conditions");
  });

  it("a flag other than 0 or 1 is refused, not read as false", async () => {
    const broken = grant(agentId);
    await db.store.insertGrant(broken);
    await db.raw("UPDATE grants SET approval_required = 2 WHERE id = ?", [broken.id]);
    await refused(() => db.store.getGrant(broken.id), "grants", "approval_required");

    const breakers = db.store.breakerPath();
    const contract: ContractRow = {
      id: nextId("ctr"),
      agent_id: agentId,
      metric: "deny_rate",
      ceiling: 0.5,
      window_decisions: 10,
      window_hours: null,
      description: null,
      declared_by: "ops",
      declared_by_email: null,
      declared_at: T0,
    };
    const breaker: BreakerRow = {
      id: nextId("brk"),
      agent_id: agentId,
      contract_id: contract.id,
      action: "notify",
      mode: "observe",
      breached: false,
      created_at: T0,
      created_by: "ops",
      armed_at: null,
      armed_by: null,
      basis: null,
      expecting_trips: null,
    };
    await breakers.insertContract(contract);
    await breakers.insertBreaker(breaker);
    await db.raw("UPDATE breakers SET breached = 7 WHERE id = ?", [breaker.id]);
    await refused(() => breakers.getBreaker(breaker.id), "breakers", "breached");
  });

  it("a role outside the known roles is refused: a key never gains a word by a hand edit", async () => {
    const key: KeyRecord = {
      id: nextId("key"),
      hash: `hash-${recordId("h")}`,
      identity: "ops@example.com",
      kind: "human",
      roles: ["auditor"],
      agent_id: null,
      agent_ids: null,
      email: null,
      created_at: T0,
      created_by: "admin",
      revoked_at: null,
      revoked_by: null,
      revocation_reason: null,
    };
    await db.store.insertKey(key);
    await db.raw("UPDATE api_keys SET roles = ? WHERE id = ?", ['["auditor", "root"]', key.id]);
    await refused(() => db.store.getKey(key.id), "api_keys", "roles");
    await refused(() => db.store.findKeyByHash(key.hash), "api_keys", "roles");
  });

  if (target.name === "sqlite") {
    it("text in an integer column (SQLite keeps it) is refused, not read as NaN", async () => {
      const broken = grant(agentId);
      await db.store.insertGrant(broken);
      await db.raw("UPDATE grants SET depth = 'deep' WHERE id = ?", [broken.id]);
      const error = await db.store.getGrant(broken.id).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StoreRowError);
      expect(String(error)).toBe(
        'StoreRowError: the database returned a row of `grants` whose column `depth` is not a safe integer: `"deep"`',
      );
      // A real where an integer belongs is refused too: 2.5 uses are not a count.
      await db.raw("UPDATE grants SET depth = 0, issued_at = 2.5 WHERE id = ?", [broken.id]);
      await refused(() => db.store.getGrant(broken.id), "grants", "issued_at");
    });
  }
}

forEachStore("damaged rows", damagedRows);

describe("a damaged row over HTTP [sqlite]", () => {
  let t: TestServer;
  const logs: LogLine[] = [];
  beforeAll(async () => {
    t = await startTestServer(sqliteTarget, {}, logs);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("answers a problem without internals for that row alone, and the server goes on serving", async () => {
    const damaged = await t.call("POST", "/agents", { key: ADMIN_KEY, body: { name: "damaged-agent" } });
    const sound = await t.call("POST", "/agents", { key: ADMIN_KEY, body: { name: "sound-agent" } });
    expect([damaged.status, sound.status]).toEqual([201, 201]);
    await t.db.raw("UPDATE agents SET created_at = 'yesterday' WHERE id = ?", [damaged.body.id]);

    // Past the recorder: a 500 is not an answer of the API document, and this one is expected.
    const reply = await fetch(`${t.baseUrl}/agents/${damaged.body.id}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    const body = (await reply.json()) as Record<string, unknown>;
    expect(reply.status).toBe(500);
    expect(reply.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(body["code"]).toBe("internal_error");
    expect(JSON.stringify(body)).not.toMatch(/created_at|yesterday|StoreRowError/);
    // The operator's log names the table and the column.
    expect(logs.some((line) => line.level === "error" && String(line.fields["error"]).includes("`agents` whose column `created_at`"))).toBe(
      true,
    );

    // The same process answers every other request as before.
    expect((await t.call("GET", `/agents/${sound.body.id}`, { key: ADMIN_KEY })).status).toBe(200);
    expect((await t.call("POST", "/agents", { key: ADMIN_KEY, body: { name: "after-damage" } })).status).toBe(201);
  });
});
