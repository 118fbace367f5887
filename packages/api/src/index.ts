// Public face of this package: named re-exports only.
export { API_LIMITS } from "./limits.js";
export {
  ID_PREFIXES,
  idPattern,
  enforcementModeSchema,
  grantStatusSchema,
  roleSchema,
  grantIssueBodySchema,
  sampleActionSchema,
  grantPreviewBodySchema,
  grantApproveBodySchema,
  grantDelegateBodySchema,
  grantEnforcementBodySchema,
  grantRevokeBodySchema,
  agentCreateBodySchema,
  certificationBodySchema,
  certificateRevokeBodySchema,
  keyCreateBodySchema,
  keyRevokeBodySchema,
  agentSchema,
  agentListSchema,
  grantSchema,
  grantListSchema,
  grantPageSchema,
  grantRevocationSchema,
  gateResultSchema,
  grantPreviewSchema,
  certificateSchema,
  certificateListSchema,
  certificationStatusSchema,
  keySchema,
  keyCreatedSchema,
  keyListSchema,
  spanSchema,
  diagnosticSchema,
  familyDiagnosticSchema,
  problemSchema,
  healthSchema,
  apiIndexSchema,
  requestSchemas,
  allSchemas,
  grantFamilyBodySchema,
  type RequestSchemaName,
} from "./schemas.js";
export {
  authorizeBodySchema, settleBodySchema, decisionApproveBodySchema, decisionAbandonBodySchema, decisionAbandonmentSchema, decisionSchema, settlementSchema, decisionApprovalSchema,
  ledgerVerificationSchema,
} from "./decision-schemas.js";
export { pendingDecisionSchema, pendingDecisionListSchema, ledgerRecordSchema, treeLedgerSchema } from "./decision-read-schemas.js";
export {
  contractCreateBodySchema, breakerCreateBodySchema, breakerArmBodySchema, breakerDisarmBodySchema, contractSchema, contractListSchema,
  tripSchema, breakerSchema, counterfactualSchema, findingListSchema,
} from "./breaker-schemas.js";
export {
  FAMILY_LIMITS, GATE_NAMES, OUTCOMES, PARAMETER_NAME_PATTERN, RFC3339_PATTERN, familyInstantiateBodySchema, familyImpactBodySchema,
  grantFamilySchema, grantFamilyListSchema, familyImpactSchema, type GrantFamilyBodySchema,
} from "./family-schemas.js";
export { CONTENTION_RETRY_AFTER_SECONDS, UNAVAILABLE_RETRY_AFTER_SECONDS, PROBLEM_CODES, problemTypeUri, type ProblemCode } from "./problems.js";
export { findUnstorableText, textFaultMessage, unstorableCharacter, type TextFault } from "./text.js";
export {
  EVENT_TYPES, EVENT_TYPE_NAMES, WEBHOOK_LIMITS, eventSchema, eventSchemaName, eventSchemas, webhookCreateBodySchema, webhookActionBodySchema,
  webhookSchema, webhookCreatedSchema, webhookListSchema, webhookDeliverySchema, webhookDeliveryListSchema, type EventType,
} from "./event-schemas.js";
export { decisionReceiptSchema, ledgerConsistencySchema, nonceField, signatureSchema, signingKeySchema, signingKeySetSchema, signingKeyRotateBodySchema } from "./signing-schemas.js";
export { KEY_EMAIL_PATTERN, KEY_IDENTITY_PATTERN, keyIdentityFault } from "./key-identity.js";
export { ENDPOINTS, ROLES, type Endpoint, type Role } from "./endpoints.js";
export { buildOpenApiDocument } from "./openapi.js";
export type * from "./types.js";
