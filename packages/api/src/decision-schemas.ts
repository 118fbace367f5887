// JSON Schemas of the decision path (docs/decisions.md): authorize, settle and approvals of gated
// decisions. Request schemas refuse unknown fields; response schemas allow them.

import { API_LIMITS } from "./limits.js";
import { nonceField } from "./signing-schemas.js";

const idBody = "[0-9a-hjkmnp-tv-z]{26}";
const grantId = { type: "string", pattern: `^grt_${idBody}$`, description: "A grant id, `grt_…`." } as const;
/** A sealed ledger record's id (shared with the decision reads). */
export const ledgerId = { type: "string", pattern: `^led_${idBody}$`, description: "A sealed ledger record, `led_…`." } as const;
const approvalId = { type: "string", pattern: `^apv_${idBody}$`, description: "An approval of a gated decision, `apv_…`." } as const;
const minorAmount = { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;
const currency = { type: "string", pattern: "^[A-Z]{3}$", description: "ISO 4217 currency code, e.g. `EUR`." } as const;
/**
 * The tool of an authorize: any bounded text, so that a name no grant can name (`../a`, a Cyrillic
 * letter) is still decided and sealed, refused by the scope gate (`scope.out_of_scope`).
 */
const requestedTool = {
  type: "string",
  minLength: 1,
  maxLength: API_LIMITS.toolNameCharsMax,
  description: "The action's tool. A name outside `A-Z a-z 0-9 _ . : * -` is decided `deny` by the scope gate (`scope.out_of_scope`).",
} as const;
/** The four outcomes of a decision (shared with the decision reads). */
export const outcome = { type: "string", enum: ["allow", "deny", "exhausted", "gated"] } as const;
const attestationField = { type: "string", minLength: 1, maxLength: 200 } as const;

/** The body of `POST /v1/authorize`; the calling agent comes from the key, never from the body. */
export const authorizeBodySchema = {
  $id: "AuthorizeBody",
  title: "AuthorizeBody",
  type: "object",
  additionalProperties: false,
  required: ["grant_id", "tool"],
  properties: {
    grant_id: grantId,
    tool: requestedTool,
    amount_minor: minorAmount,
    currency,
    audience: { type: "string", maxLength: API_LIMITS.identityCharsMax },
    args: { type: "object", description: "The action's own arguments (JSON values), bound as `args.<name>`." },
    context: { type: "object", additionalProperties: false, properties: { clean: { type: "boolean" } } },
    attestation: {
      type: "object",
      additionalProperties: false,
      required: ["manifest_hash", "content_hash", "provenance_version"],
      properties: { manifest_hash: attestationField, content_hash: attestationField, provenance_version: attestationField },
      description: "What the agent is, in the certificate's own field names; checked in `enforce`.",
    },
    approval_id: { ...approvalId, description: "Presents a human approval of an earlier `gated` decision." },
    nonce: nonceField,
  },
  dependentRequired: { amount_minor: ["currency"] },
} as const;

/** The body of `POST /v1/decisions/{ledger_id}/settle`. */
export const settleBodySchema = {
  $id: "SettleBody",
  title: "SettleBody",
  type: "object",
  additionalProperties: false,
  required: ["amount_minor"],
  properties: {
    amount_minor: { ...minorAmount, description: "What was actually spent: at most the amount held; the rest is released." },
    nonce: nonceField,
  },
} as const;

/** The body of `POST /v1/decisions/{ledger_id}/approve`. */
export const decisionApproveBodySchema = {
  $id: "DecisionApproveBody",
  title: "DecisionApproveBody",
  type: "object",
  additionalProperties: false,
  properties: {
    amount_minor_max: { ...minorAmount, description: "The largest amount the approval covers; absent: the gated decision's amount." },
    expires_in_minutes: { type: "integer", minimum: 1, maximum: 1_440, description: "Absent: 60 minutes." },
    note: { type: "string", maxLength: API_LIMITS.textCharsMax },
  },
} as const;

/** The body of `POST /v1/decisions/{ledger_id}/abandoned`: why the agent stopped waiting for an approval. */
export const decisionAbandonBodySchema = {
  $id: "DecisionAbandonBody",
  title: "DecisionAbandonBody",
  type: "object",
  additionalProperties: false,
  required: ["reason", "waited_ms"],
  properties: {
    reason: {
      type: "string",
      enum: ["timeout", "cancelled"],
      description: "`timeout`: no approval within the agent's wait; `cancelled`: the agent's client cancelled the call.",
    },
    waited_ms: {
      type: "integer",
      minimum: 0,
      maximum: API_LIMITS.abandonWaitMsMax,
      description: "How long the agent waited, in milliseconds.",
    },
  },
} as const;

/** An agent stopped waiting for the approval of a gated decision: an approval now is not used by that call. */
export const decisionAbandonmentSchema = {
  $id: "DecisionAbandonment",
  title: "DecisionAbandonment",
  type: "object",
  required: ["ledger_id", "grant_id", "reason", "waited_ms", "abandoned_at"],
  properties: {
    ledger_id: ledgerId,
    grant_id: { type: "string" },
    reason: { type: "string", enum: ["timeout", "cancelled"] },
    waited_ms: { type: "integer" },
    abandoned_at: { type: "string" },
  },
} as const;

export const decisionSchema = {
  $id: "Decision",
  title: "Decision",
  type: "object",
  required: [
    "ledger_id",
    "outcome",
    "enforcement_mode",
    "decided_by",
    "reason_code",
    "reason",
    "gates",
    "approver",
    "decided_at",
    "signature",
  ],
  properties: {
    ledger_id: ledgerId,
    outcome: { ...outcome, description: "`allow` permits; a refusal is HTTP 200 too." },
    would_outcome: { ...outcome, description: "In `observe` only: what `enforce` would say." },
    enforcement_mode: { type: "string", enum: ["observe", "enforce"] },
    decided_by: { type: ["string", "null"], description: "The gate that decided a refusal; null when every gate passed." },
    reason_code: { type: "string" },
    reason: { type: "string" },
    gates: { type: "array", items: { $ref: "GateResult" } },
    residual: { type: "string", description: "For `gated`: who could approve, as an expression over `approver`." },
    approver: { type: ["string", "null"], description: "The human whose approval this decision used." },
    approval_id: approvalId,
    holds: {
      type: "array",
      description: "The holds an `allow` with an amount placed: one on the grant and one on every ancestor.",
      items: {
        type: "object",
        properties: {
          grant_id: { type: "string" },
          amount_minor: { type: "integer" },
          currency: { type: ["string", "null"] },
          expires_at: { type: "string" },
        },
      },
    },
    decided_at: { type: "string" },
    signature: { $ref: "Signature" },
  },
} as const;

export const settlementSchema = {
  $id: "Settlement",
  title: "Settlement",
  type: "object",
  required: ["ledger_id", "decision_ledger_id", "amount_minor", "released_minor", "settled_at", "signature"],
  properties: {
    ledger_id: { ...ledgerId, description: "The settlement's own sealed record." },
    decision_ledger_id: ledgerId,
    grant_id: { type: "string" },
    currency: { type: ["string", "null"] },
    amount_minor: { type: "integer", description: "Captured." },
    held_minor: { type: "integer", description: "What the decision held." },
    released_minor: { type: "integer", description: "Held but not captured, released at once." },
    settled_at: { type: "string" },
    signature: { $ref: "Signature" },
  },
} as const;

export const ledgerVerificationSchema = {
  $id: "LedgerVerification",
  title: "LedgerVerification",
  type: "object",
  required: ["ok", "trees", "records", "broken"],
  properties: {
    ok: { type: "boolean" },
    trees: { type: "integer", description: "Chains checked: one per delegation tree." },
    records: { type: "integer" },
    broken: {
      oneOf: [
        { type: "null" },
        {
          type: "object",
          required: ["tree_id", "seq", "ledger_id", "problem"],
          properties: {
            tree_id: { type: "string" },
            seq: { type: "integer" },
            ledger_id: { type: "string" },
            problem: { type: "string" },
            position: {
              type: "integer",
              description:
                "Set when the break is in the ledger's Merkle log: the leaf's position (`tree_id` is empty when the record is gone).",
            },
          },
        },
      ],
      description: "The first broken link, in tree order then chain order, then in the Merkle log's order.",
    },
  },
} as const;

export const decisionApprovalSchema = {
  $id: "DecisionApproval",
  title: "DecisionApproval",
  type: "object",
  required: ["approval_id", "ledger_id", "grant_id", "tool", "amount_minor_max", "approver", "approved_at", "expires_at"],
  properties: {
    approval_id: approvalId,
    ledger_id: ledgerId,
    grant_id: { type: "string" },
    tool: { type: "string" },
    amount_minor_max: { type: "integer" },
    currency: { type: ["string", "null"] },
    approver: { type: "string" },
    approved_at: { type: "string" },
    expires_at: { type: "string" },
    note: { type: ["string", "null"] },
  },
} as const;
