// Group commit: the transactions submitted in one event-loop turn (or, with a limit on batches in
// flight, while the earlier batches ran) run one after another inside a single transaction, and
// every one of them is answered only after its COMMIT has returned. A failing transaction is
// undone alone: the batch then runs again with a savepoint for each, so a transaction's function
// may run more than once and must do nothing outside the transaction it is given. A commit costs
// one log flush (an fsync on SQLite with `synchronous=FULL`, a WAL flush on PostgreSQL); a batch
// pays it once for all its transactions, and no answer leaves before its record is durable.
// A transient failure (a serialization failure or deadlock on PostgreSQL) sends the transaction
// back to the queue, after a short random wait, a bounded number of times and within a bounded
// time; past either bound it fails as a ContentionError, after which nothing of it was written.
// Each lane holds at most GROUP_COMMIT_LIMITS.queuedMax transactions not yet answered; one more
// is refused at once with GroupCommitFull, a ContentionError (decision 0352).

import { ContentionError, type Batchable, type BatchStep, type SqlDriver } from "../sql/index.js";

/** A connection that opens and closes the batch's transaction itself (BEGIN … COMMIT or ROLLBACK). */
export interface BatchConnection extends SqlDriver {
  beginBatch(): void | Promise<void>;
  endBatch(commit: boolean): void | Promise<void>;
}

/** Runs one batch's work on a connection it holds for the whole batch. */
export type BatchOpener = (work: (connection: BatchConnection) => Promise<void>) => Promise<void>;

/** Which failures are transient, how often a transaction is tried, and how long it waits between tries. */
export interface RetryPolicy {
  readonly retryable: (error: unknown) => boolean;
  /** Tries in all, the first included; the last failure is the caller's. */
  readonly attempts: number;
  /** The wait before try `attempt` (2 for the first retry), in milliseconds. */
  readonly delayMs: (attempt: number) => number;
  /** The longest time from a transaction's submission within which a retry may start, in milliseconds. */
  readonly budgetMs: number;
  /** Told of each retry when it is decided (a count for tests and logs). */
  readonly onRetry?: () => void;
}

/**
 * What follows a failed try: `retryInMs` before the next one, or the failure to hand to the
 * caller: the error itself when it is not transient, a ContentionError when it was but the tries
 * (`attempts` made so far) or the time since `startedAt` (performance.now()) ran out.
 */
export function afterFailure(
  policy: RetryPolicy,
  error: unknown,
  attempts: number,
  startedAt: number,
): { retryInMs: number } | { fail: unknown } {
  if (!policy.retryable(error)) return { fail: error };
  const elapsedMs = performance.now() - startedAt;
  const retryInMs = policy.delayMs(attempts + 1);
  if (attempts >= policy.attempts || elapsedMs + retryInMs >= policy.budgetMs)
    return { fail: new ContentionError(error, attempts, elapsedMs) };
  policy.onRetry?.();
  return { retryInMs };
}

export const GROUP_COMMIT_LIMITS = Object.freeze({
  /**
   * The most transactions a lane holds that are not yet answered: waiting for a batch, in one, or
   * waiting to be tried again. Four full batches (BATCH_MAX). The slowest rate measured here is
   * about 1,200 decisions per second on PostgreSQL (decision 0313), in its one lane (decision
   * 0320): a full server then holds 1,024 transactions, answered within about 0.9 s, inside the
   * SDK's 5 s per attempt. One queued longer would be answered after its caller gave up and sent
   * it again, so the queue would only grow; refused at once, the caller waits `Retry-After` and the server
   * works through what it holds.
   */
  queuedMax: 1_024,
});

/**
 * A transaction refused before it ran because its lane held GROUP_COMMIT_LIMITS.queuedMax
 * transactions not yet answered. Nothing of it was written, so it is a ContentionError: HTTP 409
 * `contention` with `Retry-After`, and the same request may be sent again (decision 0352).
 */
export class GroupCommitFull extends ContentionError {
  readonly queuedMax: number;

  constructor(queuedMax: number) {
    super(
      undefined,
      0,
      0,
      `the server holds ${queuedMax} transactions waiting for their commit, its limit, and refused this one before it ran`,
    );
    this.name = "GroupCommitFull";
    this.queuedMax = queuedMax;
  }
}

export interface GroupCommitOptions {
  /**
   * Queues that form batches independently, a transaction going to the one its `order` hashes to
   * (those without one to the first): transactions with one order never run in two batches at once.
   * Default 1.
   */
  readonly lanes?: number;
  /** The most batches in flight at once in each lane; the transactions submitted meanwhile form the next batch. Default: no limit. */
  readonly concurrency?: number;
  readonly retry?: RetryPolicy;
  /** Run each batch's transactions in ascending `order` (those without one last), not in arrival order. */
  readonly ordered?: boolean;
  /** Told the size of each batch once it has committed (the metrics' histogram). */
  readonly onBatch?: (size: number) => void;
  /** Told each failure a transaction's caller hears, after any retries, a refusal by GroupCommitFull included. */
  readonly onFailure?: (error: unknown) => void;
  /** The most transactions a lane holds not yet answered; default GROUP_COMMIT_LIMITS.queuedMax. */
  readonly queuedMax?: number;
}

interface Pending {
  readonly fn: (tx: SqlDriver) => Promise<unknown>;
  /** Tries so far. */
  attempts: number;
  /** When it was submitted (performance.now()): its retries stop at `RetryPolicy.budgetMs` from here. */
  readonly submittedAt: number;
  readonly order: string | undefined;
  readonly batchable: Batchable | undefined;
  /** The lane it was admitted to, which counts it until it is answered. */
  readonly lane: Lane;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** The most transactions one commit carries; a longer queue is committed in several batches. */
const BATCH_MAX = 256;

/** Ascending `order`, those without one last; the sort is stable, so ties keep their arrival order. */
function byOrder(a: Pending, b: Pending): number {
  if (a.order === b.order) return 0;
  if (a.order === undefined) return 1;
  if (b.order === undefined) return -1;
  return a.order < b.order ? -1 : 1;
}

/** A queue that forms its own batches. */
interface Lane {
  queue: Pending[];
  scheduled: boolean;
  inFlight: number;
  /** Transactions admitted and not yet answered: in `queue`, in a batch in flight, or waiting to be tried again. */
  admitted: number;
}

/** FNV-1a of a string: a lane for each order, the same on every call. */
function laneHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/**
 * The transactions of a batch that one step does together: those of the first kind that has at
 * least two, in batch order; undefined when no kind has two (a step gains nothing over one).
 */
function stepOf(batch: readonly Pending[]): { step: BatchStep; items: Pending[] } | undefined {
  const kinds = new Map<unknown, Pending[]>();
  for (const item of batch) {
    if (item.batchable === undefined) continue;
    const items = kinds.get(item.batchable.kind);
    if (items === undefined) kinds.set(item.batchable.kind, [item]);
    else items.push(item);
  }
  for (const items of kinds.values()) if (items.length >= 2) return { step: items[0]!.batchable!.step, items };
  return undefined;
}

export class GroupCommit {
  readonly #open: BatchOpener;
  readonly #concurrency: number;
  readonly #retry: RetryPolicy | undefined;
  readonly #ordered: boolean;
  readonly #onBatch: ((size: number) => void) | undefined;
  readonly #onFailure: ((error: unknown) => void) | undefined;
  readonly #lanes: Lane[];
  readonly #queuedMax: number;
  #stepped = 0;

  /**
   * `open` holds a connection for a batch: on SQLite the one connection, under its lock (INVARIANT
   * sqlite-serial: no other statement runs between BEGIN and COMMIT of a batch); on PostgreSQL a
   * pooled connection of its own.
   */
  constructor(open: BatchOpener, options: GroupCommitOptions = {}) {
    this.#open = open;
    this.#concurrency = options.concurrency ?? Number.POSITIVE_INFINITY;
    this.#retry = options.retry;
    this.#ordered = options.ordered ?? false;
    this.#onBatch = options.onBatch;
    this.#onFailure = options.onFailure;
    this.#lanes = Array.from({ length: Math.max(1, options.lanes ?? 1) }, () => ({
      queue: [],
      scheduled: false,
      inFlight: 0,
      admitted: 0,
    }));
    this.#queuedMax = options.queuedMax ?? GROUP_COMMIT_LIMITS.queuedMax;
  }

  /** Transactions answered by a batch step (decision 0318) in a committed batch so far. */
  get stepped(): number {
    return this.#stepped;
  }

  /** Runs `fn` in a batch of its lane; refused at once with GroupCommitFull when the lane holds `queuedMax` not yet answered. */
  submit<T>(fn: (tx: SqlDriver) => Promise<T>, order?: string, batchable?: Batchable): Promise<T> {
    const lane = this.#lanes[order === undefined || this.#lanes.length === 1 ? 0 : laneHash(order) % this.#lanes.length]!;
    if (lane.admitted >= this.#queuedMax) {
      const refused = new GroupCommitFull(this.#queuedMax);
      this.#onFailure?.(refused);
      return Promise.reject(refused);
    }
    lane.admitted += 1;
    return new Promise<T>((resolve, reject) => {
      this.#enqueue({
        fn,
        attempts: 0,
        submittedAt: performance.now(),
        order,
        batchable,
        lane,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
    });
  }

  #enqueue(item: Pending): void {
    const lane = item.lane;
    lane.queue.push(item);
    if (!lane.scheduled) {
      lane.scheduled = true;
      setImmediate(() => {
        lane.scheduled = false;
        this.#flush(lane);
      });
    }
  }

  #flush(lane: Lane): void {
    while (lane.queue.length > 0 && lane.inFlight < this.#concurrency) {
      const batch = lane.queue.splice(0, BATCH_MAX);
      if (this.#ordered) batch.sort(byOrder);
      lane.inFlight += 1;
      void this.#open((connection) => this.#commit(connection, batch))
        .catch((error: unknown) => {
          // The connection could not be had: the batch never began.
          for (const item of batch) this.#settle(item, { ok: false, error });
        })
        .finally(() => {
          lane.inFlight -= 1;
          this.#flush(lane);
        });
    }
  }

  /** Answers a transaction, or sends it back to the queue after a transient failure while tries remain. */
  #settle(item: Pending, outcome: Outcome): void {
    if (outcome.ok) {
      item.lane.admitted -= 1;
      item.resolve(outcome.value);
      return;
    }
    const next =
      this.#retry === undefined ? { fail: outcome.error } : afterFailure(this.#retry, outcome.error, item.attempts, item.submittedAt);
    // Still counted while it waits to be tried again: it was admitted, and will be answered.
    if ("retryInMs" in next) setTimeout(() => this.#enqueue(item), next.retryInMs);
    else {
      item.lane.admitted -= 1;
      this.#onFailure?.(next.fail);
      item.reject(next.fail);
    }
  }

  async #commit(connection: BatchConnection, batch: readonly Pending[]): Promise<void> {
    for (const item of batch) item.attempts += 1;
    let outcomes: Outcome[];
    try {
      // Optimistic first: no savepoints, which cost two statements and a copy of every page each
      // transaction touches. A failure undoes the whole batch, which then runs again with one
      // savepoint per transaction, so that only the failing one is undone.
      outcomes = (await this.#run(connection, batch, false)) ?? (await this.#run(connection, batch, true))!;
    } catch (error) {
      // The batch is lost; its callers hear the error, or try again when it is transient.
      for (const item of batch) this.#settle(item, { ok: false, error });
      return;
    }
    this.#onBatch?.(batch.length);
    // Answers leave only now, after the commit.
    for (const [i, item] of batch.entries()) this.#settle(item, outcomes[i]!);
  }

  /**
   * One try of the batch in one transaction, committed: each transaction's outcome. A batch of
   * several tried without savepoints is rolled back on any failure and answers `undefined` (try
   * it again with them); otherwise only a failure of the batch itself (BEGIN or COMMIT, or the one
   * transaction of a batch of one) rolls it back, and throws.
   */
  async #run(db: BatchConnection, batch: readonly Pending[], savepoints: boolean): Promise<Outcome[] | undefined> {
    const outcomes: Outcome[] = [];
    // The optimistic try of several transactions of one kind does them in one step; anything the
    // step leaves runs its own function afterwards, and a failure reruns the batch with savepoints.
    const stepped = savepoints ? undefined : stepOf(batch);
    try {
      await db.beginBatch();
      const done = new Map<Pending, { value: unknown } | undefined>();
      if (stepped !== undefined) {
        const values = await stepped.step(
          db,
          stepped.items.map((item) => item.batchable!.input),
        );
        for (const [i, item] of stepped.items.entries()) done.set(item, values[i]);
      }
      for (const [index, item] of batch.entries()) {
        const value = done.get(item);
        if (value !== undefined) {
          outcomes[index] = { ok: true, value: value.value };
          continue;
        }
        if (!savepoints) {
          outcomes[index] = { ok: true, value: await item.fn(db) };
          continue;
        }
        // `run` reuses prepared statements; these few run for every transaction of the batch.
        await db.run("SAVEPOINT grouped");
        try {
          const value = await item.fn(db);
          await db.run("RELEASE grouped");
          outcomes[index] = { ok: true, value };
        } catch (error) {
          // Only this transaction is undone; the others of the batch stand.
          await db.run("ROLLBACK TO grouped");
          await db.run("RELEASE grouped");
          outcomes[index] = { ok: false, error };
        }
      }
      await db.endBatch(true);
      this.#stepped += [...done.values()].filter((value) => value !== undefined).length;
      return outcomes;
    } catch (error) {
      try {
        await db.endBatch(false);
      } catch {
        // Rolled back either way.
      }
      if (!savepoints && (batch.length > 1 || stepped !== undefined)) return undefined;
      throw error;
    }
  }
}
