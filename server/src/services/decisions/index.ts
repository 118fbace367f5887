// Decisions and approvals: authorize (the decision path's read, decide and write steps), approvals, previews and the texts of a decision.

export { authorize, authorizeAction } from "./authorize.js";
export { approvalRecord, chainLinks, engineRequest, engineState } from "./steps/decide.js";
export type { CheckedRequest, RequestNotes } from "./authorize.js";
export { abandonDecisionWait, approveDecision, decisionApproval } from "./decision-approvals.js";
export { grantLedger, listPendingDecisions } from "./decision-reads.js";
export {
  argsCanonicalText,
  decisionAnswerText,
  decisionOutcomeFields,
  decisionState,
  decisionStatement,
  requestText,
} from "./decision-text.js";
export { gateTexts } from "./gate-text.js";
export { previewGrant } from "./preview.js";
export { decideBatch } from "./steps/decide.js";
export type { BatchDecisions, BatchInput } from "./steps/decide.js";
