// A SQLite database locked by another connection past the busy timeout (another process on the
// same file, a backup, a checkpoint): the statement or transaction that waited is rolled back and
// answered as contention (HTTP 409 with Retry-After), never as a failure of the server, and it
// wrote nothing.

import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ContentionError } from "../../server/src/store/sql/index.js";
import { SQLITE_LIMITS, SqliteDriver } from "../../server/src/store/drivers/index.js";
import { certifiedAgent, issueGrant, startDecisionServer } from "./decisions-http.js";
import { CERTIFICATION } from "./http-harness.js";
import { sqliteTarget } from "./targets.js";

const dir = mkdtempSync(join(tmpdir(), "authority-locked-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `fn` while another connection holds the database's write lock. */
async function whileLocked<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const other = new Database(path);
  other.pragma("busy_timeout = 0");
  other.exec("BEGIN IMMEDIATE");
  try {
    return await fn();
  } finally {
    other.exec("ROLLBACK");
    other.close();
  }
}

describe("SQLite locked by another connection", () => {
  it("waits SQLITE_LIMITS.busyTimeoutMs (2 s) by default, and the time it is told", async () => {
    expect(SQLITE_LIMITS.busyTimeoutMs).toBe(2_000);
    const plain = new SqliteDriver(join(dir, "default.db"));
    const told = new SqliteDriver(join(dir, "told.db"), { busyTimeoutMs: 40 });
    expect((await plain.get("PRAGMA busy_timeout"))!["timeout"]).toBe(2_000);
    expect((await told.get("PRAGMA busy_timeout"))!["timeout"]).toBe(40);
    await plain.close();
    await told.close();
  });

  it("answers a transaction, a group-commit transaction and a write past the timeout as contention, and writes nothing", async () => {
    const path = join(dir, "locked.db");
    const driver = new SqliteDriver(path, { busyTimeoutMs: 40 });
    await driver.exec("CREATE TABLE t (n INTEGER)");
    const insert = (tx: SqliteDriver | Parameters<Parameters<SqliteDriver["transaction"]>[0]>[0]) => tx.run("INSERT INTO t (n) VALUES (1)");
    const refused = await whileLocked(path, () =>
      Promise.allSettled([driver.transaction(insert), driver.groupTransaction(insert), driver.run("INSERT INTO t (n) VALUES (1)")]),
    );
    for (const outcome of refused) {
      expect(outcome.status).toBe("rejected");
      const error = (outcome as PromiseRejectedResult).reason as ContentionError;
      expect(error).toBeInstanceOf(ContentionError);
      expect(error.code).toMatch(/^SQLITE_BUSY/);
      expect(error.message).toMatch(/held the database's lock past the busy timeout; nothing was written/);
    }
    expect((await driver.get("SELECT count(*) AS n FROM t"))!["n"]).toBe(0);
    // The lock released, the same transactions run.
    await driver.transaction(insert);
    await driver.groupTransaction(insert);
    expect((await driver.get("SELECT count(*) AS n FROM t"))!["n"]).toBe(2);
    await driver.close();
  });

  it("answers an authorize 409 `contention` with Retry-After after the busy timeout, seals nothing, and decides it once the lock is gone", async () => {
    const s = await startDecisionServer(sqliteTarget);
    try {
      const agent = await certifiedAgent(s, "locked-out");
      const grant = await issueGrant(s, agent.id);
      const body = {
        grant_id: grant.id,
        tool: "payments.send",
        amount_minor: 100,
        currency: "EUR",
        attestation: {
          manifest_hash: CERTIFICATION.manifest_hash,
          content_hash: CERTIFICATION.content_hash,
          provenance_version: CERTIFICATION.provenance_version,
        },
      };
      const records = new Database(s.db.url, { readonly: true });
      const sealed = () => (records.prepare("SELECT count(*) AS n FROM ledger").get() as { n: number }).n;
      const before = sealed();
      const locked = await whileLocked(s.db.url, () => s.call("POST", "/authorize", agent.key, body));
      expect(locked.status, JSON.stringify(locked.body)).toBe(409);
      expect(locked.body.code).toBe("contention");
      expect(locked.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(sealed()).toBe(before);
      const decided = await s.call("POST", "/authorize", agent.key, body);
      expect(decided.status).toBe(200);
      expect(decided.body.outcome).toBe("allow");
      expect(sealed()).toBe(before + 1);
      records.close();
    } finally {
      await s.close();
    }
  }, 30_000);
});
