// The ledger's Merkle log over SQL (decision 0621): sealed records waiting for a position, the leaves
// in their global order, and the hash of every perfect subtree, so that a tree head or a proof
// reads O(log n) rows whatever the ledger's size.

import type { Dialect, Row, SqlDriver } from "../sql/index.js";
import { takeNamedLock, type EngineProfile } from "../sql/index.js";
import { arrayLiteral } from "../sql/index.js";
import { ColumnReader } from "../sql/index.js";

/** The tables of migration 11. */
export const LEDGER_LOG_TABLES = ["ledger_pending", "ledger_leaves", "ledger_nodes"] as const;

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

/** A record waiting for its position: its id and chain hash, or null hash when the record is gone. */
export interface PendingRecord {
  readonly ledger_id: string;
  readonly hash: string | null;
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
  /** The oldest records waiting for a position, at most `limit`. */
  pending(limit: number): Promise<PendingRecord[]>;
  /** Logs leaves and the perfect subtrees they complete, and takes their records off the waiting list. */
  append(
    leaves: readonly { position: number; ledger_id: string; leaf_hash: string }[],
    nodes: readonly { level: number; index: number; hash: string }[],
    done: readonly string[],
  ): Promise<void>;
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

const LEAVES = new ColumnReader("ledger_leaves");
const NODES = new ColumnReader("ledger_nodes");
const PENDING = new ColumnReader("ledger_pending");
const LEDGER = new ColumnReader("ledger");

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

  async pending(limit: number): Promise<PendingRecord[]> {
    const rows = await this.#db.all(
      "SELECT p.ledger_id AS ledger_id, l.hash AS hash FROM ledger_pending p LEFT JOIN ledger l ON l.id = p.ledger_id ORDER BY p.pos LIMIT ?",
      [limit],
    );
    return rows.map((row: Row) => ({ ledger_id: PENDING.text(row, "ledger_id"), hash: PENDING.textOrNull(row, "hash") }));
  }

  async append(
    leaves: readonly { position: number; ledger_id: string; leaf_hash: string }[],
    nodes: readonly { level: number; index: number; hash: string }[],
    done: readonly string[],
  ): Promise<void> {
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
      if (done.length > 0) await db.run("DELETE FROM ledger_pending WHERE ledger_id = ANY (?::text[])", [arrayLiteral(done)]);
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
    for (let i = 0; i < done.length; i += ROWS_PER_STATEMENT) {
      const chunk = done.slice(i, i + ROWS_PER_STATEMENT);
      await this.#db.run(`DELETE FROM ledger_pending WHERE ledger_id IN (${chunk.map(() => "?").join(", ")})`, chunk);
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
