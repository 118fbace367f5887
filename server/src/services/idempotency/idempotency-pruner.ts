// The pruner of expired idempotency answers: a timer of the server deletes them in short bounded
// passes, so the table holds about one retention period of answers (decision 0606).

import type { Logger } from "../../log.js";
import type { Store } from "../../store/core/index.js";
import { answersExpiredUpTo, IDEMPOTENCY_LIMITS } from "./idempotency.js";

/** What one pass did: answers deleted, and whether it stopped at its limit with more left. */
export interface PruneResult {
  readonly deleted: number;
  readonly backlog: boolean;
}

/** One pass: deletes expired answers in batches, at most `pruneBatchesPerPassMax` of them. */
export async function pruneExpiredAnswers(store: Store, now: number): Promise<PruneResult> {
  const expiredUpTo = answersExpiredUpTo(now);
  let deleted = 0;
  for (let batch = 0; batch < IDEMPOTENCY_LIMITS.pruneBatchesPerPassMax; batch += 1) {
    const removed = await store.decisionPath().pruneIdempotency(expiredUpTo, IDEMPOTENCY_LIMITS.pruneBatchRowsMax);
    deleted += removed;
    if (removed < IDEMPOTENCY_LIMITS.pruneBatchRowsMax) return { deleted, backlog: false };
  }
  return { deleted, backlog: true };
}

export interface IdempotencyPruner {
  /** Stops the timer and waits for a pass under way. */
  stop(): Promise<void>;
}

/** Runs a pass at once, then every `pruneIntervalMs` (sooner while a backlog remains); a failed pass is logged and tried again. */
export function startIdempotencyPruner(store: Store, now: () => number, logger: Logger): IdempotencyPruner {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const pass = async (): Promise<void> => {
    let delayMs: number = IDEMPOTENCY_LIMITS.pruneIntervalMs;
    try {
      const result = await pruneExpiredAnswers(store, now());
      if (result.backlog) delayMs = IDEMPOTENCY_LIMITS.pruneBacklogIntervalMs;
      if (result.deleted > 0) logger.log("debug", "expired idempotency answers pruned", { deleted: result.deleted });
    } catch (error) {
      logger.log("error", "pruning idempotency answers failed", { error: error instanceof Error ? error.message : String(error) });
    }
    if (!stopped) schedule(delayMs);
  };
  const schedule = (delayMs: number): void => {
    timer = setTimeout(() => {
      running = pass();
    }, delayMs);
    // The pruner never keeps the process alive on its own.
    timer.unref();
  };
  running = pass();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
