// The better-sqlite3 driver: one connection in WAL mode, every use serialised by an async lock.

import Database from "better-sqlite3";
import type { Row, SqlDriver, SqlValue } from "./driver.js";
import { GroupCommit } from "./group-commit.js";

/**
 * INVARIANT (sqlite-serial): better-sqlite3 is synchronous and has one connection, so a
 * transaction that awaits would let another request's statements run inside it. Every operation
 * therefore takes `lock` first; a transaction holds it from BEGIN to COMMIT.
 */
class AsyncLock {
  #tail: Promise<void> = Promise.resolve();

  run<T>(fn: () => Promise<T> | T): Promise<T> {
    const result = this.#tail.then(fn);
    this.#tail = result.then(() => undefined, () => undefined);
    return result;
  }
}

const STATEMENT_CACHE_MAX = 512;

class SqliteConnection implements SqlDriver {
  readonly dialect = "sqlite" as const;
  readonly #db: Database.Database;
  readonly #statements = new Map<string, Database.Statement>();

  constructor(db: Database.Database) {
    this.#db = db;
  }

  #prepare(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      // Statements with `IN (?, …)` lists vary in length; the cache stays bounded all the same.
      if (this.#statements.size >= STATEMENT_CACHE_MAX) this.#statements.clear();
      this.#statements.set(sql, statement);
    }
    return statement;
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

  async exec(sql: string): Promise<void> {
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

  constructor(path: string) {
    const db = new Database(path);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.pragma("foreign_keys = ON");
    db.pragma("busy_timeout = 5000");
    db.defaultSafeIntegers(false);
    this.#connection = new SqliteConnection(db);
    this.#group = new GroupCommit((work) => this.#lock.run(work), this.#connection);
  }

  /** A transaction committed together with the others of its event-loop turn (group commit). */
  groupTransaction<T>(fn: (tx: SqlDriver) => Promise<T>): Promise<T> {
    return this.#group.submit(fn);
  }

  all(sql: string, params?: readonly SqlValue[]): Promise<Row[]> {
    return this.#lock.run(() => this.#connection.all(sql, params));
  }

  get(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined> {
    return this.#lock.run(() => this.#connection.get(sql, params));
  }

  run(sql: string, params?: readonly SqlValue[]): Promise<number> {
    return this.#lock.run(() => this.#connection.run(sql, params));
  }

  exec(sql: string): Promise<void> {
    return this.#lock.run(() => this.#connection.exec(sql));
  }

  transaction<T>(fn: (tx: SqlDriver) => Promise<T>): Promise<T> {
    return this.#lock.run(() => this.#connection.transaction(fn));
  }

  close(): Promise<void> {
    return this.#lock.run(() => this.#connection.close());
  }
}
