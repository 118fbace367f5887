// The ledger's Merkle log over SQL (decision 0621): sealed records waiting for a position, the leaves
// in their global order, and the hash of every perfect subtree, so that a tree head or a proof
// reads O(log n) rows whatever the ledger's size.

import type { Dialect, Row, SqlDriver } from "../sql/index.js";
import { takeNamedLock, type EngineProfile } from "../sql/index.js";
import { arrayLiteral } from "../sql/index.js";
import { ColumnReader } from "../sql/index.js";

/** The tables of migration 11. */
export const LEDGER_LOG_TABLES = ["ledger_pending", "ledger_leaves", "ledger_nodes", "ledger_log_trees", "ledger_log_sweeps"] as const;

/**
 * Migration 11. `ledger_pending` is filled in the transaction that seals a record and emptied by
 * the logger; `ledger_leaves` and `ledger_nodes` are sealed like the ledger (never updated, never
 * deleted). Records sealed before the migration wait in `ledger_pending` in the order they were
 * sealed. Safe to apply twice.
 */
export function ledgerLogMigrationSql(dialect: Dialect): string {
  const pending =
    dialect === "sqlite"
      ? "CREATE TABLE IF NOT EXISTS ledger_pending (pos INTEGER PRIMARY KEY AUTOINCREMENT, ledger_id TEXT NOT NULL UNIQUE);"
      : "CREATE TABLE IF NOT EXISTS ledger_pending (pos BIGSERIAL PRIMARY KEY, ledger_id TEXT NOT NULL UNIQUE);";
  const tables = `${pending}
CREATE TABLE IF NOT EXISTS ledger_leaves (
  position BIGINT PRIMARY KEY,
  ledger_id TEXT NOT NULL UNIQUE,
  leaf_hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ledger_nodes (
  level INTEGER NOT NULL,
  idx BIGINT NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY (level, idx)
);
INSERT INTO ledger_pending (ledger_id) SELECT id FROM ledger
  WHERE id NOT IN (SELECT ledger_id FROM ledger_pending) AND id NOT IN (SELECT ledger_id FROM ledger_leaves)
  ORDER BY created_at, tree_id, seq;
`;
  const sealed = ["ledger_leaves", "ledger_nodes"];
  const guards =
    dialect === "sqlite"
      ? sealed.flatMap((t) => [
          `CREATE TRIGGER IF NOT EXISTS ${t}_sealed BEFORE UPDATE ON ${t} BEGIN SELECT RAISE(ABORT, '${t} records are sealed'); END;`,
          `CREATE TRIGGER IF NOT EXISTS ${t}_kept BEFORE DELETE ON ${t} BEGIN SELECT RAISE(ABORT, '${t} records are never deleted'); END;`,
        ])
      : // The trigger functions come from migration 1.
        sealed.flatMap((t) => [
          `DROP TRIGGER IF EXISTS ${t}_sealed ON ${t};`,
          `DROP TRIGGER IF EXISTS ${t}_kept ON ${t};`,
          `DROP TRIGGER IF EXISTS ${t}_kept_truncate ON ${t};`,
          `CREATE TRIGGER ${t}_sealed BEFORE UPDATE ON ${t} FOR EACH ROW EXECUTE FUNCTION authority_refuse_update();`,
          `CREATE TRIGGER ${t}_kept BEFORE DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION authority_refuse_delete();`,
          `CREATE TRIGGER ${t}_kept_truncate BEFORE TRUNCATE ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION authority_refuse_delete();`,
        ]);
  return `${tables}${guards.join("\n")}\n`;
}

/**
 * Migration 13 (decision 1941): the log follows each chain by its own positions instead of a queue
 * the decision path fills. `ledger_log_trees` holds, for each tree, the last `seq` given a leaf;
 * `ledger_log_sweeps` the time of the last pass that looked at every tree. Each tree's cursor is
 * seeded from the leaves already logged (a tree's logged records are always a prefix of its
 * chain, since a tree's records commit in `seq` order under its lock); the records still queued
 * are past their cursors, so the next sweep finds them, and the queue is emptied.
 */
export function ledgerCursorsMigrationSql(): string {
  return `CREATE TABLE IF NOT EXISTS ledger_log_trees (tree_id TEXT PRIMARY KEY, seq BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS ledger_log_sweeps (id INTEGER PRIMARY KEY, swept_at BIGINT NOT NULL);
INSERT INTO ledger_log_trees (tree_id, seq)
  SELECT l.tree_id, MAX(l.seq) FROM ledger_leaves v JOIN ledger l ON l.id = v.ledger_id
    WHERE l.tree_id NOT IN (SELECT tree_id FROM ledger_log_trees) GROUP BY l.tree_id;
DELETE FROM ledger_pending;
`;
}

/** A record waiting for its position: its id, tree, place in the tree's chain and chain hash. */
export interface PendingRecord {
  readonly ledger_id: string;
  readonly tree_id: string;
  readonly seq: number;
  readonly hash: string | null;
}

/**
 * Which trees a pass of the logger looks at: those with a record whose id is at or after
 * `sinceId` (ids sort by time: the recent window), the trees named, or every tree (a sweep).
 */
export type PendingScope = { readonly sinceId: string } | { readonly trees: readonly string[] } | "all";

/** Each tree's last `seq` given a leaf by a pass. */
export interface TreeCursor {
  readonly tree_id: string;
  readonly seq: number;
}

/** One leaf as logged, with the record it names as the ledger holds it now (absent: deleted). */
export interface LoggedLeaf {
  readonly position: number;
  readonly ledger_id: string;
  readonly leaf_hash: string;
  readonly record: { readonly prev_hash: string; readonly hash: string; readonly record: string } | undefined;
}

export interface LedgerLogStore {
  /** Serialises the logger until the transaction ends (advisory lock or lock row on PostgreSQL). */
  lock(): Promise<void>;
  /** How many leaves are logged. */
  size(): Promise<number>;
  /**
   * Records without a leaf of the trees in `scope`, at most `limit`: each tree's records after its
   * cursor, in `seq` order, trees one after another (a prefix of each chain, so a cursor is exact).
   */
  pending(scope: PendingScope, limit: number): Promise<PendingRecord[]>;
  /** Logs leaves and the perfect subtrees they complete, and moves the trees' cursors past their records. */
  append(
    leaves: readonly { position: number; ledger_id: string; leaf_hash: string }[],
    nodes: readonly { level: number; index: number; hash: string }[],
    cursors: readonly TreeCursor[],
  ): Promise<void>;
  /** Each named tree's cursor, the last `seq` given a leaf (absent: none yet). */
  cursors(treeIds: readonly string[]): Promise<Map<string, number>>;
  /** The time of the last sweep (undefined: none yet). */
  lastSweep(): Promise<number | undefined>;
  /** Records a sweep's time. */
  swept(at: number): Promise<void>;
  /** Hex hashes of perfect subtrees (`level` 0: leaves), by `level:index`; absent ones are left out. */
  nodes(parts: readonly { level: number; index: number }[]): Promise<Map<string, string>>;
  /** The position of a record's leaf; undefined until it is logged. */
  positionOf(ledgerId: string): Promise<number | undefined>;
  /** Leaves from `from` in position order, at most `limit`, with their records. */
  leaves(from: number, limit: number): Promise<LoggedLeaf[]>;
}

export const partKey = (level: number, index: number): string => `${level}:${index}`;

/** Values bound per statement when reading parts: well under every engine's limit. */
const PARTS_PER_QUERY = 200;
/** Rows written per statement (three values each). */
const ROWS_PER_STATEMENT = 100;
/** Past every `seq`: the bound of a tree with fewer waiting records than a pass takes. */
const LAST_SEQ = "9223372036854775807";

const LEAVES = new ColumnReader("ledger_leaves");
const NODES = new ColumnReader("ledger_nodes");
const LEDGER = new ColumnReader("ledger");
const SWEEPS = new ColumnReader("ledger_log_sweeps");

/**
 * The records after each tree's cursor, of the trees a scope's clause chooses. They are ordered by
 * the latest time along each chain up to the record (`sealed_by`), then tree and `seq`: roughly in
 * the order they were sealed, and always each tree's in `seq` order, whatever the replicas'
 * clocks, so that a pass cut by its limit gives each tree a prefix and its cursor stays exact.
 *
 * Each tree's records are read only up to its `limit`-th waiting one (`upto`, found by the index on
 * tree and `seq`): the first `limit` rows by `sealed_by` hold at most `limit` of a tree, and they are
 * its first by `seq`, since `sealed_by` never falls along a tree. So the answer is the same as over
 * every waiting record, and a logger far behind (a million records) orders one pass's worth per
 * tree rather than its whole backlog on every pass (decision 1951).
 */
function pendingSql(trees: string): string {
  return `WITH touched AS (${trees}), bounds AS MATERIALIZED (
    SELECT t.tree_id, COALESCE(c.seq, 0) AS after,
           COALESCE((SELECT b.seq FROM ledger b WHERE b.tree_id = t.tree_id AND b.seq > COALESCE(c.seq, 0)
                      ORDER BY b.seq LIMIT 1 OFFSET ?), ${LAST_SEQ}) AS upto
      FROM touched t LEFT JOIN ledger_log_trees c ON c.tree_id = t.tree_id
  ), waiting AS (
    SELECT l.id, l.tree_id, l.seq, l.hash,
           MAX(l.created_at) OVER (PARTITION BY l.tree_id ORDER BY l.seq ROWS UNBOUNDED PRECEDING) AS sealed_by
      FROM bounds d JOIN ledger l ON l.tree_id = d.tree_id AND l.seq > d.after AND l.seq <= d.upto
  ) SELECT id AS ledger_id, tree_id, seq, hash FROM waiting ORDER BY sealed_by, tree_id, seq LIMIT ?`;
}

const PENDING_SINCE = pendingSql("SELECT DISTINCT tree_id FROM ledger WHERE id >= ?");
/**
 * A sweep's chains: each found by one step along the index on tree and `seq` from the one before it,
 * and kept when its last `seq` is past its cursor. Its work grows with the number of chains, not of
 * records, where a scan of the ledger held the thread about 0.2 s per million records (decision 1951).
 */
const PENDING_ALL = pendingSql(
  `WITH RECURSIVE chains (tree_id) AS (
     SELECT MIN(tree_id) FROM ledger
     UNION ALL
     SELECT (SELECT MIN(n.tree_id) FROM ledger n WHERE n.tree_id > h.tree_id) FROM chains h WHERE h.tree_id IS NOT NULL
   ) SELECT h.tree_id FROM chains h LEFT JOIN ledger_log_trees c ON c.tree_id = h.tree_id
      WHERE h.tree_id IS NOT NULL AND (SELECT MAX(l.seq) FROM ledger l WHERE l.tree_id = h.tree_id) > COALESCE(c.seq, 0)`,
);
const pendingOfTrees = (n: number): string =>
  pendingSql(`SELECT DISTINCT tree_id FROM ledger WHERE tree_id IN (${Array(n).fill("?").join(", ")})`);

export class LedgerLogSql implements LedgerLogStore {
  readonly #db: SqlDriver;
  readonly #engine: EngineProfile;
  readonly #arrays: boolean;

  constructor(db: SqlDriver, engine: EngineProfile) {
    this.#db = db;
    this.#engine = engine;
    // PostgreSQL itself takes rows as arrays; the other engines keep lists of values, untried there.
    this.#arrays = db.dialect === "postgres" && engine.engine === "postgresql";
  }

  async lock(): Promise<void> {
    // Touched: under snapshot isolation a logger that waited reads the leaves the holder appended.
    await takeNamedLock(this.#db, this.#engine, { name: "ledger-log", touch: true });
  }

  async size(): Promise<number> {
    const row = await this.#db.get("SELECT position FROM ledger_leaves ORDER BY position DESC LIMIT 1");
    return row === undefined ? 0 : LEAVES.integer(row, "position") + 1;
  }

  async pending(scope: PendingScope, limit: number): Promise<PendingRecord[]> {
    const rows =
      scope === "all"
        ? await this.#db.all(PENDING_ALL, [Math.max(0, limit - 1), limit])
        : "sinceId" in scope
          ? await this.#db.all(PENDING_SINCE, [scope.sinceId, Math.max(0, limit - 1), limit])
          : scope.trees.length === 0
            ? []
            : await this.#db.all(pendingOfTrees(scope.trees.length), [...scope.trees, Math.max(0, limit - 1), limit]);
    return rows.map((row: Row) => ({
      ledger_id: LEDGER.text(row, "ledger_id"),
      tree_id: LEDGER.text(row, "tree_id"),
      seq: LEDGER.integer(row, "seq"),
      hash: LEDGER.textOrNull(row, "hash"),
    }));
  }

  async cursors(treeIds: readonly string[]): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    for (let i = 0; i < treeIds.length; i += PARTS_PER_QUERY) {
      const chunk = treeIds.slice(i, i + PARTS_PER_QUERY);
      const rows = await this.#db.all(
        `SELECT tree_id, seq FROM ledger_log_trees WHERE tree_id IN (${chunk.map(() => "?").join(", ")})`,
        chunk,
      );
      for (const row of rows) found.set(LEDGER.text(row, "tree_id"), LEDGER.integer(row, "seq"));
    }
    return found;
  }

  async lastSweep(): Promise<number | undefined> {
    const row = await this.#db.get("SELECT swept_at FROM ledger_log_sweeps WHERE id = 1");
    return row === undefined ? undefined : SWEEPS.integer(row, "swept_at");
  }

  async swept(at: number): Promise<void> {
    await this.#db.run(
      "INSERT INTO ledger_log_sweeps (id, swept_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET swept_at = excluded.swept_at",
      [at],
    );
  }

  async append(
    leaves: readonly { position: number; ledger_id: string; leaf_hash: string }[],
    nodes: readonly { level: number; index: number; hash: string }[],
    cursors: readonly TreeCursor[],
  ): Promise<void> {
    for (let i = 0; i < cursors.length; i += ROWS_PER_STATEMENT) {
      const chunk = cursors.slice(i, i + ROWS_PER_STATEMENT);
      await this.#db.run(
        `INSERT INTO ledger_log_trees (tree_id, seq) VALUES ${chunk.map(() => "(?, ?)").join(", ")}
         ON CONFLICT (tree_id) DO UPDATE SET seq = excluded.seq`,
        chunk.flatMap((c) => [c.tree_id, c.seq]),
      );
    }
    if (this.#arrays) {
      // One statement per table whatever the count, each a named statement (decision 0320).
      const db = this.#db;
      if (leaves.length > 0)
        await db.run("INSERT INTO ledger_leaves (position, ledger_id, leaf_hash) SELECT * FROM unnest(?::bigint[], ?::text[], ?::text[])", [
          arrayLiteral(leaves.map((l) => l.position)),
          arrayLiteral(leaves.map((l) => l.ledger_id)),
          arrayLiteral(leaves.map((l) => l.leaf_hash)),
        ]);
      if (nodes.length > 0)
        await db.run("INSERT INTO ledger_nodes (level, idx, hash) SELECT * FROM unnest(?::integer[], ?::bigint[], ?::text[])", [
          arrayLiteral(nodes.map((n) => n.level)),
          arrayLiteral(nodes.map((n) => n.index)),
          arrayLiteral(nodes.map((n) => n.hash)),
        ]);
      return;
    }
    // Rows a statement, so that a batch is a few statements and not one per row.
    for (let i = 0; i < leaves.length; i += ROWS_PER_STATEMENT) {
      const chunk = leaves.slice(i, i + ROWS_PER_STATEMENT);
      await this.#db.run(
        `INSERT INTO ledger_leaves (position, ledger_id, leaf_hash) VALUES ${chunk.map(() => "(?, ?, ?)").join(", ")}`,
        chunk.flatMap((l) => [l.position, l.ledger_id, l.leaf_hash]),
      );
    }
    for (let i = 0; i < nodes.length; i += ROWS_PER_STATEMENT) {
      const chunk = nodes.slice(i, i + ROWS_PER_STATEMENT);
      await this.#db.run(
        `INSERT INTO ledger_nodes (level, idx, hash) VALUES ${chunk.map(() => "(?, ?, ?)").join(", ")}`,
        chunk.flatMap((n) => [n.level, n.index, n.hash]),
      );
    }
  }

  async nodes(parts: readonly { level: number; index: number }[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    const leaves = parts.filter((p) => p.level === 0).map((p) => p.index);
    const inner = parts.filter((p) => p.level > 0);
    for (let i = 0; i < leaves.length; i += PARTS_PER_QUERY) {
      const chunk = leaves.slice(i, i + PARTS_PER_QUERY);
      const rows = await this.#db.all(
        `SELECT position, leaf_hash FROM ledger_leaves WHERE position IN (${chunk.map(() => "?").join(", ")})`,
        chunk,
      );
      for (const row of rows) found.set(partKey(0, LEAVES.integer(row, "position")), LEAVES.text(row, "leaf_hash"));
    }
    for (let i = 0; i < inner.length; i += PARTS_PER_QUERY / 2) {
      const chunk = inner.slice(i, i + PARTS_PER_QUERY / 2);
      const rows = await this.#db.all(
        `SELECT level, idx, hash FROM ledger_nodes WHERE ${chunk.map(() => "(level = ? AND idx = ?)").join(" OR ")}`,
        chunk.flatMap((p) => [p.level, p.index]),
      );
      for (const row of rows) found.set(partKey(NODES.integer(row, "level"), NODES.integer(row, "idx")), NODES.text(row, "hash"));
    }
    return found;
  }

  async positionOf(ledgerId: string): Promise<number | undefined> {
    const row = await this.#db.get("SELECT position FROM ledger_leaves WHERE ledger_id = ?", [ledgerId]);
    return row === undefined ? undefined : LEAVES.integer(row, "position");
  }

  async leaves(from: number, limit: number): Promise<LoggedLeaf[]> {
    const rows = await this.#db.all(
      `SELECT g.position AS position, g.ledger_id AS ledger_id, g.leaf_hash AS leaf_hash, l.prev_hash AS prev_hash, l.hash AS hash, l.record AS record
       FROM ledger_leaves g LEFT JOIN ledger l ON l.id = g.ledger_id WHERE g.position >= ? ORDER BY g.position LIMIT ?`,
      [from, limit],
    );
    return rows.map((row) => ({
      position: LEAVES.integer(row, "position"),
      ledger_id: LEAVES.text(row, "ledger_id"),
      leaf_hash: LEAVES.text(row, "leaf_hash"),
      // A logged record missing from the ledger reads as no record: the check reports it at its position.
      record:
        row["hash"] === null
          ? undefined
          : { prev_hash: LEDGER.text(row, "prev_hash"), hash: LEDGER.text(row, "hash"), record: LEDGER.text(row, "record") },
    }));
  }
}
