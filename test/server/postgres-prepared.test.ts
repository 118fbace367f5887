// Named (prepared) statements on PostgreSQL: each connection plans a statement once, and a plan
// made stale by a migration elsewhere (SQLSTATE 0A000, "cached plan must not change result type")
// drops its connection and runs the transaction again, instead of failing every later request.

import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresDriver, POSTGRES_LIMITS } from "@agent-authority/server";
import { pgProblem, PG_URL, postgresTarget } from "./targets.js";

describe("named statements on PostgreSQL", () => {
  if (pgProblem !== null) {
    it.skip(`skipped because PostgreSQL is unreachable at ${PG_URL}: ${pgProblem}`, () => undefined);
    return;
  }
  let db: Awaited<ReturnType<typeof postgresTarget.create>>;
  let admin: pg.Client;
  beforeAll(async () => {
    db = await postgresTarget.create();
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query(`CREATE SCHEMA IF NOT EXISTS ${db.schema}`);
    await admin.query(`SET search_path = ${db.schema}`);
  });
  afterAll(async () => {
    await admin?.end();
    await db?.dispose();
  });

  /** The statements the server prepared on its connections, by the backends' own catalogue. */
  async function preparedOn(driver: PostgresDriver, sql: string): Promise<number> {
    // pg_prepared_statements is per backend: ask through the driver's own (one) connection.
    const rows = await driver.all("SELECT count(*) AS n FROM pg_prepared_statements WHERE statement = ?", [sql]);
    return Number(rows[0]!["n"]);
  }

  it("prepares a statement once per connection and runs it again from its plan", async () => {
    await admin.query("CREATE TABLE once (id INTEGER PRIMARY KEY, v TEXT)");
    const driver = new PostgresDriver(db.url, { schema: db.schema!, poolSize: 1 });
    try {
      for (let i = 0; i < 5; i += 1) await driver.run("INSERT INTO once (id, v) VALUES (?, ?)", [i, `v${i}`]);
      expect(await preparedOn(driver, "INSERT INTO once (id, v) VALUES ($1, $2)")).toBe(1);
      expect((await driver.all("SELECT v FROM once ORDER BY id")).map((r) => r["v"])).toEqual(["v0", "v1", "v2", "v3", "v4"]);
    } finally {
      await driver.close();
    }
  });

  it("prepares nothing with named statements off, for a transaction-mode pooler", async () => {
    await admin.query("CREATE TABLE unnamed (id INTEGER PRIMARY KEY)");
    const driver = new PostgresDriver(db.url, { schema: db.schema!, poolSize: 1, namedStatements: false });
    try {
      await driver.transaction((tx) => tx.run("INSERT INTO unnamed (id) VALUES (?)", [1]));
      await driver.groupTransaction((tx) => tx.run("INSERT INTO unnamed (id) VALUES (?)", [2]));
      expect(await driver.all("SELECT id FROM unnamed ORDER BY id")).toEqual([{ id: 1 }, { id: 2 }]);
      const held = await driver.get("SELECT count(*) AS n FROM pg_prepared_statements");
      expect(Number(held!["n"])).toBe(0);
    } finally {
      await driver.close();
    }
  });

  it("recovers from a plan made stale by another connection's migration, in and out of transactions", async () => {
    await admin.query("CREATE TABLE shifting (id INTEGER PRIMARY KEY, a TEXT); INSERT INTO shifting VALUES (1, 'x')");
    const driver = new PostgresDriver(db.url, { schema: db.schema!, poolSize: 2 });
    const read = "SELECT * FROM shifting WHERE id = ?";
    try {
      // Both pooled connections prepare the statement.
      await Promise.all([driver.transaction((tx) => tx.all(read, [1])), driver.transaction((tx) => tx.all(read, [1]))]);
      expect(await driver.get(read, [1])).toEqual({ id: 1, a: "x" });
      // Another replica's migration changes the row type under the prepared plans.
      await admin.query("ALTER TABLE shifting ADD COLUMN b TEXT NOT NULL DEFAULT 'y'");
      const raw = new pg.Client({ connectionString: db.url, options: `-c search_path=${db.schema}` });
      await raw.connect();
      try {
        // What every later request would meet without the recovery.
        await raw.query({ name: "stale", text: "SELECT * FROM shifting WHERE id = $1", values: [1] });
        await raw.query("ALTER TABLE shifting ADD COLUMN c TEXT NOT NULL DEFAULT 'z'");
        await expect(raw.query({ name: "stale", text: "SELECT * FROM shifting WHERE id = $1", values: [1] })).rejects.toMatchObject({
          code: "0A000",
        });
      } finally {
        await raw.end();
      }
      expect(await driver.transaction((tx) => tx.get(read, [1]))).toEqual({ id: 1, a: "x", b: "y", c: "z" });
      expect(await driver.groupTransaction((tx) => tx.get(read, [1]))).toEqual({ id: 1, a: "x", b: "y", c: "z" });
      expect(await driver.get(read, [1])).toEqual({ id: 1, a: "x", b: "y", c: "z" });
      // And it keeps answering: the stale connections were dropped, not returned to the pool.
      for (let i = 0; i < 6; i += 1) expect(await driver.get(read, [1])).toEqual({ id: 1, a: "x", b: "y", c: "z" });
    } finally {
      await driver.close();
    }
  });

  it("names no more than its limit of statement texts, and still runs the rest", async () => {
    await admin.query("CREATE TABLE many (id INTEGER PRIMARY KEY)");
    const driver = new PostgresDriver(db.url, { schema: db.schema!, poolSize: 1 });
    try {
      // Distinct texts, more than the limit: each answers, and the connection holds a bounded number.
      const texts = POSTGRES_LIMITS.namedStatements + 20;
      for (let i = 0; i < texts; i += 1) {
        expect(await driver.get(`SELECT ${i} AS n, count(*) AS c FROM many`)).toEqual({ n: i, c: 0 });
      }
      const held = await driver.get("SELECT count(*) AS n FROM pg_prepared_statements");
      expect(Number(held!["n"])).toBeLessThanOrEqual(POSTGRES_LIMITS.namedStatements);
    } finally {
      await driver.close();
    }
  });
});
