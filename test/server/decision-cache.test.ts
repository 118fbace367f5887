// The decision cache is typed per kind of entry: what a reader gets back has the type it was put in
// with, no cast; ids of two kinds never collide; emptying the cache empties every kind, and two
// connections' caches share nothing (decision 0351); on SQLite the decision path's own writes, the
// Merkle log's queue included, leave it whole.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, expectTypeOf, it } from "vitest";
import { openStore } from "../../server/src/store/open.js";
import { CacheKind, DecisionCache } from "../../server/src/store/decision-cache.js";
import { SqliteConnection } from "../../server/src/store/sqlite-driver.js";

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
});
