// Group commit for SQLite: the transactions submitted in one event-loop turn run one after another
// inside a single BEGIN IMMEDIATE … COMMIT, and every one of them is answered only after that
// COMMIT has returned. A failing transaction is undone alone: the batch then runs again with a
// savepoint for each, so a transaction's function may run more than once and must do nothing
// outside the transaction it is given. With `synchronous=FULL` a commit costs an fsync; a
// batch pays it once for all its transactions, and no answer leaves before its record is on disk.

import type { SqlDriver } from "./driver.js";

/** A connection that opens and closes the batch's transaction itself (BEGIN IMMEDIATE … COMMIT or ROLLBACK). */
export interface BatchConnection extends SqlDriver {
  beginBatch(): void;
  endBatch(commit: boolean): void;
}

interface Pending {
  readonly fn: (tx: SqlDriver) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** The most transactions one commit carries; a longer queue is committed in several batches. */
const BATCH_MAX = 256;

export class GroupCommit {
  readonly #runLocked: (work: () => Promise<void>) => Promise<void>;
  readonly #connection: BatchConnection;
  #queue: Pending[] = [];
  #scheduled = false;

  /**
   * `runLocked` runs work while holding the connection's lock (INVARIANT sqlite-serial): no other
   * statement runs between BEGIN and COMMIT of a batch.
   */
  constructor(runLocked: (work: () => Promise<void>) => Promise<void>, connection: BatchConnection) {
    this.#runLocked = runLocked;
    this.#connection = connection;
  }

  submit<T>(fn: (tx: SqlDriver) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#scheduled = false;
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, BATCH_MAX);
      void this.#runLocked(() => this.#commit(batch));
    }
  }

  async #commit(batch: readonly Pending[]): Promise<void> {
    let outcomes: Outcome[];
    try {
      // Optimistic first: no savepoints, which cost two statements and a copy of every page each
      // transaction touches. A failure undoes the whole batch, which then runs again with one
      // savepoint per transaction, so that only the failing one is undone.
      outcomes = (await this.#run(batch, false)) ?? (await this.#run(batch, true))!;
    } catch (error) {
      // The batch is lost; its callers hear the error.
      for (const item of batch) item.reject(error);
      return;
    }
    // Answers leave only now, after the commit.
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }

  /**
   * One try of the batch in one transaction, committed: each transaction's outcome. A batch of
   * several tried without savepoints is rolled back on any failure and answers `undefined` (try
   * it again with them); otherwise only a failure of the batch itself (BEGIN or COMMIT, or the one
   * transaction of a batch of one) rolls it back, and throws.
   */
  async #run(batch: readonly Pending[], savepoints: boolean): Promise<Outcome[] | undefined> {
    const db = this.#connection;
    const outcomes: Outcome[] = [];
    try {
      db.beginBatch();
      for (const item of batch) {
        if (!savepoints) {
          outcomes.push({ ok: true, value: await item.fn(db) });
          continue;
        }
        // `run` reuses prepared statements; these few run for every transaction of the batch.
        await db.run("SAVEPOINT grouped");
        try {
          const value = await item.fn(db);
          await db.run("RELEASE grouped");
          outcomes.push({ ok: true, value });
        } catch (error) {
          // Only this transaction is undone; the others of the batch stand.
          await db.run("ROLLBACK TO grouped");
          await db.run("RELEASE grouped");
          outcomes.push({ ok: false, error });
        }
      }
      db.endBatch(true);
      return outcomes;
    } catch (error) {
      try {
        db.endBatch(false);
      } catch {
        // Rolled back either way.
      }
      if (!savepoints && batch.length > 1) return undefined;
      throw error;
    }
  }
}
