// Group commit for SQLite: the transactions submitted in one event-loop turn run one after another
// inside a single BEGIN IMMEDIATE … COMMIT, each in its own savepoint, and every one of them is
// answered only after that COMMIT has returned. With `synchronous=FULL` a commit costs an fsync; a
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
    const db = this.#connection;
    const outcomes: Outcome[] = [];
    try {
      db.beginBatch();
      if (batch.length === 1) {
        // Alone in its batch, a transaction needs no savepoint: its failure rolls back the batch.
        outcomes.push({ ok: true, value: await batch[0]!.fn(db) });
      } else for (const item of batch) {
        // `run` reuses prepared statements; these few run for every transaction of every batch.
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
    } catch (error) {
      try {
        db.endBatch(false);
      } catch {
        // The batch is lost either way; its callers hear the first error.
      }
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
}
