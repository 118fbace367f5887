// The pg driver: a connection pool; `?` placeholders become `$n`; int8 and numeric read as numbers.
// Concurrent authorize transactions share commits (group commit, decision 0311), and a
// serialization failure or deadlock is retried inside the driver, a bounded number of times.

import pg from "pg";
import { DatabaseUnavailableError, isDatabaseUnavailable, type Batchable, type Row, type SqlDriver, type SqlValue } from "../sql/index.js";
import { SEQUENCE_PENDING_SQL } from "../events/index.js";
import { afterFailure, GroupCommit, type BatchConnection, type RetryPolicy } from "./group-commit.js";
import { observeFailure, type StoreObservations } from "../sql/index.js";
import { databaseHosts, HostRing, hostLost, ringClient } from "./postgres-hosts.js";

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/** Amounts and times are safe integers, so reading int8 as a number loses nothing. */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** A statement as sent: its numbered text and, for a named (prepared) statement, its name. */
interface Statement {
  readonly text: string;
  readonly name: string | undefined;
}

/**
 * Statements by their text. Every connection parses and plans a named statement once and then
 * runs it from its plan: planning was most of PostgreSQL's work on the decision path (decision
 * 0313). Only reads and writes are named, and only the first `POSTGRES_LIMITS.namedStatements`
 * texts, so that a connection's statements stay bounded whatever text the process sends.
 */
const statements = new Map<string, Statement>();

function statement(sql: string, named: boolean): Statement {
  const known = statements.get(sql);
  if (known !== undefined) return named || known.name === undefined ? known : { text: known.text, name: undefined };
  const text = numbered(sql);
  const nameable = statements.size < POSTGRES_LIMITS.namedStatements && /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i.test(sql);
  const made: Statement = { text, name: nameable ? `aa_${statements.size}` : undefined };
  if (statements.size < POSTGRES_LIMITS.statementTexts) statements.set(sql, made);
  return named ? made : { text, name: undefined };
}

/**
 * SQLSTATE 0A000 with this text: a named statement's result no longer has the columns it was
 * prepared with (another replica's migration changed a table). Its connection can never run that
 * statement again, so the connection is dropped and the transaction runs again on another.
 */
export function isStalePlan(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === "0A000" && typeof message === "string" && message.includes("cached plan must not change result type");
}

type Queryable = pg.Pool | pg.PoolClient;

/**
 * SQLSTATEs after which a transaction may simply run again: `40001` serialization_failure (the
 * answer of SERIALIZABLE, and of CockroachDB and YugabyteDB for any conflict, RETRY_SERIALIZABLE
 * and the like included) and `40P01` deadlock_detected.
 */
export const RETRYABLE_SQLSTATES: ReadonlySet<string> = new Set(["40001", "40P01"]);

export const POSTGRES_LIMITS = Object.freeze({
  /** Tries of one transaction in all before its last transient failure is the caller's. */
  transactionAttempts: 12,
  /** The longest random wait before a retry; the bound doubles from 2 ms with each try. */
  retryDelayCapMs: 200,
  /**
   * The longest time from a transaction's submission within which it may be tried again: a
   * transient failure after it is the caller's (HTTP 409 `contention`, decision 0314) even with
   * tries left. Twelve tries with their waits take about a second; a deadlock costs
   * `deadlock_timeout` (one second by default) before PostgreSQL reports it. Well below the SDK's
   * five-second timeout, so a client hears the answer rather than its own timeout.
   */
  transactionRetryMs: 2_000,
  /**
   * Group-commit lanes on one replica: each forms its own batches, one in flight at a time on a
   * pooled connection of its own, and a decision's lane follows its key and grant. One since a
   * batch's decisions cost a fixed number of statements whatever its size (decision 0320): one
   * lane gives the largest batches, and so the least work per decision for the database and the
   * server, while the server forms the next batch as the database runs this one.
   */
  groupLanes: 1,
  /** Statement texts given a name, and so prepared once on each connection that runs them. */
  namedStatements: 200,
  /** Statement texts whose numbered form the process keeps; longer lists are numbered at each call. */
  statementTexts: 1_000,
});

export function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (typeof code === "string" && RETRYABLE_SQLSTATES.has(code)) || isStalePlan(error);
}

/** Full jitter: a random wait up to a bound that doubles with each try, so that colliding transactions part. */
export const POSTGRES_RETRY: RetryPolicy = Object.freeze({
  retryable: isRetryable,
  attempts: POSTGRES_LIMITS.transactionAttempts,
  delayMs: (attempt: number) => Math.random() * Math.min(POSTGRES_LIMITS.retryDelayCapMs, 2 ** attempt),
  budgetMs: POSTGRES_LIMITS.transactionRetryMs,
});

/**
 * Connections that met a stale plan (isStalePlan), or an error saying their database is gone or
 * read-only (isDatabaseUnavailable): dropped, not returned to the pool, when released.
 */
const stale = new WeakSet<pg.PoolClient>();

/** Gives a connection back to its pool, or drops it when one of its prepared statements went stale. */
function release(client: pg.PoolClient): void {
  client.release(stale.has(client) ? true : undefined);
}

/**
 * Marks a connection whose statement failed because its database is unavailable: it is dropped
 * when released, and its host is passed over by new connections until the others failed too.
 */
function watch(client: pg.PoolClient, error: unknown): void {
  if (!isDatabaseUnavailable(error)) return;
  stale.add(client);
  hostLost(client);
}

/** How a session takes a pooled connection: to the primary, trying each host in turn (PostgresDriver). */
type Connect = () => Promise<pg.PoolClient>;

/**
 * Holds the connection's writes until the statements sent in this turn are all written: the
 * driver writes each statement on its own, and a decision's flight of six or seven statements
 * then costs one system call instead of one each.
 */
function corked(client: pg.PoolClient): void {
  const socket = (client as unknown as pg.Client).connection?.stream as
    | { cork?: () => void; uncork?: () => void; writableCorked?: number }
    | undefined;
  if (socket?.cork === undefined || socket.uncork === undefined || (socket.writableCorked ?? 0) > 0) return;
  socket.cork();
  process.nextTick(() => socket.uncork!());
}

/** Runs one statement on one pooled connection; marks the connection when its plan went stale. */
async function send(client: pg.PoolClient, sql: string, params: readonly SqlValue[], named: boolean): Promise<pg.QueryResult> {
  const { text, name } = statement(sql, named);
  corked(client);
  try {
    return await client.query({ text, name, values: params as SqlValue[] });
  } catch (error) {
    if (isStalePlan(error)) stale.add(client);
    watch(client, error);
    throw error;
  }
}

class PostgresSession implements SqlDriver {
  readonly dialect = "postgres" as const;
  readonly #client: Queryable;
  readonly #named: boolean;
  readonly #retry: RetryPolicy;
  /** Whether the open transaction wrote an event, which is numbered just before its COMMIT (event-sql.ts). */
  outboxWritten = false;
  readonly #connect: Connect | undefined;

  constructor(client: Queryable, named: boolean, retry: RetryPolicy = POSTGRES_RETRY, connect?: Connect) {
    this.#client = client;
    this.#named = named;
    this.#retry = retry;
    this.#connect = connect;
  }

  async #query(sql: string, params: readonly SqlValue[]): Promise<pg.QueryResult> {
    const client = this.#client;
    if (!(client instanceof pg.Pool)) return send(client, sql, params, this.#named);
    // A statement outside a transaction is a transaction of its own: on a connection of its own,
    // and again after a transient failure like any other (a stale plan drops its connection, so
    // the next try runs on another).
    const startedAt = performance.now();
    for (let attempt = 1; ; attempt += 1) {
      const connection = await (this.#connect ?? (() => client.connect()))();
      let failure: unknown;
      try {
        return await send(connection, sql, params, this.#named);
      } catch (error) {
        failure = error;
      } finally {
        release(connection);
      }
      const next = afterFailure(this.#retry, failure, attempt, startedAt);
      if ("fail" in next) throw next.fail;
      await new Promise((resolve) => setTimeout(resolve, next.retryInMs));
    }
  }

  async all(sql: string, params: readonly SqlValue[] = []): Promise<Row[]> {
    return (await this.#query(sql, params)).rows as Row[];
  }

  async get(sql: string, params: readonly SqlValue[] = []): Promise<Row | undefined> {
    return (await this.all(sql, params))[0];
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return (await this.#query(sql, params)).rowCount ?? 0;
  }

  async exec(sql: string): Promise<void> {
    const client = this.#client;
    if (!(client instanceof pg.Pool)) {
      await client.query(sql).catch((error: unknown) => {
        watch(client, error);
        throw error;
      });
      return;
    }
    const connection = await (this.#connect ?? (() => client.connect()))();
    try {
      await connection.query(sql).catch((error: unknown) => {
        watch(connection, error);
        throw error;
      });
    } finally {
      release(connection);
    }
  }

  async transaction<T>(fn: (tx: SqlDriver) => Promise<T>): Promise<T> {
    return fn(this);
  }

  /** Only a transaction's connection may write events: a statement on the pool would commit one unnumbered. */
  get markOutboxWritten(): (() => void) | undefined {
    if (this.#client instanceof pg.Pool) return undefined;
    return () => {
      this.outboxWritten = true;
    };
  }

  async close(): Promise<void> {}
}

/**
 * COMMIT, after numbering the transaction's events when it wrote any (INVARIANT
 * commit-ordered-sequence): the counter's row lock is the last lock the transaction takes.
 */
async function committedWithOutbox(client: pg.PoolClient, session: PostgresSession, named: boolean): Promise<void> {
  if (session.outboxWritten) {
    session.outboxWritten = false;
    await send(client, SEQUENCE_PENDING_SQL, [], named);
  }
  await committed(client);
}

/** COMMIT, which PostgreSQL answers with ROLLBACK, not an error, when the transaction had failed. */
async function committed(client: pg.PoolClient): Promise<void> {
  const result = await client.query("COMMIT").catch((error: unknown) => {
    watch(client, error);
    throw error;
  });
  if (result.command === "ROLLBACK") throw new Error("the transaction had failed and was rolled back");
}

/** A pooled connection holding one group-commit batch's transaction. */
class PostgresBatch extends PostgresSession implements BatchConnection {
  readonly #client: pg.PoolClient;
  readonly #begin: string;
  readonly #named: boolean;
  #begun: Promise<unknown> | undefined;

  constructor(client: pg.PoolClient, named: boolean, begin: string) {
    super(client, named);
    this.#client = client;
    this.#begin = begin;
    this.#named = named;
  }

  /**
   * BEGIN goes out in one write with the batch's first statements, not a round trip ahead of
   * them (decision 0320): the connection runs them in order, so they run inside the transaction.
   * BEGIN fails only with its connection, and then so does every statement after it; its answer
   * is checked before COMMIT.
   */
  beginBatch(): void {
    this.#begun = undefined;
  }

  /** Sends BEGIN ahead of the batch's first statement, in the same write. */
  #open(): void {
    if (this.#begun !== undefined) return;
    corked(this.#client);
    const begun = this.#client.query(this.#begin).catch((error: unknown) => {
      watch(this.#client, error);
      throw error;
    });
    // Heard by endBatch; a batch that fails first rolls back without it.
    begun.catch(() => undefined);
    this.#begun = begun;
  }

  override all(sql: string, params?: readonly SqlValue[]): Promise<Row[]> {
    this.#open();
    return super.all(sql, params);
  }

  override run(sql: string, params?: readonly SqlValue[]): Promise<number> {
    this.#open();
    return super.run(sql, params);
  }

  override exec(sql: string): Promise<void> {
    this.#open();
    return super.exec(sql);
  }

  async endBatch(commit: boolean): Promise<void> {
    const begun = this.#begun;
    this.#begun = undefined;
    // A batch that sent no statement has no transaction to end.
    if (begun === undefined) return;
    if (commit) {
      await begun;
      await committedWithOutbox(this.#client, this, this.#named);
    } else {
      this.outboxWritten = false;
      await this.#client.query("ROLLBACK");
    }
  }
}

export interface PostgresOptions {
  /** Where batch sizes and retries are counted (observations.ts). */
  readonly observations?: StoreObservations;
  /** The schema every connection uses (search_path); created when absent. */
  readonly schema?: string;
  readonly poolSize?: number;
  /** Group-commit lanes; default POSTGRES_LIMITS.groupLanes. */
  readonly groupLanes?: number;
  /** How long a transaction may be retried; default POSTGRES_LIMITS.transactionRetryMs (tests shorten it). */
  readonly transactionRetryMs?: number;
  /** Reads and writes as named statements (decision 0313); default true. */
  readonly namedStatements?: boolean;
  /**
   * The isolation level every transaction begins with (`BEGIN ISOLATION LEVEL …`); absent: the
   * server's default. Set by the engine profile (engine.ts, decision 0310).
   */
  readonly isolation?: "serializable";
}

/** The connection pool: its clients follow the primary through the host ring, and pipeline their statements. */
function openPool(url: string, ring: HostRing, options: PostgresOptions): pg.Pool {
  const pool = new pg.Pool({
    Client: ringClient(ring),
    connectionString: url,
    max: options.poolSize ?? 10,
    types,
    // Which process holds a connection, in pg_stat_activity: an operator's first question about
    // several replicas, and how the benchmark finds the database's work for one server.
    application_name: `agent-authority pid ${process.pid}`,
    // Statements sent without waiting for the one before share a round trip (the decision
    // path's reads and writes, decision 0311); each is still answered, or fails, on its own.
    pipeline: true,
    ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` }),
  });
  // An idle client that loses its connection must not crash the process; the next query reports it.
  pool.on("error", () => undefined);
  // PostgreSQL 14 and later compress long values (a sealed record is about 2 KB) with lz4 when
  // built with it, several times cheaper than the default pglz, which was the largest single
  // cost of a decision batch (decision 0320). Only a setting of this connection; refused by a
  // server without lz4, and then left at its default. Not sent for the other engine profiles
  // (those that set an isolation level), which have no such setting.
  if (options.isolation === undefined)
    pool.on("connect", (client) => {
      client.query("SET default_toast_compression = lz4").catch(() => undefined);
    });
  return pool;
}

export class PostgresDriver implements SqlDriver {
  readonly dialect = "postgres" as const;
  readonly #pool: pg.Pool;
  readonly #session: PostgresSession;
  readonly #group: GroupCommit;
  readonly #retry: RetryPolicy;
  readonly #named: boolean;
  readonly #begin: string;
  readonly #ring: HostRing;
  #retries = 0;
  readonly schema: string | undefined;

  constructor(url: string, options: PostgresOptions = {}) {
    if (options.schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(options.schema)) {
      throw new Error(`invalid schema name \`${options.schema}\``);
    }
    this.schema = options.schema;
    this.#retry = {
      ...POSTGRES_RETRY,
      ...(options.transactionRetryMs === undefined ? {} : { budgetMs: options.transactionRetryMs }),
      onRetry: () => {
        this.#retries += 1;
        options.observations?.error("retried");
      },
    };
    this.#named = options.namedStatements ?? true;
    this.#begin = options.isolation === undefined ? "BEGIN" : `BEGIN ISOLATION LEVEL ${options.isolation.toUpperCase()}`;
    // Several hosts, or target_session_attrs: connections go to the primary, and move on with it.
    this.#ring = new HostRing(databaseHosts(url));
    this.#pool = openPool(url, this.#ring, options);
    this.#session = new PostgresSession(this.#pool, this.#named, this.#retry, () => this.#connect());
    this.#group = new GroupCommit(
      async (work) => {
        const client = await this.#connect();
        try {
          await work(new PostgresBatch(client, this.#named, this.#begin));
        } finally {
          release(client);
        }
      },
      {
        lanes: options.groupLanes ?? POSTGRES_LIMITS.groupLanes,
        concurrency: 1,
        retry: this.#retry,
        ordered: true,
        ...(options.observations === undefined
          ? {}
          : {
              onBatch: (size: number) => options.observations!.batch(size),
              onFailure: (error: unknown) => observeFailure(options.observations, error),
            }),
      },
    );
  }

  /** Transactions answered by a batch step (decision 0318) in a committed batch since the driver was made. */
  get stepped(): number {
    return this.#group.stepped;
  }

  /** Transactions and statements run again after a transient failure since the driver was made. */
  get retries(): number {
    return this.#retries;
  }

  all(sql: string, params?: readonly SqlValue[]): Promise<Row[]> {
    return this.#session.all(sql, params);
  }

  get(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined> {
    return this.#session.get(sql, params);
  }

  run(sql: string, params?: readonly SqlValue[]): Promise<number> {
    return this.#session.run(sql, params);
  }

  exec(sql: string): Promise<void> {
    return this.#session.exec(sql);
  }

  /**
   * One transaction on a pooled connection. After a serialization failure or deadlock it runs
   * again, after a random wait, up to POSTGRES_LIMITS.transactionAttempts tries in all and within
   * POSTGRES_LIMITS.transactionRetryMs; so `fn` may run more than once and must do nothing outside
   * the transaction it is given. Past either bound it fails with a ContentionError.
   */
  async transaction<T>(fn: (tx: SqlDriver) => Promise<T>): Promise<T> {
    const startedAt = performance.now();
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.#once(fn);
      } catch (error) {
        const next = afterFailure(this.#retry, error, attempt, startedAt);
        if ("fail" in next) throw next.fail;
        await new Promise((resolve) => setTimeout(resolve, next.retryInMs));
      }
    }
  }

  /**
   * A transaction committed together with the others submitted while the batches before it ran
   * (group commit): one round trip for BEGIN and one for COMMIT, and one WAL flush, for the batch.
   */
  groupTransaction<T>(fn: (tx: SqlDriver) => Promise<T>, order?: string, batchable?: Batchable): Promise<T> {
    return this.#group.submit(fn, order, batchable);
  }

  /**
   * A pooled connection to the primary: each host is tried in turn (a refused connection, or one
   * that is read-only, moves on to the next); when none is, the database is unavailable.
   */
  async #connect(): Promise<pg.PoolClient> {
    let last: unknown;
    for (let tried = 0; tried < this.#ring.hosts.urls.length; tried += 1) {
      try {
        return await this.#pool.connect();
      } catch (error) {
        if (!isDatabaseUnavailable(error)) throw error;
        last = error;
      }
    }
    const hosts = this.#ring.hosts.urls.length;
    const why = last instanceof Error ? `: ${last.message}` : "";
    throw new DatabaseUnavailableError(
      `${hosts === 1 ? "the database does not accept connections" : `none of the ${hosts} database hosts is a primary that accepts connections`}${why}`,
      last,
    );
  }

  async #once<T>(fn: (tx: SqlDriver) => Promise<T>): Promise<T> {
    const client = await this.#connect();
    try {
      await client.query(this.#begin).catch((error: unknown) => {
        watch(client, error);
        throw error;
      });
      const session = new PostgresSession(client, this.#named);
      const result = await fn(session);
      await committedWithOutbox(client, session, this.#named);
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      release(client);
    }
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}
