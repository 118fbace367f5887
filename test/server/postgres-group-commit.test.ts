// Group commit and transient-failure retries on PostgreSQL: concurrent transactions share one
// transaction and commit, each answered after its own commit; a deadlock between two batches and
// a serialization failure (SQLSTATE 40001, what CockroachDB and YugabyteDB answer for any
// conflict) are retried inside the driver, a bounded number of times.

import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContentionError, PostgresDriver, POSTGRES_LIMITS } from "@agent-authority/server";
import { afterFailure, type RetryPolicy } from "../../server/src/store/drivers/index.js";
import { pgProblem, PG_URL, postgresTarget } from "./targets.js";

/** Raises a real error with the given SQLSTATE in the database. */
const raise = (code: string): string => `DO $$ BEGIN RAISE EXCEPTION 'transient' USING ERRCODE = '${code}'; END $$`;

describe("group commit and retries on PostgreSQL", () => {
  if (pgProblem !== null) {
    it.skip(`skipped because PostgreSQL is unreachable at ${PG_URL}: ${pgProblem}`, () => undefined);
    return;
  }
  let db: Awaited<ReturnType<typeof postgresTarget.create>>;
  let driver: PostgresDriver;
  let observer: pg.Client;
  beforeAll(async () => {
    db = await postgresTarget.create();
    driver = new PostgresDriver(db.url, { schema: db.schema! });
    await driver.exec(`CREATE SCHEMA IF NOT EXISTS ${db.schema}`);
    await driver.exec(
      "CREATE TABLE items (id INTEGER PRIMARY KEY, txid TEXT NOT NULL); CREATE TABLE locks (id INTEGER PRIMARY KEY); INSERT INTO locks VALUES (1), (2)",
    );
    observer = new pg.Client({ connectionString: db.url, options: `-c search_path=${db.schema}` });
    await observer.connect();
  });
  afterAll(async () => {
    await observer?.end();
    await driver?.close();
    await db?.dispose();
  });

  it("runs 60 concurrent transactions in a few shared transactions, each answered after its commit", async () => {
    const answered = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        driver
          .groupTransaction(async (tx) => {
            const row = await tx.get("SELECT txid_current()::text AS txid");
            await tx.run("INSERT INTO items (id, txid) VALUES (?, ?)", [i, String(row!["txid"])]);
            return i;
          })
          .then(async (id) => {
            // Committed before the answer: another connection sees the row the moment it resolves.
            const seen = await observer.query("SELECT 1 FROM items WHERE id = $1", [id]);
            return seen.rowCount;
          }),
      ),
    );
    expect(answered).toEqual(Array.from({ length: 60 }, () => 1));
    const shared = await observer.query("SELECT COUNT(DISTINCT txid)::int AS n FROM items");
    // At most as many transactions as batches in flight at once, and a few more as they turn over.
    expect(shared.rows[0].n).toBeLessThan(30);
  });

  it("retries a deadlock between two batches of two replicas: both commit", async () => {
    // Two drivers on the same schema, as two replicas would be: one replica's own batches for one
    // order share a lane and never overlap. PostgreSQL reports a deadlock after `deadlock_timeout`
    // (a second), which on a loaded machine can take a retry past the 2 s budget: the law here is
    // the retry, so both drivers get a budget no machine reaches.
    const retryMs = 30_000;
    const one = new PostgresDriver(db.url, { schema: db.schema!, transactionRetryMs: retryMs });
    const other = new PostgresDriver(db.url, { schema: db.schema!, transactionRetryMs: retryMs });
    let aLocked!: () => void;
    let bLocked!: () => void;
    const aHolds = new Promise<void>((r) => {
      aLocked = r;
    });
    const bHolds = new Promise<void>((r) => {
      bLocked = r;
    });
    let tries = 0;
    /** Locks row `first`, tells it, waits for the other's news, then locks row `second`. */
    const crossing = (on: PostgresDriver, name: string, first: number, second: number, held: () => void, wait: Promise<void>) =>
      on.groupTransaction(async (tx) => {
        tries += 1;
        await tx.get("SELECT id FROM locks WHERE id = ? FOR UPDATE", [first]);
        held();
        await wait;
        await tx.get("SELECT id FROM locks WHERE id = ? FOR UPDATE", [second]);
        return name;
      });
    try {
      const a = crossing(one, "a", 1, 2, aLocked, bHolds);
      await aHolds;
      const b = crossing(other, "b", 2, 1, bLocked, aHolds);
      expect(await Promise.all([a, b])).toEqual(["a", "b"]);
      expect(tries).toBe(3);
    } finally {
      await one.close();
      await other.close();
    }
  });

  it("retries a serialization failure, in a plain and in a grouped transaction, and gives up after the limit", async () => {
    for (const run of [driver.transaction.bind(driver), driver.groupTransaction.bind(driver)]) {
      let tries = 0;
      expect(
        await run(async (tx) => {
          tries += 1;
          if (tries < 3) await tx.exec(raise("40001"));
          return tries;
        }),
      ).toBe(3);
      let always = 0;
      const exhausted = await run(async (tx) => {
        always += 1;
        await tx.exec(raise("40001"));
      }).catch((error: unknown) => error);
      // The caller hears that the transaction met contention on every try, with the last SQLSTATE.
      expect(exhausted).toBeInstanceOf(ContentionError);
      expect(exhausted).toMatchObject({ code: "40001", attempts: POSTGRES_LIMITS.transactionAttempts });
      expect(always).toBe(POSTGRES_LIMITS.transactionAttempts);
      // Any other failure is the caller's at once.
      let once = 0;
      await expect(
        run(async (tx) => {
          once += 1;
          await tx.exec(raise("23505"));
        }),
      ).rejects.toMatchObject({ code: "23505" });
      expect(once).toBe(1);
    }
  });

  it("retries a statement outside any transaction like a transaction of its own", async () => {
    await driver.exec("CREATE SEQUENCE statement_tries");
    // Fails on its first two runs, then succeeds: a statement PostgreSQL rolled back runs again.
    await driver.run(
      "DO $$ BEGIN IF nextval('statement_tries') < 3 THEN RAISE EXCEPTION 'transient' USING ERRCODE = '40001'; END IF; END $$",
    );
    expect((await observer.query("SELECT last_value::int AS n FROM statement_tries")).rows[0].n).toBe(3);
    const failure = await driver.run(raise("40P01")).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ContentionError);
    expect(failure).toMatchObject({ code: "40P01" });
  });

  it("stops retrying once transactionRetryMs has passed, with tries left", async () => {
    // Every try takes at least 100 ms and then fails: with 250 ms no fourth try may start.
    const short = new PostgresDriver(db.url, { schema: db.schema!, transactionRetryMs: 250 });
    try {
      for (const run of [short.transaction.bind(short), short.groupTransaction.bind(short)]) {
        let tries = 0;
        const failure = await run(async (tx) => {
          tries += 1;
          await tx.exec(`SELECT pg_sleep(0.1); ${raise("40001")}`);
        }).catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(ContentionError);
        expect(tries).toBeGreaterThanOrEqual(1);
        expect(tries).toBeLessThanOrEqual(3);
        expect((failure as ContentionError).attempts).toBe(tries);
      }
    } finally {
      await short.close();
    }
  });

  it("retries a real write-skew conflict under SERIALIZABLE: both transactions commit, one of them twice tried", async () => {
    await driver.exec(
      "CREATE TABLE doctors (id INTEGER PRIMARY KEY, on_call BOOLEAN NOT NULL); INSERT INTO doctors VALUES (1, true), (2, true)",
    );
    let tries = 0;
    let bothRead!: () => void;
    let reads = 0;
    const together = new Promise<void>((r) => {
      bothRead = r;
    });
    const leave = (id: number) =>
      driver.transaction(async (tx) => {
        tries += 1;
        await tx.exec("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
        const on = await tx.get("SELECT COUNT(*)::int AS n FROM doctors WHERE on_call");
        reads += 1;
        if (reads === 2) bothRead();
        // Both first tries read before either writes: the conflict is certain, not a matter of timing.
        await together;
        if (Number(on!["n"]) > 1) await tx.run("UPDATE doctors SET on_call = false WHERE id = ?", [id]);
      });
    await Promise.all([leave(1), leave(2)]);
    expect(tries).toBe(3);
    // The retried one saw the other's commit: one doctor stays on call.
    expect((await observer.query("SELECT COUNT(*)::int AS n FROM doctors WHERE on_call")).rows[0].n).toBe(1);
  });
});

describe("the retry decision (afterFailure)", () => {
  const transient = Object.assign(new Error("serialization failure"), { code: "40001" });
  const policy: RetryPolicy = { retryable: (error) => error === transient, attempts: 12, delayMs: () => 10, budgetMs: 100 };
  const now = () => performance.now();

  it("retries a transient failure while tries and time remain", () => {
    expect(afterFailure(policy, transient, 11, now() - 50)).toEqual({ retryInMs: 10 });
  });

  it("gives up at the last try: a ContentionError carrying the SQLSTATE", () => {
    const verdict = afterFailure(policy, transient, 12, now());
    expect("fail" in verdict && verdict.fail).toBeInstanceOf(ContentionError);
    expect("fail" in verdict && verdict.fail).toMatchObject({ code: "40001", attempts: 12 });
  });

  it("gives up when the next try would start at or after the budget", () => {
    // 90 ms spent and a 10 ms wait: the retry would start at 100 ms, the budget's end.
    const verdict = afterFailure(policy, transient, 2, now() - 90);
    expect("fail" in verdict && verdict.fail).toBeInstanceOf(ContentionError);
  });

  it("hands any other failure back as it is, at once", () => {
    const other = new Error("unique violation");
    expect(afterFailure(policy, other, 1, now())).toEqual({ fail: other });
  });
});
