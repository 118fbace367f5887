// JSON Schemas of verifiable answers: the signature every decision and settlement carries, the
// statement it signs, and the server's public keys as a JWKS (docs/verification.md).

import { API_LIMITS } from "./limits.js";

/** A client's nonce: echoed in the signed statement so that an old answer cannot pass for a new one. */
export const nonceField = {
  type: "string",
  minLength: 1,
  maxLength: API_LIMITS.nonceCharsMax,
  pattern: "^[A-Za-z0-9._~-]+$",
  description:
    "A fresh value per request, echoed in the signed statement (`signature.statement.nonce`): an answer to another request cannot pass for this one.",
} as const;

const nullableString = { type: ["string", "null"] } as const;
const nullableInteger = { type: ["integer", "null"] } as const;

/** The statement a decision's signature covers, in canonical (RFC 8785) order. */
const decisionStatement = {
  type: "object",
  required: [
    "agent_id",
    "amount_minor",
    "args_sha256",
    "currency",
    "decided_at",
    "grant_id",
    "ledger_id",
    "nonce",
    "outcome",
    "tool",
    "type",
  ],
  properties: {
    type: { const: "authority.decision.v1" },
    ledger_id: { type: "string" },
    outcome: { type: "string", enum: ["allow", "deny", "exhausted", "gated"] },
    grant_id: { type: "string" },
    agent_id: { type: "string" },
    tool: { type: "string" },
    amount_minor: nullableInteger,
    currency: nullableString,
    args_sha256: { ...nullableString, description: "SHA-256 (hex) of the canonical JSON (RFC 8785) of `args` as sent; null without args." },
    decided_at: { type: "string" },
    nonce: { ...nullableString, description: "The request's `nonce`; null when it sent none." },
  },
} as const;

/** The statement a settlement's signature covers, in canonical (RFC 8785) order. */
const settlementStatement = {
  type: "object",
  required: [
    "agent_id",
    "amount_minor",
    "currency",
    "decision_ledger_id",
    "grant_id",
    "held_minor",
    "ledger_id",
    "nonce",
    "released_minor",
    "settled_at",
    "tool",
    "type",
  ],
  properties: {
    type: { const: "authority.settlement.v1" },
    ledger_id: { type: "string" },
    decision_ledger_id: { type: "string" },
    grant_id: { type: "string" },
    agent_id: { type: "string" },
    tool: { type: "string" },
    amount_minor: { type: "integer" },
    held_minor: { type: "integer" },
    released_minor: { type: "integer" },
    currency: nullableString,
    settled_at: { type: "string" },
    nonce: nullableString,
  },
} as const;

export const signatureSchema = {
  $id: "Signature",
  title: "Signature",
  type: "object",
  required: ["alg", "kid", "statement", "value"],
  description: "Ed25519 over the canonical JSON (RFC 8785) of `statement`, by the key `kid` of GET /v1/signing-keys.",
  properties: {
    alg: { const: "EdDSA" },
    kid: { type: "string", description: "The signing key: its JWK thumbprint (RFC 7638)." },
    statement: { oneOf: [decisionStatement, settlementStatement] },
    value: { type: "string", pattern: "^[A-Za-z0-9_-]{86}$", description: "The 64-byte signature in base64url without padding." },
  },
} as const;

export const signingKeySchema = {
  $id: "SigningKey",
  title: "SigningKey",
  type: "object",
  required: ["kty", "crv", "x", "kid", "alg", "use", "status", "created_at", "retired_at"],
  properties: {
    kty: { const: "OKP" },
    crv: { const: "Ed25519" },
    x: { type: "string", pattern: "^[A-Za-z0-9_-]{43}$", description: "The public key (RFC 8037)." },
    kid: { type: "string" },
    alg: { const: "EdDSA" },
    use: { const: "sig" },
    status: {
      type: "string",
      enum: ["active", "retired"],
      description: "`active` signs now; a `retired` key signs nothing new and stays listed so that its signatures verify.",
    },
    created_at: { type: "string" },
    retired_at: nullableString,
  },
} as const;

export const signingKeySetSchema = {
  $id: "SigningKeySet",
  title: "SigningKeySet",
  type: "object",
  required: ["keys"],
  description: "A JSON Web Key Set (RFC 7517) of every key the server has signed with.",
  properties: { keys: { type: "array", items: { $ref: "SigningKey" } } },
} as const;

/**
 * The body of `POST /v1/signing-keys/rotate`: the kid of the key to retire, which must be the active
 * one (409 otherwise), so that two admins, or one retrying, rotate once and not twice.
 */
export const signingKeyRotateBodySchema = {
  $id: "SigningKeyRotateBody",
  title: "SigningKeyRotateBody",
  type: "object",
  additionalProperties: false,
  required: ["retire_kid"],
  properties: {
    retire_kid: { type: "string", pattern: "^[A-Za-z0-9_-]{43}$", description: "The active key's kid, as GET /v1/signing-keys lists it." },
    reason: { type: "string", maxLength: API_LIMITS.textCharsMax, description: "Why, for the log." },
  },
} as const;
