// The database engine behind a `postgres://` URL (decision 0310): PostgreSQL itself, or a
// distributed engine that speaks its protocol. The engine decides how the store's named locks are
// taken, the isolation level every transaction begins with, and which guards the schema can have.

import { settledInOrder, type SqlDriver } from "./driver.js";

export const DATABASE_ENGINES = ["postgresql", "cockroachdb", "yugabytedb"] as const;
export type DatabaseEngine = (typeof DATABASE_ENGINES)[number];

export function isDatabaseEngine(value: string): value is DatabaseEngine {
  return (DATABASE_ENGINES as readonly string[]).includes(value);
}

export interface EngineProfile {
  readonly engine: DatabaseEngine;
  /**
   * How a named lock (migrations, the first admin key, an agent's own ledger chain) is taken:
   * PostgreSQL's transaction-scoped advisory lock, or a row of `authority_locks` locked with
   * `SELECT … FOR UPDATE`, which engines without real advisory locks serialise like any row.
   */
  readonly locks: "advisory" | "rows";
  /** The isolation level every transaction begins with; undefined: the server's own default. */
  readonly isolation: "serializable" | undefined;
  /** Whether the schema refuses TRUNCATE with statement triggers (CockroachDB has none). */
  readonly truncateGuard: boolean;
  /**
   * Whether `decision_signals.seq` must be checked to come from a sequence handing out one value
   * at a time, in order (an engine where SERIAL may mean something else, or sequences are cached
   * per node).
   */
  readonly checkSignalSequence: boolean;
}

export const ENGINE_PROFILES: Readonly<Record<DatabaseEngine, EngineProfile>> = Object.freeze({
  postgresql: { engine: "postgresql", locks: "advisory", isolation: undefined, truncateGuard: true, checkSignalSequence: false },
  // SERIALIZABLE is CockroachDB's own level; its triggers are row triggers only.
  cockroachdb: { engine: "cockroachdb", locks: "rows", isolation: "serializable", truncateGuard: false, checkSignalSequence: true },
  // YugabyteDB's default is snapshot isolation, under which a read after a lock still sees the
  // snapshot of the transaction's first statement; SERIALIZABLE makes every conflict a 40001.
  yugabytedb: { engine: "yugabytedb", locks: "rows", isolation: "serializable", truncateGuard: true, checkSignalSequence: true },
});

export const POSTGRESQL_PROFILE = ENGINE_PROFILES.postgresql;

/**
 * The table of lock rows. Created before migrations, because the migrations' own lock is one of
 * its rows; only ever inserted into and locked (a lock's row stays once made).
 */
const LOCK_TABLE_SQL = "CREATE TABLE IF NOT EXISTS authority_locks (name TEXT PRIMARY KEY, taken BIGINT NOT NULL DEFAULT 0)";

/**
 * SQLSTATEs of a `CREATE … IF NOT EXISTS` that lost a race with the same statement on another
 * connection: PostgreSQL checks existence before it inserts into its catalogue, so two at once can
 * both miss the other's and one fails on the catalogue's unique index (23505), or as a duplicate
 * (42P06 schema, 42P07 table, 42710 the table's row type); CockroachDB and YugabyteDB may answer
 * 40001.
 */
const LOST_CREATE_RACE = new Set(["23505", "42P06", "42P07", "42710", "40001"]);

/**
 * Statements that must succeed once however many replicas run them at the same moment, each
 * outside any transaction: tried again after losing a race, up to `CREATE_ATTEMPTS` times.
 */
const CREATE_ATTEMPTS = 5;

async function createIdempotently(db: SqlDriver, sql: string): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await db.exec(sql);
      return;
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (attempt >= CREATE_ATTEMPTS || typeof code !== "string" || !LOST_CREATE_RACE.has(code)) throw error;
    }
  }
}

/** Creates the schema (when one is named) and the lock table, before the migration lock is taken. */
export async function prepareLockTable(db: SqlDriver, schema: string | undefined): Promise<void> {
  if (schema !== undefined) await createIdempotently(db, `CREATE SCHEMA IF NOT EXISTS ${schema}`);
  await createIdempotently(db, LOCK_TABLE_SQL);
}

export interface NamedLock {
  /** The lock's name; PostgreSQL's advisory lock uses its hash. */
  readonly name: string;
  /**
   * Whether the holder also writes the lock's row. Under snapshot isolation a transaction that
   * waited for a lock that was only held goes on reading the snapshot it took before it waited;
   * when the holder wrote the row, the waiter is answered 40001 instead and runs again on a fresh
   * snapshot. For the rare locks whose holders change what the waiters read with DDL or counts
   * (migrations, the first admin key), not for the decision path.
   */
  readonly touch?: boolean;
}

/**
 * Takes a named lock until the transaction ends. With rows, the statements are sent together (the
 * insert of a missing row, then the row's lock), so a statement the caller sends next on a
 * pipelining connection runs after the lock is held. All go through `run`, so their promises
 * settle in the order the statements were answered and the failure reported is the first one's,
 * not a later one's "current transaction is aborted".
 */
export function takeNamedLock(db: SqlDriver, profile: EngineProfile, lock: NamedLock): Promise<unknown> {
  if (db.dialect !== "postgres") return Promise.resolve();
  if (profile.locks === "advisory") return db.get("SELECT pg_advisory_xact_lock(hashtext(?)) AS locked", [lock.name]);
  const statements = [
    db.run("INSERT INTO authority_locks (name) VALUES (?) ON CONFLICT (name) DO NOTHING", [lock.name]),
    db.run("SELECT name FROM authority_locks WHERE name = ? FOR UPDATE", [lock.name]),
  ];
  if (lock.touch === true) statements.push(db.run("UPDATE authority_locks SET taken = taken + 1 WHERE name = ?", [lock.name]));
  return settledInOrder(statements);
}

/** The signal sequence is not one that hands out values in order, one at a time (decision 0310). */
export class SignalSequenceUnordered extends Error {}

/**
 * On an engine where SERIAL may not mean a sequence (CockroachDB's `unique_rowid()`), or where a
 * sequence is cached per node (YugabyteDB), `decision_signals.seq` would no longer order an
 * agent's signals within a millisecond. Refuses a column not filled from a sequence; sets the
 * sequence's own cache to 1 when it is larger.
 */
export async function checkSignalSequence(db: SqlDriver, profile: EngineProfile): Promise<void> {
  if (!profile.checkSignalSequence || db.dialect !== "postgres") return;
  const column = await db.get(
    "SELECT column_default FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'decision_signals' AND column_name = 'seq'",
  );
  const fill = column === undefined ? "" : String(column["column_default"] ?? "");
  if (!/^nextval\(/i.test(fill)) {
    const remedy =
      profile.engine === "cockroachdb"
        ? "set `serial_normalization = 'sql_sequence'` for the server's role before its first start (docs/operations.md)"
        : "create the schema with a sequence for it";
    throw new SignalSequenceUnordered(
      `decision_signals.seq is filled by \`${fill || "nothing"}\`, not by a sequence, so an agent's signals within one millisecond could be read out of order: ${remedy}`,
    );
  }
  const sequence = await db.get("SELECT pg_get_serial_sequence('decision_signals', 'seq') AS name");
  const name = sequence === undefined ? null : sequence["name"];
  if (typeof name !== "string") return;
  const cache = await db.get("SELECT seqcache FROM pg_sequence WHERE seqrelid = CAST(? AS regclass)", [name]);
  if (cache !== undefined && Number(cache["seqcache"]) !== 1) await db.exec(`ALTER SEQUENCE ${name} CACHE 1`);
}
