// Every v1 endpoint with the roles that may call it: the server enforces this table, the OpenAPI
// document and docs/security.md are read from it, and the role-matrix test walks it.

import type { RequestSchemaName } from "./schemas.js";

export type Role = "admin" | "issuer" | "approver" | "certifier" | "auditor" | "agent";
export const ROLES: readonly Role[] = Object.freeze(["admin", "issuer", "approver", "certifier", "auditor", "agent"]);

export interface Endpoint {
  readonly operationId: string;
  readonly method: "get" | "post";
  /** Relative to the base URL, which ends in `/v1`; `{name}` marks a path parameter. */
  readonly path: string;
  readonly summary: string;
  /** Roles that may call it; `null` means no key is needed. */
  readonly roles: readonly Role[] | null;
  /** Only a human identity may call it (a service key is refused with `human_required`). */
  readonly human: boolean;
  readonly body: RequestSchemaName | null;
  /** Whether a body may be left out entirely (every field optional). */
  readonly bodyOptional: boolean;
  readonly status: number;
  /** The response schema's name; empty for a document that is not described by one. */
  readonly response: string;
  /** The media type of a successful answer. */
  readonly mediaType: "application/json" | "text/plain" | "text/event-stream";
  /** The success status when the request names what already exists (idempotent by name or content); absent: none. */
  readonly existingStatus?: number;
  /** The query parameters it reads, each optional. */
  readonly query: readonly string[];
}

const ALL_BUT_AGENT: readonly Role[] = ["admin", "issuer", "approver", "certifier", "auditor"];

type Optional = "human" | "bodyOptional" | "mediaType" | "query";
function endpoint(e: Omit<Endpoint, Optional> & Partial<Pick<Endpoint, Optional>>): Endpoint {
  return Object.freeze({ human: false, bodyOptional: false, mediaType: "application/json" as const, query: [], ...e });
}

const PAGE = ["limit", "after"] as const;

export const ENDPOINTS: readonly Endpoint[] = Object.freeze([
  endpoint({ operationId: "index", method: "get", path: "/", summary: "This API's index: its version, and links to the OpenAPI document, health, readiness, metrics, the console and the docs (no key needed: it reveals nothing the OpenAPI document does not)", roles: null, body: null, status: 200, response: "ApiIndex" }),
  endpoint({ operationId: "health", method: "get", path: "/health", summary: "Liveness: the process answers", roles: null, body: null, status: 200, response: "Health" }),
  endpoint({ operationId: "ready", method: "get", path: "/ready", summary: "Readiness: the database answers", roles: null, body: null, status: 200, response: "Health" }),
  endpoint({ operationId: "metrics", method: "get", path: "/metrics", summary: "Prometheus metrics in the text exposition format", roles: null, body: null, status: 200, response: "", mediaType: "text/plain" }),
  endpoint({ operationId: "openapi", method: "get", path: "/openapi.json", summary: "This OpenAPI 3.1 document", roles: null, body: null, status: 200, response: "" }),
  endpoint({ operationId: "whoami", method: "get", path: "/whoami", summary: "The calling key: its identity, kind and roles (what the console shows and offers)", roles: [...ALL_BUT_AGENT, "agent"], body: null, status: 200, response: "Key" }),
  endpoint({ operationId: "createAgent", method: "post", path: "/agents", summary: "Register an agent; idempotent by name (201 when created, 200 when it existed)", roles: ["admin", "issuer"], body: "AgentCreateBody", status: 201, response: "Agent", existingStatus: 200 }),
  endpoint({ operationId: "listAgents", method: "get", path: "/agents", summary: "List agents", roles: ALL_BUT_AGENT, body: null, status: 200, response: "AgentList", query: PAGE }),
  endpoint({ operationId: "getAgent", method: "get", path: "/agents/{agent_id}", summary: "One agent (an agent key sees only its own)", roles: [...ALL_BUT_AGENT, "agent"], body: null, status: 200, response: "Agent" }),
  endpoint({ operationId: "getCertification", method: "get", path: "/agents/{agent_id}/certification", summary: "The agent's certification in this environment", roles: [...ALL_BUT_AGENT, "agent"], body: null, status: 200, response: "CertificationStatus" }),
  endpoint({ operationId: "certifyAgent", method: "post", path: "/agents/{agent_id}/certification", summary: "Certify the agent; supersedes its certificate for the same environment", roles: ["admin", "certifier"], human: true, body: "CertificationBody", status: 201, response: "Certificate" }),
  endpoint({ operationId: "listCertificates", method: "get", path: "/certificates", summary: "List certificates (`?agent_id=`, `?environment=`)", roles: ALL_BUT_AGENT, body: null, status: 200, response: "CertificateList", query: ["agent_id", "environment", ...PAGE] }),
  endpoint({ operationId: "revokeCertificate", method: "post", path: "/certificates/{certificate_id}/revoke", summary: "Revoke a certificate by field", roles: ["admin", "certifier"], body: "CertificateRevokeBody", bodyOptional: true, status: 200, response: "Certificate" }),
  endpoint({ operationId: "listGrants", method: "get", path: "/grants", summary: "List grants, oldest first, filtered by `?agent_id=`, `?status=`, `?family_id=`, `?principal_id=`; pages of `?limit=` behind the opaque `?cursor=` each page answers as `next_cursor` (an agent key lists only its own agent's)", roles: [...ALL_BUT_AGENT, "agent"], body: null, status: 200, response: "GrantPage", query: ["agent_id", "status", "family_id", "principal_id", "limit", "cursor"] }),
  endpoint({ operationId: "issueGrant", method: "post", path: "/grants", summary: "Issue a grant", roles: ["admin", "issuer"], body: "GrantIssueBody", status: 201, response: "Grant" }),
  endpoint({ operationId: "previewGrant", method: "post", path: "/grants/preview", summary: "What the grant would decide for a sample action; creates nothing", roles: ["admin", "issuer", "approver", "auditor"], body: "GrantPreviewBody", status: 200, response: "GrantPreview" }),
  endpoint({ operationId: "listPendingGrants", method: "get", path: "/grants/pending", summary: "Grants awaiting approval", roles: ["admin", "issuer", "approver", "auditor"], body: null, status: 200, response: "GrantList", query: PAGE }),
  endpoint({ operationId: "getGrant", method: "get", path: "/grants/{grant_id}", summary: "One grant with its usage (an agent key sees only its own agent's)", roles: [...ALL_BUT_AGENT, "agent"], body: null, status: 200, response: "Grant" }),
  endpoint({ operationId: "approveGrant", method: "post", path: "/grants/{grant_id}/approve", summary: "Approve a pending grant: a human other than the issuer", roles: ["admin", "approver"], human: true, body: "GrantApproveBody", bodyOptional: true, status: 200, response: "Grant" }),
  endpoint({ operationId: "delegateGrant", method: "post", path: "/grants/{grant_id}/delegate", summary: "Delegate a narrower or equal child (an agent key only from its own agent's grant)", roles: ["admin", "issuer", "agent"], body: "GrantDelegateBody", status: 201, response: "Grant" }),
  endpoint({ operationId: "escalateEnforcement", method: "post", path: "/grants/{grant_id}/enforcement", summary: "Make enforcement stricter (escalation only)", roles: ["admin", "issuer"], body: "GrantEnforcementBody", status: 200, response: "Grant" }),
  endpoint({ operationId: "revokeGrant", method: "post", path: "/grants/{grant_id}/revoke", summary: "Revoke the grant and its whole subtree (an agent key only below its own agent's grant)", roles: ["admin", "issuer", "approver", "agent"], body: "GrantRevokeBody", bodyOptional: true, status: 200, response: "GrantRevocation" }),
  endpoint({ operationId: "authorize", method: "post", path: "/authorize", summary: "Decide an action under a grant; HTTP 200 for every outcome, sealed in the ledger (an agent key, its own agent's grants only)", roles: ["agent"], body: "AuthorizeBody", status: 200, response: "Decision" }),
  endpoint({ operationId: "settleDecision", method: "post", path: "/decisions/{ledger_id}/settle", summary: "Capture up to the amount an `allow` held and release the rest (an agent key only its own agent's decisions)", roles: ["admin", "agent"], body: "SettleBody", status: 200, response: "Settlement" }),
  endpoint({ operationId: "approveDecision", method: "post", path: "/decisions/{ledger_id}/approve", summary: "Approve one gated action: single use, bound to its grant, tool and an amount ceiling, expiring", roles: ["admin", "approver"], human: true, body: "DecisionApproveBody", bodyOptional: true, status: 201, response: "DecisionApproval" }),
  endpoint({ operationId: "getDecisionApproval", method: "get", path: "/decisions/{ledger_id}/approval", summary: "The approval of one gated decision, once a human gave it (404 `approval_not_found` until then; an agent key only its own agent's decisions)", roles: ["admin", "approver", "auditor", "agent"], body: null, status: 200, response: "DecisionApproval" }),
  endpoint({ operationId: "abandonDecisionWait", method: "post", path: "/decisions/{ledger_id}/abandoned", summary: "The agent stopped waiting for the approval of its gated decision (its call was refused); the console shows it to the approver. Idempotent: the first report stands (an agent key only its own agent's decisions)", roles: ["admin", "agent"], body: "DecisionAbandonBody", status: 200, response: "DecisionAbandonment" }),
  endpoint({ operationId: "listPendingDecisions", method: "get", path: "/decisions/pending", summary: "Gated decisions waiting for a human, newest first: not approved yet, their grant still active (`?limit=`, `?after=`)", roles: ["admin", "approver"], body: null, status: 200, response: "PendingDecisionList", query: PAGE }),
  endpoint({ operationId: "getGrantLedger", method: "get", path: "/grants/{grant_id}/ledger", summary: "The sealed records of the grant's delegation tree in chain order, with the tree's chain verification (`?limit=`, `?after=` a seq)", roles: ["admin", "issuer", "auditor"], body: null, status: 200, response: "TreeLedger", query: PAGE }),
  endpoint({ operationId: "getDecisionReceipt", method: "get", path: "/decisions/{ledger_id}/receipt", summary: "A self-contained receipt of one decision: the sealed record and its settlements, each with its leaf index and inclusion proof in the signed checkpoint it carries, signed as a whole; verifiable offline (an agent key only its own agent's decisions)", roles: ["admin", "auditor", "agent"], body: null, status: 200, response: "DecisionReceipt" }),
  endpoint({ operationId: "getLedgerCheckpoint", method: "get", path: "/ledger/checkpoint", summary: "The signed tree head of the sealed ledger's Merkle tree (RFC 9162), as a C2SP checkpoint signed note; records sealed since the last one are logged first", roles: ["admin", "auditor"], body: null, status: 200, response: "", mediaType: "text/plain" }),
  endpoint({ operationId: "getLedgerConsistency", method: "get", path: "/ledger/consistency", summary: "The RFC 9162 consistency proof between two sizes of the ledger's Merkle tree (`?first=`, `?second=`, at most the logged size)", roles: ["admin", "auditor"], body: null, status: 200, response: "LedgerConsistency", query: ["first", "second"] }),
  endpoint({ operationId: "verifyLedger", method: "get", path: "/ledger/verify", summary: "Recompute every hash chain of the sealed ledger; answers the first broken link", roles: ["admin", "auditor"], body: null, status: 200, response: "LedgerVerification" }),
  endpoint({ operationId: "declareContract", method: "post", path: "/agents/{agent_id}/contracts", summary: "Declare a behavioural contract of the agent; the calling human is its declarer, named on every trip", roles: ["admin", "issuer", "approver"], human: true, body: "ContractCreateBody", status: 201, response: "Contract" }),
  endpoint({ operationId: "listContracts", method: "get", path: "/agents/{agent_id}/contracts", summary: "The agent's contracts with their live status, rate, n and 95% Wilson interval", roles: ALL_BUT_AGENT, body: null, status: 200, response: "ContractList" }),
  endpoint({ operationId: "createBreaker", method: "post", path: "/agents/{agent_id}/breakers", summary: "Create a circuit breaker on one of the agent's contracts; always created in `observe`", roles: ["admin", "issuer", "approver"], body: "BreakerCreateBody", status: 201, response: "Breaker" }),
  endpoint({ operationId: "breakerCounterfactual", method: "get", path: "/agents/{agent_id}/breakers/counterfactual", summary: "How many times each breaker of the agent would have tripped over the last 90 days of sealed decisions (`?breaker_id=`)", roles: ALL_BUT_AGENT, body: null, status: 200, response: "Counterfactual", query: ["breaker_id"] }),
  endpoint({ operationId: "getBreaker", method: "get", path: "/breakers/{breaker_id}", summary: "One breaker with its trip history", roles: ALL_BUT_AGENT, body: null, status: 200, response: "Breaker" }),
  endpoint({ operationId: "armBreaker", method: "post", path: "/breakers/{breaker_id}/arm", summary: "Arm a breaker: a `basis` and `expecting_trips` equal to the 90-day count (409 otherwise, without the count)", roles: ["admin", "approver"], human: true, body: "BreakerArmBody", status: 200, response: "Breaker" }),
  endpoint({ operationId: "disarmBreaker", method: "post", path: "/breakers/{breaker_id}/disarm", summary: "Return an armed breaker to `observe`", roles: ["admin", "approver"], human: true, body: "BreakerDisarmBody", status: 200, response: "Breaker" }),
  endpoint({ operationId: "listFindings", method: "get", path: "/findings", summary: "Findings raised by armed `notify` breakers (`?agent_id=`)", roles: ALL_BUT_AGENT, body: null, status: 200, response: "FindingList", query: ["agent_id", ...PAGE] }),
  endpoint({ operationId: "pushGrantFamily", method: "post", path: "/grant-families", summary: "Define a grant family: the same content is the same version (200), new content a new version (201), new content under the same version 409", roles: ["admin", "issuer"], body: "GrantFamilyBody", status: 201, response: "GrantFamily", existingStatus: 200 }),
  endpoint({ operationId: "listGrantFamilies", method: "get", path: "/grant-families", summary: "List grant families, the latest version of each (`?name=`)", roles: ALL_BUT_AGENT, body: null, status: 200, response: "GrantFamilyList", query: ["name", ...PAGE] }),
  endpoint({ operationId: "getGrantFamily", method: "get", path: "/grant-families/{family_id}", summary: "One grant family: its latest version, or `?version=N`", roles: ALL_BUT_AGENT, body: null, status: 200, response: "GrantFamily", query: ["version"] }),
  endpoint({ operationId: "instantiateGrantFamily", method: "post", path: "/grant-families/{family_id}/instantiate", summary: "Issue a grant from a family: parameter bounds first, then the issue path with the certification check", roles: ["admin", "issuer"], body: "FamilyInstantiateBody", status: 201, response: "Grant" }),
  endpoint({ operationId: "previewFamilyImpact", method: "post", path: "/grant-families/{family_id}/impact", summary: "Replay the sealed decisions of the family's grants over the last N days under a candidate version; reports the outcomes that would change; creates nothing", roles: ["admin", "issuer", "approver", "auditor"], body: "FamilyImpactBody", status: 200, response: "FamilyImpact" }),
  endpoint({ operationId: "streamEvents", method: "get", path: "/events", summary: "Server-sent events of the types the caller's roles may read (`?types=` a comma-separated list; an agent key only its own agent's), resumable from `Last-Event-ID` or `?after=` a sequence; without either it starts at the newest", roles: [...ALL_BUT_AGENT, "agent"], body: null, status: 200, response: "", mediaType: "text/event-stream", query: ["types", "after"] }),
  endpoint({ operationId: "createWebhook", method: "post", path: "/webhooks", summary: "Subscribe a URL to event types; the signing secret is in this response only", roles: ["admin"], body: "WebhookCreateBody", status: 201, response: "WebhookCreated" }),
  endpoint({ operationId: "listWebhooks", method: "get", path: "/webhooks", summary: "List webhooks (never their secrets)", roles: ["admin"], body: null, status: 200, response: "WebhookList" }),
  endpoint({ operationId: "getWebhook", method: "get", path: "/webhooks/{webhook_id}", summary: "One webhook", roles: ["admin"], body: null, status: 200, response: "Webhook" }),
  endpoint({ operationId: "pauseWebhook", method: "post", path: "/webhooks/{webhook_id}/pause", summary: "Pause deliveries; events keep being queued for it", roles: ["admin"], body: "WebhookActionBody", bodyOptional: true, status: 200, response: "Webhook" }),
  endpoint({ operationId: "resumeWebhook", method: "post", path: "/webhooks/{webhook_id}/resume", summary: "Resume a paused webhook: what was queued meanwhile is delivered", roles: ["admin"], body: "WebhookActionBody", bodyOptional: true, status: 200, response: "Webhook" }),
  endpoint({ operationId: "deleteWebhook", method: "post", path: "/webhooks/{webhook_id}/delete", summary: "Delete a webhook: nothing more is delivered to it", roles: ["admin"], body: "WebhookActionBody", bodyOptional: true, status: 200, response: "Webhook" }),
  endpoint({ operationId: "listWebhookDeliveries", method: "get", path: "/webhooks/{webhook_id}/deliveries", summary: "The webhook's deliveries, oldest first, with their status, attempts and last error (`?limit=`, `?after=`)", roles: ["admin"], body: null, status: 200, response: "WebhookDeliveryList", query: PAGE }),
  endpoint({ operationId: "redeliverWebhookDelivery", method: "post", path: "/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver", summary: "Deliver one delivery again now, with the same `webhook-id`, whatever its status (a dead-lettered one included)", roles: ["admin"], body: "WebhookActionBody", bodyOptional: true, status: 200, response: "WebhookDelivery" }),
  endpoint({ operationId: "listSigningKeys", method: "get", path: "/signing-keys", summary: "The public keys that sign decisions and settlements, as a JWKS: the active key and every retired one", roles: null, body: null, status: 200, response: "SigningKeySet" }),
  endpoint({ operationId: "rotateSigningKey", method: "post", path: "/signing-keys/rotate", summary: "Retire the active signing key named by `retire_kid` (it stays listed; 409 when another is active) and sign with a new one from now on", roles: ["admin"], body: "SigningKeyRotateBody", status: 200, response: "SigningKeySet" }),
  endpoint({ operationId: "createKey", method: "post", path: "/keys", summary: "Create an API key; the secret is in this response only", roles: ["admin"], body: "KeyCreateBody", status: 201, response: "KeyCreated" }),
  endpoint({ operationId: "listKeys", method: "get", path: "/keys", summary: "List keys (never their secrets)", roles: ["admin"], body: null, status: 200, response: "KeyList", query: PAGE }),
  endpoint({ operationId: "revokeKey", method: "post", path: "/keys/{key_id}/revoke", summary: "Revoke a key", roles: ["admin"], body: "KeyRevokeBody", bodyOptional: true, status: 200, response: "Key" }),
]);
