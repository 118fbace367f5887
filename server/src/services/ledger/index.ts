// The ledger's proofs and settlements: checkpoints, consistency proofs, receipts, the witness's check, and settling a decision.

export { CheckpointRefused, databaseKeys, verifyCheckpointAgainst } from "./checkpoint-witness.js";
export type { CheckpointBreak, CheckpointVerification } from "./checkpoint-witness.js";
export {
  decisionReceipt,
  LEDGER_LOG_LIMITS,
  ledgerCheckpoint,
  ledgerConsistency,
  ledgerOrigin,
  logPending,
  startLedgerLogger,
  treeHead,
} from "./checkpoints.js";
export type { LedgerLogger } from "./checkpoints.js";
export { lockRecordTree, settleDecision, visibleDecision } from "./settle.js";
