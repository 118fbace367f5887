// A batch of authorize decisions in three steps (decision 0318): read everything once under the
// batch's locks, decide in order in memory, write once per table. The group commit runs it in a
// batch's first try on PostgreSQL and on SQLite (decision 0319); what it leaves undecided runs its
// own transaction afterwards.

import type { StoreBatchStep } from "../../store/store.js";
import { crashPoint } from "../idempotency.js";
import { decideBatch, type BatchInput } from "./decide.js";
import { batchCallers, readBatch, type StepInput } from "./read.js";
import { writeBatch } from "./write.js";

/** The group commit's step for authorize transactions: each input a StepInput. */
export const authorizeBatchStep: StoreBatchStep = async (tx, batchInputs) => {
  const requests = batchInputs as readonly StepInput[];
  const ctx = requests[0]!.ctx;
  // One server's decisions share one context; anything else is decided one at a time.
  if (requests.some((request) => request.ctx !== ctx)) return requests.map(() => undefined);
  const callers = await batchCallers(tx, requests);
  const inputs = callers.filter((input): input is BatchInput => input !== undefined);
  if (inputs.length === 0) return requests.map(() => undefined);
  const now = ctx.now();
  const reads = await readBatch(tx, inputs, ctx.environment, now);
  // A stored answer is replaced only when every claim of the batch sees it expired.
  const expiredUpTo = Math.min(...inputs.map((input) => input.expiredUpTo));
  const decided = decideBatch(inputs, reads, now, expiredUpTo);
  await writeBatch(tx, decided);
  // The crash tests' hook (decision 0605), as in a decision's own transaction.
  if (ctx.faults !== undefined) for (const input of decided.claimed) crashPoint(ctx, "before-commit", input.claim!);
  // Each request's answer, by its place in the batch; one not decided here runs its own function.
  let next = 0;
  return callers.map((input) => {
    if (input === undefined) return undefined;
    const answer = decided.answers[next++];
    return answer === undefined ? undefined : { value: answer };
  });
};
