// A batch of authorize decisions in three steps (decision 0318): read everything once under the
// batch's locks, decide in order in memory, write once per table. The group commit runs it in a
// batch's first try on PostgreSQL; what it leaves undecided runs its own transaction afterwards.

import type { StoreBatchStep } from "../../store/store.js";
import { crashPoint } from "../idempotency.js";
import { decideBatch, type BatchInput } from "./decide.js";
import { readBatch } from "./read.js";
import { writeBatch } from "./write.js";

/** The group commit's step for authorize transactions: each input a BatchInput. */
export const authorizeBatchStep: StoreBatchStep = async (tx, batchInputs) => {
  const inputs = batchInputs as readonly BatchInput[];
  const ctx = inputs[0]!.ctx;
  // One server's decisions share one context; anything else is decided one at a time.
  if (inputs.some((input) => input.ctx !== ctx)) return inputs.map(() => undefined);
  const now = ctx.now();
  const reads = await readBatch(tx, inputs, ctx.environment, now);
  // A stored answer is replaced only when every claim of the batch sees it expired.
  const expiredUpTo = Math.min(...inputs.map((input) => input.expiredUpTo));
  const decided = decideBatch(inputs, reads, now, expiredUpTo);
  await writeBatch(tx, decided);
  // The crash tests' hook (decision 0605), as in a decision's own transaction.
  if (ctx.faults !== undefined) for (const input of decided.claimed) crashPoint(ctx, "before-commit", input.claim!);
  return decided.answers.map((answer) => (answer === undefined ? undefined : { value: answer }));
};
