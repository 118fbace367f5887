// The decision cache is typed per kind of entry: what a reader gets back has the type it was put in
// with, no cast; ids of two kinds never collide; emptying the cache empties every kind, and two
// connections' caches share nothing (decision 0351); on SQLite the decision path's own writes, the
// Merkle log's queue included, leave it whole, and a batch step's writes (decision 0319) leave its
// usage and chain heads what the database holds.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, expectTypeOf, it } from "vitest";
import { openStore } from "../../server/src/store/core/index.js";
import { CacheKind, DecisionCache } from "../../server/src/store/sql/index.js";
import { SqliteConnection } from "../../server/src/store/drivers/index.js";
import { SqlStore } from "../../server/src/store/core/index.js";
import type { SqlDriver } from "../../server/src/store/sql/index.js";
import type { LedgerRow } from "../../server/src/store/decisions/index.js";
import { grantRecord, recordId, T0 } from "./store-records.js";

interface Head {
  readonly seq: number;
  readonly hash: string;
}

describe("the decision cache", () => {
  const HEADS = new CacheKind<Head>();
  const NAMES = new CacheKind<string | null>();

  it("answers each kind's values with that kind's type, and undefined for an id not kept", () => {
    const cache = new DecisionCache();
    HEADS.set(cache, "tree-1", { seq: 3, hash: "h3" });
    NAMES.set(cache, "tree-1", null);
    expectTypeOf(HEADS.get(cache, "tree-1")).toEqualTypeOf<Head | undefined>();
    expectTypeOf(NAMES.get(cache, "tree-1")).toEqualTypeOf<string | null | undefined>();
    // The same id under two kinds: two entries, neither hiding the other.
    expect(HEADS.get(cache, "tree-1")).toEqual({ seq: 3, hash: "h3" });
    expect(NAMES.get(cache, "tree-1")).toBeNull();
    expect(HEADS.get(cache, "tree-2")).toBeUndefined();
    expect(cache.size).toBe(2);
  });

  it("empties every kind at once, and a kind kept again after it counts again", () => {
    const cache = new DecisionCache();
    HEADS.set(cache, "a", { seq: 1, hash: "x" });
    NAMES.set(cache, "b", "name");
    NAMES.set(cache, "c", "other");
    expect(cache.size).toBe(3);
    cache.clear();
    expect(cache.size).toBe(0);
    expect(HEADS.get(cache, "a")).toBeUndefined();
    expect(NAMES.get(cache, "b")).toBeUndefined();
    NAMES.set(cache, "b", "again");
    expect(cache.size).toBe(1);
    expect(NAMES.get(cache, "b")).toBe("again");
  });

  it("keeps the entries of each connection's cache apart", () => {
    const one = new DecisionCache();
    const two = new DecisionCache();
    HEADS.set(one, "t", { seq: 1, hash: "one" });
    expect(HEADS.get(two, "t")).toBeUndefined();
    HEADS.set(two, "t", { seq: 2, hash: "two" });
    one.clear();
    expect(HEADS.get(one, "t")).toBeUndefined();
    expect(HEADS.get(two, "t")).toEqual({ seq: 2, hash: "two" });
  });
});

describe("the SQLite connection's decision cache across the decision path's writes", () => {
  const HEADS_OF_TREES = new CacheKind<Head>();

  it("stays whole when a sealed record joins the Merkle log's queue, and is emptied by any other table's write", async () => {
    const dir = mkdtempSync(join(tmpdir(), "authority-cache-"));
    const store = openStore(join(dir, "cache.db"));
    try {
      await store.migrate(Date.now());
    } finally {
      await store.close();
    }
    const db = new Database(join(dir, "cache.db"));
    const connection = new SqliteConnection(db);
    try {
      connection.beginBatch();
      const cache = connection.decisionCache!;
      HEADS_OF_TREES.set(cache, "tree-1", { seq: 1, hash: "h1" });
      // The decision path's own write: every sealed record waits for its place in the log (0621).
      await connection.run("INSERT INTO ledger_pending (ledger_id) VALUES (?)", ["led_cache"]);
      expect(HEADS_OF_TREES.get(cache, "tree-1")).toEqual({ seq: 1, hash: "h1" });
      // Another table's write may change what the cache holds: it is emptied.
      await connection.run("UPDATE agents SET name = name WHERE id = ?", ["agt_none"]);
      expect(HEADS_OF_TREES.get(cache, "tree-1")).toBeUndefined();
      connection.endBatch(false);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps the usage and chain heads a batch step wrote, equal to the database's, without reading it again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "authority-cache-"));
    const path = join(dir, "batch.db");
    const setup = openStore(path);
    const agentId = recordId("agt");
    const root = grantRecord(agentId);
    const child = grantRecord(agentId, { id: recordId("grt"), root_id: root.id, parent_id: root.id, depth: 1, budget_amount_minor: 2_000 });
    try {
      await setup.migrate(Date.now());
      await setup.createAgentIfAbsent({ id: agentId, name: "cache-batch", description: null, created_at: T0, created_by: "test" });
      await setup.insertGrant(root);
      await setup.insertGrant(child);
    } finally {
      await setup.close();
    }
    const db = new Database(path);
    const connection = new SqliteConnection(db);
    // The statements that reach the database through this store's reads.
    const reads: string[] = [];
    const counted: SqlDriver = {
      dialect: "sqlite",
      all: (sql, params) => {
        reads.push(sql);
        return connection.all(sql, params);
      },
      get: (sql, params) => {
        reads.push(sql);
        return connection.get(sql, params);
      },
      run: (sql, params) => connection.run(sql, params),
      exec: (sql) => connection.exec(sql),
      transaction: (fn) => connection.transaction(fn),
      close: () => connection.close(),
      get decisionCache() {
        return connection.decisionCache;
      },
    };
    const store = new SqlStore(counted);
    const decisions = store.decisionPath();
    const now = T0 + 1_000;
    try {
      connection.beginBatch();
      const read = await store
        .decisionBatch()
        .read({ claims: [], presented: [{ grant_id: child.id, agent_id: agentId }], approvals: [] }, "test-env", now);
      expect(read.usage.get(root.id)).toEqual({ uses: 0, held_minor: 0, settled_minor: 0 });
      expect(read.heads.has(root.id)).toBe(false);
      const kept = connection.decisionCache!.size;
      expect(kept).toBeGreaterThan(0);
      const sealed = (seq: number): LedgerRow => ({
        id: recordId("led"),
        tree_id: root.id,
        seq,
        kind: "decision",
        grant_id: child.id,
        agent_id: agentId,
        outcome: "allow",
        record: "{}",
        prev_hash: seq === 1 ? "0".repeat(64) : `h${seq - 1}`,
        hash: `h${seq}`,
        created_at: now,
      });
      const ledger = [sealed(1), sealed(2)];
      const hold = (ledgerId: string, grantId: string, amount: number) => ({
        id: recordId("chg"),
        ledger_id: ledgerId,
        grant_id: grantId,
        amount_minor: amount,
        expires_at: now + 60_000,
        settled_minor: null,
        settled_at: null,
        released_at: null,
        settlement_ledger_id: null,
      });
      await store.decisionBatch().write({
        ledger,
        signals: ledger.map((row) => ({ ledger_id: row.id, agent_id: agentId, at: now, signal: 0 })),
        approvalUses: [],
        uses: new Map([
          [root.id, 2],
          [child.id, 2],
        ]),
        charges: ledger.flatMap((row) => [hold(row.id, root.id, 300), hold(row.id, child.id, 300)]),
        answers: [],
        answersExpiredUpTo: 0,
      });
      // The batch's writes left the cache whole, and it answers without a statement.
      expect(connection.decisionCache!.size).toBeGreaterThanOrEqual(kept);
      reads.length = 0;
      const cachedUsage = await decisions.liveUsage([root.id, child.id], now + 10);
      const cachedHead = await decisions.ledgerHead(root.id);
      expect(reads).toEqual([]);
      expect(cachedUsage.get(root.id)).toEqual({ uses: 2, held_minor: 600, settled_minor: 0 });
      expect(cachedUsage.get(child.id)).toEqual({ uses: 2, held_minor: 600, settled_minor: 0 });
      expect(cachedHead).toEqual({ seq: 2, hash: "h2" });
      // What it answered is what the database holds.
      connection.decisionCache!.clear();
      expect(await decisions.liveUsage([root.id, child.id], now + 10)).toEqual(cachedUsage);
      expect(await decisions.ledgerHead(root.id)).toEqual(cachedHead);
      expect(reads.length).toBeGreaterThan(0);
      // The Merkle log finds the records by their trees (decision 1941): nothing waits in a queue.
      expect(db.prepare("SELECT COUNT(*) AS n FROM ledger_pending").get()).toEqual({ n: 0 });
      connection.endBatch(true);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
