// The small SQL surface a store needs from a database driver; one implementation per database.

import type { DecisionCache } from "./decision-cache.js";

export type Dialect = "sqlite" | "postgres";
export type SqlValue = string | number | null;
export type Row = Record<string, unknown>;

/**
 * A step that does the work of several transactions of one kind at once (decision 0318): it is
 * given each one's input, in batch order, and answers for each its value, or undefined when that
 * one is left to its own function, which then runs after the step in the same transaction. Used
 * only in a batch's optimistic try: when anything fails, the batch is rolled back and every
 * transaction runs its own function, one savepoint each.
 */
export type BatchStep = (connection: SqlDriver, inputs: readonly unknown[]) => Promise<readonly ({ value: unknown } | undefined)[]>;

/** A transaction that a batch step of its `kind` may do together with others of that kind. */
export interface Batchable {
  /** Transactions with one kind (compared by identity) go to one step. */
  readonly kind: unknown;
  readonly step: BatchStep;
  readonly input: unknown;
}

/**
 * Statements use `?` placeholders; the PostgreSQL driver numbers them. Integers come back as
 * JavaScript numbers on both (amounts and times are safe integers, decision 0001).
 */
export interface SqlDriver {
  readonly dialect: Dialect;
  all(sql: string, params?: readonly SqlValue[]): Promise<Row[]>;
  get(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined>;
  /** Runs a statement; answers the number of rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
  /**
   * SQLite only: runs an INSERT into a table keyed by `INTEGER PRIMARY KEY` and answers the new
   * row's key, without the result table a `RETURNING` clause costs. Elsewhere use `RETURNING`.
   */
  insertRowId?(sql: string, params?: readonly SqlValue[]): Promise<number>;
  /** Runs several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * Runs `fn` in one transaction: committed if it resolves, rolled back if it rejects. Inside it,
   * use only the driver it is given. Nested calls join the outer transaction.
   */
  transaction<T>(fn: (tx: SqlDriver) => Promise<T>): Promise<T>;
  /**
   * Like `transaction`, but may share one commit with the transactions submitted in the same
   * event-loop turn (SQLite group commit); it still resolves only after its commit. `fn` may run
   * more than once (when another transaction of its batch fails), so it must do nothing outside
   * the transaction it is given.
   */
  groupTransaction?<T>(fn: (tx: SqlDriver) => Promise<T>, order?: string, batchable?: Batchable): Promise<T>;
  /**
   * Inside a group-commit batch on SQLite: rows the decision path may reuse from earlier batches,
   * kept exactly as long as they are what a read would return (sqlite-driver.ts, INVARIANT
   * decision-cache). Undefined everywhere else.
   */
  readonly decisionCache?: DecisionCache | undefined;
  close(): Promise<void>;
}

/**
 * Awaits every promise, then throws the failure that came first: statements sent together on one
 * connection (pipelined) are all answered before the caller goes on, none of their failures is
 * left unhandled, and the one reported is the cause, not a later statement refused because the
 * transaction had already failed.
 */
export async function settledInOrder(promises: readonly Promise<unknown>[]): Promise<unknown[]> {
  let first: { error: unknown } | undefined;
  const values = await Promise.all(
    promises.map((promise) =>
      promise.catch((error: unknown) => {
        first ??= { error };
        return undefined;
      }),
    ),
  );
  if (first !== undefined) throw first.error;
  return values;
}

/**
 * A transaction that kept failing with a transient conflict (a serialization failure or deadlock
 * on PostgreSQL) until its tries or its time ran out. It was rolled back every time, so nothing it
 * did was written, and the same request may simply be sent again (HTTP 409 `contention`).
 */
export class ContentionError extends Error {
  /** The SQLSTATE of the last failure (`40001`, `40P01`), when it had one. */
  readonly code: string | undefined;
  readonly attempts: number;
  /** From the first try's start to the last failure. */
  readonly elapsedMs: number;

  /** `message`: another account of the same outcome (a transaction refused before it ran, group-commit.ts). */
  constructor(cause: unknown, attempts: number, elapsedMs: number, message?: string) {
    const code = (cause as { code?: unknown } | null)?.code;
    super(
      message ?? `the transaction met contention on each of its ${attempts} tries over ${Math.round(elapsedMs)} ms and was rolled back`,
      { cause },
    );
    this.name = "ContentionError";
    this.code = typeof code === "string" ? code : undefined;
    this.attempts = attempts;
    this.elapsedMs = elapsedMs;
  }
}

/**
 * SQLSTATEs and socket errors that say the database cannot take this request now, not that the
 * request is wrong: a lost or refused connection (class 08, and the socket's own codes), a server
 * shutting down or starting (57P01, 57P02, 57P03), and a write sent to a read-only server (25006:
 * a standby, or a node being promoted). During a failover every write meets one of them.
 */
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  "57P01",
  "57P02",
  "57P03",
  "25006",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/** What node-postgres says, without a code, when a connection ends under a query or waits too long. */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect/;

/**
 * The database could not be reached, or the server reached was not the primary. The request's
 * transaction either never began or was cut off; one cut off during its COMMIT may or may not have
 * been committed, so the same request is sent again with the same Idempotency-Key, which replays it
 * if it was (HTTP 503 `unavailable` with Retry-After).
 */
export class DatabaseUnavailableError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "DatabaseUnavailableError";
  }
}

/** Whether `error`, or an error it was caused by (at most four deep), says the database is unavailable. */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === "object"; depth += 1) {
    if (current instanceof DatabaseUnavailableError) return true;
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === "string" && (code.startsWith("08") || UNAVAILABLE_CODES.has(code))) return true;
    if (typeof message === "string" && UNAVAILABLE_MESSAGES.test(message)) return true;
    current = cause;
  }
  return false;
}
