// JSON Schemas (draft 2020-12) of every v1 request body and response: the server validates requests
// against these constants and the OpenAPI document is built from them, so the two cannot drift.
// Request schemas refuse unknown fields; response schemas allow them (Versioning rule 2: a client
// that ignores unknown fields keeps working while v1 grows).

import { API_LIMITS } from "./limits.js";
import { WEBHOOK_SCHEMAS, webhookActionBodySchema, webhookCreateBodySchema } from "./event-schemas.js";
import { KEY_EMAIL_PATTERN, KEY_IDENTITY_PATTERN } from "./key-identity.js";
import {
  decisionReceiptSchema,
  ledgerConsistencySchema,
  signatureSchema,
  signingKeyRotateBodySchema,
  signingKeySchema,
  signingKeySetSchema,
} from "./signing-schemas.js";
import {
  authorizeBodySchema,
  decisionAbandonBodySchema,
  decisionAbandonmentSchema,
  decisionApprovalSchema,
  decisionApproveBodySchema,
  decisionSchema,
  ledgerVerificationSchema,
  settleBodySchema,
  settlementSchema,
} from "./decision-schemas.js";
import { ledgerRecordSchema, pendingDecisionListSchema, pendingDecisionSchema, treeLedgerSchema } from "./decision-read-schemas.js";
import {
  breakerArmBodySchema,
  breakerCreateBodySchema,
  breakerDisarmBodySchema,
  breakerSchema,
  contractCreateBodySchema,
  contractListSchema,
  contractSchema,
  counterfactualSchema,
  findingListSchema,
  tripSchema,
} from "./breaker-schemas.js";
import {
  familyBodySchemaOf,
  familyImpactBodySchema,
  familyImpactSchema,
  familyInstantiateBodySchema,
  grantFamilyListSchema,
  grantFamilySchema,
  type JsonSchema,
} from "./family-schemas.js";

/** The alphabet of generated ids: lower-case Crockford base32, 26 characters (time first, sortable). */
const idBody = "[0-9a-hjkmnp-tv-z]{26}";

/** The prefix of each kind of id. */
export const ID_PREFIXES = Object.freeze({
  agent: "agt",
  grant: "grt",
  certificate: "crt",
  key: "key",
  ledger: "led",
  contract: "ctr",
  breaker: "brk",
  family: "fam",
  webhook: "whk",
  delivery: "whd",
  event: "evn",
});

export function idPattern(prefix: string): string {
  return `^${prefix}_${idBody}$`;
}

const agentId = { type: "string", pattern: idPattern(ID_PREFIXES.agent), description: "An agent id, `agt_…`." } as const;
const grantId = { type: "string", pattern: idPattern(ID_PREFIXES.grant), description: "A grant id, `grt_…`." } as const;
const certificateId = { type: "string", pattern: idPattern(ID_PREFIXES.certificate) } as const;
const keyId = { type: "string", pattern: idPattern(ID_PREFIXES.key) } as const;
const timestamp = { type: "string", description: "An RFC 3339 UTC time with milliseconds." } as const;
const nullableTimestamp = { type: ["string", "null"] } as const;
const nullableString = { type: ["string", "null"] } as const;
const text = { type: "string", maxLength: API_LIMITS.textCharsMax } as const;
const minorAmount = { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;
const currency = { type: "string", pattern: "^[A-Z]{3}$", description: "ISO 4217 currency code, e.g. `EUR`." } as const;
const toolName = { type: "string", minLength: 1, maxLength: API_LIMITS.toolNameCharsMax, pattern: "^[A-Za-z0-9_.:*-]+$" } as const;

export const enforcementModeSchema = {
  type: "string",
  enum: ["observe", "enforce"],
  description: "Least strict first: `observe` never refuses and records what `enforce` would have said.",
} as const;

export const grantStatusSchema = { type: "string", enum: ["pending_approval", "active", "revoked", "expired"] } as const;

export const roleSchema = {
  type: "string",
  enum: ["admin", "issuer", "approver", "certifier", "auditor", "agent", "enforcer"],
} as const;

const scope = {
  type: "object",
  additionalProperties: false,
  required: ["tool"],
  properties: {
    tool: {
      type: "array",
      minItems: 1,
      maxItems: API_LIMITS.scopeToolsMax,
      items: toolName,
      description: "Tool names; an entry `ns.*` covers every tool whose name starts with `ns.`.",
    },
  },
} as const;

const conditions = {
  type: "object",
  additionalProperties: false,
  properties: { clean_context: { type: "boolean", description: "The action must come from a clean context." } },
} as const;

const policy = {
  type: "string",
  maxLength: API_LIMITS.policyCharsMax,
  description: "A policy expression (docs/policy-language.md).",
} as const;

/** The fields a grant is issued with (the specification's table plus the enforcement mode and approval request). */
const grantTermsProperties = {
  agent_id: agentId,
  principal_type: { type: "string", enum: ["human", "team", "service"] },
  principal_id: { type: "string", minLength: 1, maxLength: API_LIMITS.identityCharsMax },
  scope,
  budget_amount_minor: { ...minorAmount, description: "Amount budget in minor units; absent means 0 (no spending)." },
  budget_currency: currency,
  budget_count: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "Absent means no use limit." },
  ttl_hours: { type: "integer", minimum: 1, maximum: API_LIMITS.ttlHoursMax, default: 24 },
  conditions,
  policy,
  delegation_policy: { type: "string", enum: ["none", "attenuating"], default: "none" },
  delegation_depth_max: {
    type: "integer",
    minimum: 0,
    maximum: 64,
    description: "Further delegation levels allowed below this grant; absent means no cap.",
  },
  audience: { type: "string", minLength: 1, maxLength: API_LIMITS.identityCharsMax },
  enforcement_mode: { ...enforcementModeSchema, default: "enforce" },
} as const;

export const grantIssueBodySchema = {
  $id: "GrantIssueBody",
  title: "GrantIssueBody",
  type: "object",
  additionalProperties: false,
  required: ["agent_id", "principal_type", "principal_id", "scope"],
  properties: {
    ...grantTermsProperties,
    require_approval: { type: "boolean", description: "Born `pending_approval` until a human other than the issuer approves." },
  },
  dependentRequired: { budget_amount_minor: ["budget_currency"] },
} as const;

/** A sample action for preview: the names a decision binds (docs/policy-language.md), all but the clock. */
export const sampleActionSchema = {
  $id: "SampleAction",
  title: "SampleAction",
  type: "object",
  additionalProperties: false,
  required: ["tool"],
  properties: {
    tool: toolName,
    amount_minor: minorAmount,
    currency,
    audience: { type: "string", maxLength: API_LIMITS.identityCharsMax },
    args: { type: "object", description: "The action's own arguments (JSON values)." },
    context: { type: "object", additionalProperties: false, properties: { clean: { type: "boolean" } } },
    approver: {
      type: ["string", "null"],
      maxLength: API_LIMITS.identityCharsMax,
      description: "Evaluate as if this human had approved the action.",
    },
  },
  dependentRequired: { amount_minor: ["currency"] },
} as const;

export const grantPreviewBodySchema = {
  $id: "GrantPreviewBody",
  title: "GrantPreviewBody",
  type: "object",
  additionalProperties: false,
  required: [...grantIssueBodySchema.required, "action"],
  properties: { ...grantIssueBodySchema.properties, action: { $ref: "SampleAction" } },
  dependentRequired: grantIssueBodySchema.dependentRequired,
} as const;

export const grantApproveBodySchema = {
  $id: "GrantApproveBody",
  title: "GrantApproveBody",
  type: "object",
  additionalProperties: false,
  properties: { note: text },
} as const;

/** Every field but `agent_id` is optional: a field left out is inherited from the parent. */
export const grantDelegateBodySchema = {
  $id: "GrantDelegateBody",
  title: "GrantDelegateBody",
  type: "object",
  additionalProperties: false,
  required: ["agent_id"],
  properties: {
    agent_id: agentId,
    principal_type: grantTermsProperties.principal_type,
    principal_id: grantTermsProperties.principal_id,
    scope,
    budget_amount_minor: { ...minorAmount, description: "Absent: the parent's remaining amount." },
    budget_currency: currency,
    budget_count: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "Absent: the parent's remaining count." },
    ttl_hours: { type: "integer", minimum: 1, maximum: API_LIMITS.ttlHoursMax, description: "Absent: the child expires with the parent." },
    conditions,
    policy: { ...policy, description: "The child's own expression; its effective policy is this AND every ancestor's." },
    delegation_policy: grantTermsProperties.delegation_policy,
    delegation_depth_max: grantTermsProperties.delegation_depth_max,
    audience: grantTermsProperties.audience,
    enforcement_mode: enforcementModeSchema,
  },
} as const;

export const grantEnforcementBodySchema = {
  $id: "GrantEnforcementBody",
  title: "GrantEnforcementBody",
  type: "object",
  additionalProperties: false,
  required: ["enforcement_mode"],
  properties: { enforcement_mode: enforcementModeSchema },
} as const;

export const grantRevokeBodySchema = {
  $id: "GrantRevokeBody",
  title: "GrantRevokeBody",
  type: "object",
  additionalProperties: false,
  properties: { reason: text },
} as const;

export const agentCreateBodySchema = {
  $id: "AgentCreateBody",
  title: "AgentCreateBody",
  type: "object",
  additionalProperties: false,
  required: ["name"],
  properties: {
    name: { type: "string", minLength: 1, maxLength: API_LIMITS.agentNameCharsMax, pattern: "^[A-Za-z0-9][A-Za-z0-9._@-]*$" },
    description: text,
  },
} as const;

/** `issued_by` and `issued_by_email` are absent on purpose: they come from the authenticated human. */
export const certificationBodySchema = {
  $id: "CertificationBody",
  title: "CertificationBody",
  type: "object",
  additionalProperties: false,
  required: ["basis", "provenance_version", "manifest_hash", "content_hash", "checks"],
  properties: {
    environment: {
      type: "string",
      minLength: 1,
      maxLength: 64,
      pattern: "^[a-z0-9][a-z0-9._-]*$",
      description: "Absent: the server's environment.",
    },
    basis: { ...text, minLength: 1 },
    provenance_version: { type: "string", minLength: 1, maxLength: 200 },
    manifest_hash: { type: "string", minLength: 1, maxLength: 200 },
    content_hash: { type: "string", minLength: 1, maxLength: 200 },
    market_profile: { type: "string", minLength: 1, maxLength: 200 },
    checks: { type: "array", minItems: 1, maxItems: API_LIMITS.checksMax, items: { type: "string", minLength: 1, maxLength: 200 } },
  },
} as const;

export const certificateRevokeBodySchema = {
  $id: "CertificateRevokeBody",
  title: "CertificateRevokeBody",
  type: "object",
  additionalProperties: false,
  properties: { reason: text },
} as const;

export const keyCreateBodySchema = {
  $id: "KeyCreateBody",
  title: "KeyCreateBody",
  type: "object",
  additionalProperties: false,
  required: ["identity", "kind", "roles"],
  properties: {
    identity: {
      type: "string",
      minLength: 1,
      maxLength: API_LIMITS.identityCharsMax,
      pattern: KEY_IDENTITY_PATTERN,
      description: "An email for a human, a service name for a service.",
    },
    kind: { type: "string", enum: ["human", "service"] },
    roles: { type: "array", minItems: 1, uniqueItems: true, items: roleSchema },
    agent_id: { ...agentId, description: "Required with the `agent` role, refused without it." },
    agent_ids: {
      type: "array",
      minItems: 1,
      maxItems: API_LIMITS.enforcerAgentsMax,
      uniqueItems: true,
      items: agentId,
      description: "The agents an `enforcer` key may ask for through AuthZEN: required with that role, refused without it.",
    },
    email: { type: "string", maxLength: API_LIMITS.identityCharsMax, pattern: KEY_EMAIL_PATTERN },
  },
} as const;

export const keyRevokeBodySchema = {
  $id: "KeyRevokeBody",
  title: "KeyRevokeBody",
  type: "object",
  additionalProperties: false,
  properties: { reason: text },
} as const;

// ---------------------------------------------------------------------------------------------
// Responses. Unknown fields are allowed: v1 adds fields and never removes or repurposes one.

export const agentSchema = {
  $id: "Agent",
  title: "Agent",
  type: "object",
  required: ["id", "name", "created_at", "created_by"],
  properties: {
    id: agentId,
    name: { type: "string" },
    description: nullableString,
    created_at: timestamp,
    created_by: { type: "string" },
  },
} as const;

export const agentListSchema = {
  $id: "AgentList",
  title: "AgentList",
  type: "object",
  required: ["agents"],
  properties: { agents: { type: "array", items: { $ref: "Agent" } }, next_after: nullableString },
} as const;

export const grantSchema = {
  $id: "Grant",
  title: "Grant",
  type: "object",
  required: [
    "id",
    "status",
    "enforcement_mode",
    "agent_id",
    "principal_type",
    "principal_id",
    "scope",
    "budget_amount_minor",
    "budget_count",
    "ttl_hours",
    "conditions",
    "delegation_policy",
    "parent_id",
    "root_id",
    "issued_at",
    "expires_at",
    "issued_by",
    "uses",
    "held_minor",
    "settled_minor",
  ],
  properties: {
    id: grantId,
    status: grantStatusSchema,
    enforcement_mode: enforcementModeSchema,
    agent_id: agentId,
    principal_type: { type: "string", enum: ["human", "team", "service"] },
    principal_id: { type: "string" },
    scope: { type: "object", properties: { tool: { type: "array", items: { type: "string" } } } },
    budget_amount_minor: { type: "integer" },
    budget_currency: nullableString,
    budget_count: { type: ["integer", "null"], description: "`null`: no use limit." },
    ttl_hours: { type: "integer" },
    conditions: { type: "object", properties: { clean_context: { type: "boolean" } } },
    policy: nullableString,
    delegation_policy: { type: "string", enum: ["none", "attenuating"] },
    delegation_depth_max: { type: ["integer", "null"] },
    audience: nullableString,
    approval_required: { type: "boolean" },
    parent_id: { type: ["string", "null"] },
    root_id: { type: "string" },
    issued_at: timestamp,
    expires_at: timestamp,
    issued_by: { type: "string" },
    approved_by: nullableString,
    approved_at: nullableTimestamp,
    family_id: nullableString,
    family_version: { type: ["integer", "string", "null"] },
    revoked_at: nullableTimestamp,
    revoked_by: nullableString,
    revocation_reason: nullableString,
    uses: { type: "integer" },
    held_minor: { type: "integer" },
    settled_minor: { type: "integer" },
    warnings: { type: "array", items: { $ref: "Diagnostic" }, description: "Policy lint warnings, on issue only." },
  },
} as const;

export const grantListSchema = {
  $id: "GrantList",
  title: "GrantList",
  type: "object",
  required: ["grants"],
  properties: { grants: { type: "array", items: { $ref: "Grant" } }, next_after: nullableString },
} as const;

export const grantPageSchema = {
  $id: "GrantPage",
  title: "GrantPage",
  type: "object",
  required: ["grants", "next_cursor"],
  properties: {
    grants: { type: "array", items: { $ref: "Grant" } },
    next_cursor: {
      ...nullableString,
      description: "Pass back unchanged as `cursor` for the next page; null on the last page. Opaque: do not build or parse it.",
    },
  },
} as const;

export const grantRevocationSchema = {
  $id: "GrantRevocation",
  title: "GrantRevocation",
  type: "object",
  required: ["grant_id", "revoked", "revoked_at"],
  properties: {
    grant_id: grantId,
    revoked: { type: "array", items: { type: "string" }, description: "Exactly the ids this request revoked: the grant and its subtree." },
    revoked_at: timestamp,
  },
} as const;

export const gateResultSchema = {
  $id: "GateResult",
  title: "GateResult",
  type: "object",
  required: ["gate", "result", "code", "reason"],
  properties: {
    gate: { type: "string", enum: ["grant", "status", "window", "audience", "certification", "scope", "conditions", "policy", "budget"] },
    result: { type: "string", enum: ["pass", "fail", "skipped", "not_reached"] },
    code: { type: "string", description: "A stable reason code such as `scope.out_of_scope`." },
    reason: { type: "string" },
    outcome: { type: "string", enum: ["allow", "deny", "exhausted", "gated"], description: "What this gate decides when it fails." },
    grant_id: { type: "string" },
  },
} as const;

export const grantPreviewSchema = {
  $id: "GrantPreview",
  title: "GrantPreview",
  type: "object",
  required: ["outcome", "enforcement_mode", "decided_by", "reason_code", "reason", "gates", "approval_required", "created"],
  properties: {
    outcome: { type: "string", enum: ["allow", "deny", "exhausted", "gated"] },
    would_outcome: {
      type: "string",
      enum: ["allow", "deny", "exhausted", "gated"],
      description: "In `observe` only: what `enforce` would say.",
    },
    enforcement_mode: enforcementModeSchema,
    decided_by: { type: ["string", "null"], description: "The gate that decided a refusal; null when every gate passed." },
    reason_code: { type: "string" },
    reason: { type: "string" },
    gates: { type: "array", items: { $ref: "GateResult" } },
    residual: { type: "string", description: "For `gated`: who could approve, as an expression over `approver`." },
    approver: nullableString,
    approval_required: {
      type: "boolean",
      description: "Whether the grant would be born `pending_approval`; the preview decides as if approved.",
    },
    warnings: { type: "array", items: { $ref: "Diagnostic" } },
    created: { type: "boolean", const: false, description: "Always false: a preview creates nothing." },
  },
} as const;

export const certificateSchema = {
  $id: "Certificate",
  title: "Certificate",
  type: "object",
  required: ["id", "agent_id", "environment", "status", "issued_by", "issued_at", "basis", "checks"],
  properties: {
    id: certificateId,
    agent_id: agentId,
    environment: { type: "string" },
    status: { type: "string", enum: ["valid", "revoked"] },
    issued_by: { type: "string" },
    issued_by_email: nullableString,
    issued_at: timestamp,
    basis: { type: "string" },
    provenance_version: { type: "string" },
    manifest_hash: { type: "string" },
    content_hash: { type: "string" },
    market_profile: nullableString,
    checks: { type: "array", items: { type: "string" } },
    revoked_at: nullableTimestamp,
    revoked_by: nullableString,
    revocation_reason: nullableString,
    superseded_by: { type: ["string", "null"] },
  },
} as const;

export const certificateListSchema = {
  $id: "CertificateList",
  title: "CertificateList",
  type: "object",
  required: ["certificates"],
  properties: { certificates: { type: "array", items: { $ref: "Certificate" } }, next_after: nullableString },
} as const;

export const certificationStatusSchema = {
  $id: "CertificationStatus",
  title: "CertificationStatus",
  type: "object",
  required: ["agent_id", "environment", "certified", "certificate", "certificates"],
  properties: {
    agent_id: agentId,
    environment: { type: "string", description: "The server's environment, the only one a certificate is valid for." },
    certified: { type: "boolean" },
    certificate: { oneOf: [{ $ref: "Certificate" }, { type: "null" }], description: "The valid certificate for this environment." },
    certificates: { type: "array", items: { $ref: "Certificate" }, description: "Every certificate of the agent, newest first." },
  },
} as const;

export const keySchema = {
  $id: "Key",
  title: "Key",
  type: "object",
  required: ["id", "identity", "kind", "roles", "status", "created_at"],
  properties: {
    id: keyId,
    identity: { type: "string" },
    kind: { type: "string", enum: ["human", "service"] },
    roles: { type: "array", items: roleSchema },
    agent_id: { type: ["string", "null"] },
    agent_ids: {
      type: ["array", "null"],
      items: { type: "string" },
      description: "For an `enforcer` key: the agents it may ask for; null for any other key.",
    },
    email: nullableString,
    status: { type: "string", enum: ["active", "revoked"] },
    created_at: timestamp,
    created_by: nullableString,
    revoked_at: nullableTimestamp,
    revoked_by: nullableString,
    revocation_reason: nullableString,
  },
} as const;

export const keyCreatedSchema = {
  $id: "KeyCreated",
  title: "KeyCreated",
  type: "object",
  required: ["id", "key"],
  allOf: [{ $ref: "Key" }],
  properties: { key: { type: "string", description: "The secret, shown only in this response; the server keeps its hash." } },
} as const;

export const keyListSchema = {
  $id: "KeyList",
  title: "KeyList",
  type: "object",
  required: ["keys"],
  properties: { keys: { type: "array", items: { $ref: "Key" } }, next_after: nullableString },
} as const;

export const spanSchema = {
  $id: "Span",
  title: "Span",
  type: "object",
  required: ["start", "end"],
  properties: { start: { type: "integer" }, end: { type: "integer" } },
  description: "Half-open UTF-16 offsets into the policy text.",
} as const;

export const diagnosticSchema = {
  $id: "Diagnostic",
  title: "Diagnostic",
  type: "object",
  required: ["code", "severity", "message", "span"],
  properties: {
    code: { type: "string" },
    severity: { type: "string", enum: ["error", "warning"] },
    message: { type: "string" },
    span: { $ref: "Span" },
    help: { type: "string" },
  },
} as const;

/** A grant family's error: where in the pushed body (as the family compiler reads it) it was found. */
export const familyDiagnosticSchema = {
  $id: "FamilyDiagnostic",
  title: "FamilyDiagnostic",
  type: "object",
  required: ["code", "severity", "message", "line", "column"],
  properties: {
    code: { type: "string", description: "The family compiler's stable code, e.g. `schema` or `policy/unknown-name`." },
    severity: { type: "string", enum: ["error"] },
    message: { type: "string" },
    help: { type: "string" },
    field: {
      type: "string",
      description: "The field the error is about, as a dotted path (`parameters.agent_id.pattern`), when it is about one field.",
    },
    line: { type: "integer", minimum: 1, description: "Line of the body as the compiler reads it, pretty-printed with one-space indents." },
    column: { type: "integer", minimum: 1 },
  },
} as const;

export const problemSchema = {
  $id: "Problem",
  title: "Problem",
  type: "object",
  description: "RFC 9457 problem details, served as `application/problem+json`.",
  required: ["type", "title", "status", "code"],
  properties: {
    type: { type: "string" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    instance: { type: "string" },
    code: { type: "string", description: "Stable; see the problem-code list." },
    errors: {
      type: "array",
      description: "Body validation errors.",
      items: { type: "object", properties: { pointer: { type: "string" }, message: { type: "string" }, code: { type: "string" } } },
    },
    diagnostics: {
      type: "array",
      items: { anyOf: [{ $ref: "Diagnostic" }, { $ref: "FamilyDiagnostic" }] },
      description: "Policy errors with spans (`invalid_policy`), or a grant family's errors with line and column (`invalid_family`).",
    },
    widenings: {
      type: "array",
      description: "Every axis a delegate request widens.",
      items: { type: "object", properties: { axis: { type: "string" }, parent: {}, child: {}, message: { type: "string" } } },
    },
  },
} as const;

export const healthSchema = {
  $id: "Health",
  title: "Health",
  type: "object",
  required: ["status"],
  properties: { status: { type: "string", enum: ["ok", "unavailable"] }, version: { type: "string" }, environment: { type: "string" } },
} as const;

/**
 * `GET /v1`: what this API is and where to go next (decision 0917). Links are relative to the
 * server's origin, as the OpenAPI document's own server URL is.
 */
export const apiIndexSchema = {
  $id: "ApiIndex",
  title: "ApiIndex",
  type: "object",
  required: ["api_version", "server_version", "links", "docs"],
  properties: {
    api_version: { type: "string", enum: ["v1"], description: "The major version the path carries." },
    server_version: { type: "string" },
    links: {
      type: "object",
      required: ["openapi", "health", "ready", "metrics", "console"],
      properties: {
        openapi: { type: "string", description: "The OpenAPI 3.1 document of v1." },
        health: { type: "string" },
        ready: { type: "string" },
        metrics: { type: "string" },
        console: { type: "string", description: "The approvals console, for the humans in the loop." },
      },
    },
    docs: {
      type: "object",
      description: "Where the documentation is: pages of the project's source tree (`docs/`), named by path.",
      required: ["api", "operations", "security"],
      properties: { api: { type: "string" }, operations: { type: "string" }, security: { type: "string" } },
    },
  },
} as const;

/** The body of `POST /v1/grant-families`: the schema the family compiler validates with too. */
export const grantFamilyBodySchema = familyBodySchemaOf(
  grantIssueBodySchema as unknown as JsonSchema,
  sampleActionSchema as unknown as JsonSchema,
);

/** Request-body schemas by name, for validators. */
export const requestSchemas = {
  AgentCreateBody: agentCreateBodySchema,
  GrantIssueBody: grantIssueBodySchema,
  GrantPreviewBody: grantPreviewBodySchema,
  GrantApproveBody: grantApproveBodySchema,
  GrantDelegateBody: grantDelegateBodySchema,
  GrantEnforcementBody: grantEnforcementBodySchema,
  GrantRevokeBody: grantRevokeBodySchema,
  CertificationBody: certificationBodySchema,
  CertificateRevokeBody: certificateRevokeBodySchema,
  KeyCreateBody: keyCreateBodySchema,
  KeyRevokeBody: keyRevokeBodySchema,
  AuthorizeBody: authorizeBodySchema,
  SettleBody: settleBodySchema,
  DecisionApproveBody: decisionApproveBodySchema,
  DecisionAbandonBody: decisionAbandonBodySchema,
  ContractCreateBody: contractCreateBodySchema,
  BreakerCreateBody: breakerCreateBodySchema,
  BreakerArmBody: breakerArmBodySchema,
  BreakerDisarmBody: breakerDisarmBodySchema,
  GrantFamilyBody: grantFamilyBodySchema,
  FamilyInstantiateBody: familyInstantiateBodySchema,
  FamilyImpactBody: familyImpactBodySchema,
  WebhookCreateBody: webhookCreateBodySchema,
  WebhookActionBody: webhookActionBodySchema,
  SigningKeyRotateBody: signingKeyRotateBodySchema,
} as const;

/** Every schema with an `$id`, requests and responses, in the order the OpenAPI document lists them. */
export const allSchemas = [
  ...Object.values(requestSchemas),
  sampleActionSchema,
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
  decisionSchema,
  settlementSchema,
  decisionApprovalSchema,
  decisionAbandonmentSchema,
  ledgerVerificationSchema,
  pendingDecisionSchema,
  pendingDecisionListSchema,
  ledgerRecordSchema,
  treeLedgerSchema,
  contractSchema,
  contractListSchema,
  tripSchema,
  breakerSchema,
  counterfactualSchema,
  findingListSchema,
  grantFamilySchema,
  grantFamilyListSchema,
  familyImpactSchema,
  ...WEBHOOK_SCHEMAS,
  signatureSchema,
  signingKeySchema,
  signingKeySetSchema,
  ledgerConsistencySchema,
  decisionReceiptSchema,
] as const;

export type RequestSchemaName = keyof typeof requestSchemas;
