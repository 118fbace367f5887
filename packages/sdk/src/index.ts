// Public face of this package: named re-exports only.
export { AuthorityClient, CLIENT_DEFAULTS, type AuthorityClientOptions } from "./client.js";
export type { GrantListQuery, ListQuery, Verbs } from "./resources.js";
export type { AuthorizeOptions, AuthorizeResult, PlatformDecision, UnavailableDecision, Unavailability } from "./authorize.js";
export type { GuardClient, GuardedTool, GuardRequest, GuardResult, ToolRun } from "./guard.js";
export {
  AuthorityError,
  AuthorityProblemError,
  AuthorityUnavailableError,
  type ProblemDetails,
  type UnavailableCause,
} from "./errors.js";
export type { CallOptions, KeyHeader, RequestEvent } from "./transport.js";
export type * from "./generated/types.js";
export type * from "./provisional.js";
export {
  ANSWER_BATCH_HEADER,
  answerBatchText,
  newNonce,
  signedStatement,
  statementLeaf,
  SigningKeyring,
  verifyDecision,
  verifySettlement,
  VERIFY_LIMITS,
  type SigningKeysOption,
  type VerificationFailure,
  type VerificationReason,
} from "./verify.js";
export type { DecisionCheck } from "./authorize.js";
export {
  refusalOf,
  undescribedRefusal,
  toolGovernor,
  TOOL_CALL_DEFAULTS,
  TOOL_CALL_LIMITS,
  type GovernedCall,
  type GovernorClient,
  type ToolActionOptions,
  type ToolDecisionEvent,
  type ToolGovernanceOptions,
  type ToolGovernor,
  type ToolRefusal,
} from "./tool-call.js";
export {
  canonicalManifest,
  compareText,
  manifestHash,
  MANIFEST_DEFINITIONS_VERSION,
  MANIFEST_VERSION,
  toolDefinition,
  type ManifestTool,
  type ToolDefinition,
  type ToolKind,
} from "./manifest-hash.js";
export { CANONICAL_DEPTH_MAX, canonicalJson } from "./canonical-json.js";
export {
  consistencyProof,
  consistencyRanges,
  emptyRoot,
  foldParts,
  inclusionProof,
  inclusionRanges,
  leafHash,
  MERKLE_LIMITS,
  MerkleFrontier,
  nodeHash,
  perfectParts,
  rangeHash,
  splitPoint,
  treeHash,
  treeWithPaths,
  verifyConsistency,
  verifyInclusion,
  type CompletedNode,
  type LeafRange,
} from "./merkle.js";
export {
  CHECKPOINT_LIMITS,
  checkpointText,
  isCheckpointName,
  noteKeyId,
  parseCheckpointText,
  signedNote,
  verifyCheckpoint,
  type CheckpointBody,
  type CheckpointCheck,
  type CheckpointFault,
  type CheckpointKey,
  type VerifiedCheckpoint,
} from "./checkpoint.js";
export {
  RECEIPT_FORMAT,
  RECEIPT_LIMITS,
  RECEIPT_STATEMENT_TYPE,
  receiptDigest,
  recordLeaf,
  sealedHash,
  verifyReceipt,
  type Receipt,
  type ReceiptEntry,
  type ReceiptFailure,
  type VerifiedReceipt,
} from "./receipt.js";
