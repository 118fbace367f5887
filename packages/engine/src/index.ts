// Public face of the engine package: named re-exports only.
export { ABSOLUTE_GATES, decide, chainMode } from "./decide.js";
export { residualAdmits } from "./policy-gate.js";
export { GATES } from "./types.js";
export type {
  ApprovalRecord,
  Attestation,
  CertificateState,
  ChainLink,
  Decision,
  DecisionRequest,
  DecisionState,
  GateName,
  GateResult,
  Hold,
  LiveHold,
  Outcome,
} from "./types.js";
export { REASONS } from "./reasons.js";
export type { ReasonCode, ReasonEntry } from "./reasons.js";
export { liveHeldMinor, remainingMinor, spentMinor } from "./usage.js";
export { policyEnvironment } from "./environment.js";
export type { PartialEnvironment } from "./environment.js";
export { DEFAULT_HOLD_LIFETIME_MS, ENGINE_LIMITS, HOUR_MS, Z_95 } from "./limits.js";
export { contractStatus, statusOf, wilsonInterval } from "./statistics.js";
export type { ContractStatus, Interval } from "./statistics.js";
export { CONTRACT_METRICS, countsTowards, detectTrips, measureContract } from "./contracts.js";
export type { ContractMeasure, ContractMetric, ContractSpec, DecisionRecord, Trip } from "./contracts.js";
