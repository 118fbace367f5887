// What the store counts for the metrics (decision 0921): the size of every group-commit batch,
// transactions run again after a transient failure, and database errors that reached a caller.
// Plain numbers, added to without allocation; a scrape reads them, and the authorize worker hands
// its own to the main thread as deltas.

import { ContentionError } from "./driver.js";

/** Upper bounds of the batch-size histogram; the largest is the group commit's batch limit (256). */
export const BATCH_SIZE_BUCKETS = Object.freeze([1, 2, 4, 8, 16, 32, 64, 128, 256] as const);

/** Why a database error is counted: run again (`retried`), given up on as contention (HTTP 409), or failed otherwise. */
export const DATABASE_ERROR_KINDS = Object.freeze(["retried", "contention", "failed"] as const);
export type DatabaseErrorKind = (typeof DATABASE_ERROR_KINDS)[number];

/** The counts as they cross a thread: plain arrays in the order of the constants above. */
export interface ObservationDelta {
  readonly batchBuckets: readonly number[];
  readonly batchSum: number;
  readonly batchCount: number;
  readonly errors: readonly number[];
}

export class StoreObservations {
  /** Batches per bucket of BATCH_SIZE_BUCKETS (not cumulative; a scrape adds them up). */
  readonly batchBuckets: number[] = BATCH_SIZE_BUCKETS.map(() => 0);
  batchSum = 0;
  batchCount = 0;
  /** Errors per kind, in the order of DATABASE_ERROR_KINDS. */
  readonly errors: number[] = DATABASE_ERROR_KINDS.map(() => 0);

  /** One committed batch of `size` transactions. */
  batch(size: number): void {
    let i = 0;
    while (i < BATCH_SIZE_BUCKETS.length - 1 && size > BATCH_SIZE_BUCKETS[i]!) i += 1;
    this.batchBuckets[i]! += 1;
    this.batchSum += size;
    this.batchCount += 1;
  }

  error(kind: DatabaseErrorKind): void {
    this.errors[DATABASE_ERROR_KINDS.indexOf(kind)]! += 1;
  }

  /** Whether anything was counted since the last `take`. */
  get touched(): boolean {
    return this.batchCount > 0 || this.errors.some((n) => n > 0);
  }

  /** The counts so far, which start again from zero (for a thread that reports to another). */
  take(): ObservationDelta {
    const delta = { batchBuckets: [...this.batchBuckets], batchSum: this.batchSum, batchCount: this.batchCount, errors: [...this.errors] };
    this.batchBuckets.fill(0);
    this.errors.fill(0);
    this.batchSum = 0;
    this.batchCount = 0;
    return delta;
  }

  /** Adds another thread's counts. */
  add(delta: ObservationDelta): void {
    delta.batchBuckets.forEach((n, i) => {
      if (i < this.batchBuckets.length) this.batchBuckets[i]! += n;
    });
    delta.errors.forEach((n, i) => {
      if (i < this.errors.length) this.errors[i]! += n;
    });
    this.batchSum += delta.batchSum;
    this.batchCount += delta.batchCount;
  }
}

/** Counts a failure that reached a caller: contention given up on, or an error of the database itself; anything else is not the database's. */
export function observeFailure(observations: StoreObservations | undefined, error: unknown): void {
  if (observations === undefined) return;
  if (error instanceof ContentionError) observations.error("contention");
  else if (isDatabaseError(error)) observations.error("failed");
}

/** Whether `error` came from the database itself: a SQLite error, or a PostgreSQL error with a SQLSTATE. */
export function isDatabaseError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === "SqliteError") return true;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && typeof severity === "string";
}
