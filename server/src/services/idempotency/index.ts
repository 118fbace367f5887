// Idempotency: the same key and body replay the first answer; expired answers are pruned.

export { pruneExpiredAnswers, startIdempotencyPruner } from "./idempotency-pruner.js";
export type { IdempotencyPruner, PruneResult } from "./idempotency-pruner.js";
export {
  answerOnce,
  answersExpiredUpTo,
  crashPoint,
  decisionAnswerRow,
  IDEMPOTENCY_HEADER,
  IDEMPOTENCY_LIMITS,
  idempotencyClaim,
  replayStored,
  requestClaim,
  storedAnswer,
} from "./idempotency.js";
export type { ClaimedWork, FreshAnswer } from "./idempotency.js";
