// The better-sqlite3 driver: one connection in WAL mode, every use serialised by an async lock;
// when asked, a checkpoint thread with a connection of its own copies the log (checkpoint-thread.ts).

import Database from "better-sqlite3";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { CheckpointThreadData } from "./checkpoint-thread.js";
import { DecisionCache } from "../sql/index.js";
import { ContentionError, type Batchable, type Row, type SqlDriver, type SqlValue } from "../sql/index.js";
import { GroupCommit } from "./group-commit.js";
import { observeFailure, type StoreObservations } from "../sql/index.js";

/**
 * INVARIANT (sqlite-serial): better-sqlite3 is synchronous and has one connection, so a
 * transaction that awaits would let another request's statements run inside it. Every operation
 * therefore takes `lock` first; a transaction holds it from BEGIN to COMMIT.
 */
class AsyncLock {
  #tail: Promise<void> = Promise.resolve();

  run<T>(fn: () => Promise<T> | T): Promise<T> {
    const result = this.#tail.then(fn);
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

const STATEMENT_CACHE_MAX = 512;
/**
 * The page size of a database this driver creates; one that exists keeps its own, which SQLite
 * fixes when the first table is written. A sealed decision record with its nine gates is about
 * 2 KiB: on 4 KiB pages it cannot share a page, so each one fills a page of its own and half of
 * it goes to the log empty. On 2 KiB pages its head shares a page and the rest fills one overflow
 * page, so a commit writes about a third fewer bytes to the log and waits less for their sync
 * (decision 0604).
 */
export const NEW_DATABASE_PAGE_SIZE = 2_048;
/** The most rows the decision cache keeps; when full it starts over. */
const DECISION_CACHE_MAX = 4_096;

/**
 * Writes that leave the decision cache valid when made inside a batch: the decision path's own
 * records (a sealed record's place in the Merkle log's queue included, decision 0621), of which the cache holds only what the decision path itself put there (a tree's ledger
 * head, set after its append). Any other write, any write outside a batch, any ROLLBACK and any
 * `exec` empties it.
 */
const DECISION_PATH_WRITE =
  /^\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(?:ledger|ledger_pending|charges|grant_totals|decision_signals|breaker_windows|breakers|decision_approvals|idempotency_keys|events)\s/i;
const ROLLBACK = /^\s*ROLLBACK\b/i;

interface Prepared {
  readonly statement: Database.Statement;
  /** Whether running it empties the decision cache: always, or outside a batch only. */
  readonly invalidates: "always" | "outside-batch" | "never";
}

/** One better-sqlite3 connection; SqliteDriver holds one under its lock (exported for the group commit's tests). */
export class SqliteConnection implements SqlDriver {
  readonly dialect = "sqlite" as const;
  readonly #db: Database.Database;
  readonly #statements = new Map<string, Prepared>();
  /**
   * INVARIANT (decision-cache): rows of `grants`, `certificates` and `api_keys` read by the
   * decision path, each agent's breakers with their contracts (emptied by the breaker path's own
   * change of one, breaker-sql.ts), the head of each ledger tree it appended to, and the usage of
   * each grant it read, which its own uses and holds keep up to date (decision-sql.ts, and a
   * batch step's writes in decision-batch-sqlite.ts, decision 0319). Valid
   * while only the decision path wrote:
   * emptied by any other write on this connection, any write outside a batch, any rollback (see
   * DECISION_PATH_WRITE) and, at the start of each group-commit batch, by any commit of another
   * connection (`PRAGMA data_version` changed). It is offered only inside a batch, which holds the
   * database's write lock, so what it holds is what a read would return at that moment.
   */
  readonly #cache = new DecisionCache();
  #dataVersion: unknown = undefined;
  /** Prepared once: `db.pragma()` would compile the statement again at every batch. */
  readonly #readDataVersion: Database.Statement;
  #inBatch = false;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#readDataVersion = db.prepare("PRAGMA data_version").pluck();
  }

  #prepare(sql: string): Database.Statement {
    let prepared = this.#statements.get(sql);
    if (prepared === undefined) {
      const statement = this.#db.prepare(sql);
      const invalidates =
        ROLLBACK.test(sql) || (!statement.readonly && !DECISION_PATH_WRITE.test(sql))
          ? "always"
          : statement.readonly
            ? "never"
            : "outside-batch";
      prepared = { statement, invalidates };
      // Statements with `IN (?, …)` lists vary in length; the cache stays bounded all the same.
      if (this.#statements.size >= STATEMENT_CACHE_MAX) this.#statements.clear();
      this.#statements.set(sql, prepared);
    }
    if (prepared.invalidates === "always" || (prepared.invalidates === "outside-batch" && !this.#inBatch)) this.#cache.clear();
    return prepared.statement;
  }

  /** The decision cache, inside a group-commit batch only (INVARIANT decision-cache). */
  get decisionCache(): DecisionCache | undefined {
    if (!this.#inBatch) return undefined;
    if (this.#cache.size >= DECISION_CACHE_MAX) this.#cache.clear();
    return this.#cache;
  }

  /** Opens a group-commit batch: BEGIN IMMEDIATE, then forget the cache if another connection committed. */
  beginBatch(): void {
    this.#db.exec("BEGIN IMMEDIATE");
    const version: unknown = this.#readDataVersion.get();
    if (version !== this.#dataVersion) {
      this.#cache.clear();
      this.#dataVersion = version;
    }
    this.#inBatch = true;
  }

  /** Closes a batch with COMMIT, or with ROLLBACK (which empties the cache) when `commit` is false. */
  endBatch(commit: boolean): void {
    this.#inBatch = false;
    if (commit) this.#db.exec("COMMIT");
    else {
      this.#cache.clear();
      if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
    }
  }

  async all(sql: string, params: readonly SqlValue[] = []): Promise<Row[]> {
    return this.#prepare(sql).all(...params) as Row[];
  }

  async get(sql: string, params: readonly SqlValue[] = []): Promise<Row | undefined> {
    return this.#prepare(sql).get(...params) as Row | undefined;
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return this.#prepare(sql).run(...params).changes;
  }

  async insertRowId(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return Number(this.#prepare(sql).run(...params).lastInsertRowid);
  }

  async exec(sql: string): Promise<void> {
    this.#cache.clear();
    this.#db.exec(sql);
  }

  async transaction<T>(fn: (tx: SqlDriver) => Promise<T>): Promise<T> {
    if (this.#db.inTransaction) return fn(this);
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      const result = await fn(this);
      this.#db.exec("COMMIT");
      return result;
    } catch (error) {
      this.#cache.clear();
      if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
      throw error;
    }
  }

  async close(): Promise<void> {
    this.#db.close();
  }
}

/** The public driver: each call waits its turn on the lock (INVARIANT sqlite-serial). */
export class SqliteDriver implements SqlDriver {
  readonly dialect = "sqlite" as const;
  readonly #connection: SqliteConnection;
  readonly #lock = new AsyncLock();
  readonly #group: GroupCommit;

  /** The checkpoint thread, when this connection has one: the flag that stops it, and its end. */
  readonly #checkpointer: { readonly stop: Int32Array; readonly exited: Promise<void> } | undefined;

  constructor(path: string, options: SqliteOptions = {}) {
    const db = new Database(path);
    db.pragma(`page_size = ${NEW_DATABASE_PAGE_SIZE}`);
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${options.durability === "normal" ? "NORMAL" : "FULL"}`);
    db.pragma("foreign_keys = ON");
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? SQLITE_LIMITS.busyTimeoutMs}`);
    db.pragma(`wal_autocheckpoint = ${options.walCheckpointFrames ?? WRITER_CHECKPOINT_FRAMES}`);
    // Past 64 KiB a savepoint's undo pages spill to a temporary file, written page by page with a
    // system call each: for a group-commit batch run again with a savepoint per transaction, most
    // of its system time (decision 0604). In memory they cost a copy.
    if (options.temporaryInMemory === true) db.pragma("temp_store = MEMORY");
    db.defaultSafeIntegers(false);
    this.#connection = new SqliteConnection(db);
    const observations = options.observations;
    this.#group = new GroupCommit(
      (work) => this.#lock.run(() => work(this.#connection)),
      observations === undefined
        ? {}
        : {
            onBatch: (size) => observations.batch(size),
            onFailure: (error) => observeFailure(observations, error),
          },
    );
    this.#checkpointer = options.checkpointThread === true && path !== ":memory:" ? startCheckpointThread(path, db) : undefined;
  }

  /**
   * A transaction committed together with the others of its event-loop turn (group commit), in
   * arrival order; a batch's transactions of one kind may be done by their step (decision 0319).
   */
  groupTransaction<T>(fn: (tx: SqlDriver) => Promise<T>, _order?: string, batchable?: Batchable): Promise<T> {
    return lockedAsContention(this.#group.submit(fn, undefined, batchable));
  }

  /** Transactions answered by a batch step (decision 0319) in a committed batch since the driver was made. */
  get stepped(): number {
    return this.#group.stepped;
  }

  all(sql: string, params?: readonly SqlValue[]): Promise<Row[]> {
    return lockedAsContention(this.#lock.run(() => this.#connection.all(sql, params)));
  }

  get(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined> {
    return lockedAsContention(this.#lock.run(() => this.#connection.get(sql, params)));
  }

  run(sql: string, params?: readonly SqlValue[]): Promise<number> {
    return lockedAsContention(this.#lock.run(() => this.#connection.run(sql, params)));
  }

  insertRowId(sql: string, params?: readonly SqlValue[]): Promise<number> {
    return lockedAsContention(this.#lock.run(() => this.#connection.insertRowId(sql, params)));
  }

  exec(sql: string): Promise<void> {
    return lockedAsContention(this.#lock.run(() => this.#connection.exec(sql)));
  }

  transaction<T>(fn: (tx: SqlDriver) => Promise<T>): Promise<T> {
    return lockedAsContention(this.#lock.run(() => this.#connection.transaction(fn)));
  }

  async close(): Promise<void> {
    const checkpointer = this.#checkpointer;
    if (checkpointer !== undefined) {
      Atomics.store(checkpointer.stop, 0, 1);
      Atomics.notify(checkpointer.stop, 0);
      await checkpointer.exited;
    }
    return this.#lock.run(() => this.#connection.close());
  }
}

export const SQLITE_LIMITS = Object.freeze({
  /**
   * How long a statement waits for a lock another connection holds (another process on the same
   * file, a backup, the checkpoint thread) before SQLite gives up with SQLITE_BUSY: the time a
   * PostgreSQL transaction is tried for (decision 0314), below the SDK's 5 s per attempt (decision 1947).
   */
  busyTimeoutMs: 2_000,
});

/** SQLite's answer when a lock stayed held past the busy timeout: SQLITE_BUSY and its extended codes. */
function isLocked(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}

/**
 * A statement or transaction that met a lock held past the busy timeout: it was rolled back (or
 * never began), so nothing of it was written and the same request may be sent again, which is
 * contention (HTTP 409 with Retry-After), not a failure of the server.
 */
function lockedAsContention<T>(transaction: Promise<T>): Promise<T> {
  const startedAt = performance.now();
  return transaction.catch((error: unknown) => {
    if (!isLocked(error)) throw error;
    const elapsedMs = performance.now() - startedAt;
    const message = `another connection held the database's lock past the busy timeout; nothing was written (${Math.round(elapsedMs)} ms)`;
    throw new ContentionError(error, 1, elapsedMs, message);
  });
}

export interface SqliteOptions {
  /** How long a statement waits for another connection's lock; default SQLITE_LIMITS.busyTimeoutMs. */
  readonly busyTimeoutMs?: number;
  /** Where the size of each group-commit batch is counted (observations.ts). */
  readonly observations?: StoreObservations;
  /** Keep temporary storage in memory (open.ts). */
  readonly temporaryInMemory?: boolean;
  /**
   * Copy the write-ahead log into the database on a thread of its own (checkpoint-thread.ts), so
   * that the automatic checkpoint this connection runs inside a commit finds little left to copy,
   * and runs ten times less often (at THREADED_WRITER_CHECKPOINT_FRAMES). Only from the compiled
   * server; elsewhere, and for an in-memory database, the connection checkpoints alone as before.
   */
  readonly checkpointThread?: boolean;
  /**
   * The log's length at which this connection's commits checkpoint it (`wal_autocheckpoint`;
   * WRITER_CHECKPOINT_FRAMES by default). Another connection of a process whose writer has a
   * checkpoint thread takes THREADED_WRITER_CHECKPOINT_FRAMES, so that its commits leave the
   * copying to that thread and the writer.
   */
  readonly walCheckpointFrames?: number;
  /** `normal`: commits do not wait for the disk (open.ts); default `full`. */
  readonly durability?: "full" | "normal";
}

const CHECKPOINT_THREAD_FILE = fileURLToPath(new URL("./checkpoint-thread.js", import.meta.url));
/** SQLite's automatic checkpoint runs once the log holds this many frames (its default, set explicitly). */
export const WRITER_CHECKPOINT_FRAMES = 1_000;
/**
 * With a checkpoint thread, the writer's own checkpoint, the one that lets the log start over,
 * runs at this many frames instead: ten times fewer of those commits, about 20 MiB of log on
 * 2 KiB pages (40 MiB on the 4 KiB pages of a database created before them).
 */
export const THREADED_WRITER_CHECKPOINT_FRAMES = 10_000;
/** The checkpoint thread runs a pass each time the log has grown by this many frames. */
export const THREAD_CHECKPOINT_STEP = 750;

function startCheckpointThread(path: string, db: Database.Database): { stop: Int32Array; exited: Promise<void> } | undefined {
  if (!existsSync(CHECKPOINT_THREAD_FILE)) return undefined;
  const stop = new SharedArrayBuffer(4);
  const thread = new Worker(CHECKPOINT_THREAD_FILE, {
    workerData: { path, step: THREAD_CHECKPOINT_STEP, stop } satisfies CheckpointThreadData,
  });
  db.pragma(`wal_autocheckpoint = ${THREADED_WRITER_CHECKPOINT_FRAMES}`);
  // A thread that fails leaves the checkpoints to the connection, at SQLite's usual length.
  thread.on("error", () => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_FRAMES}`);
  });
  const exited = new Promise<void>((resolve) => thread.once("exit", () => resolve()));
  return { stop: new Int32Array(stop), exited };
}
