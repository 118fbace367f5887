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

/** A 32-byte SHA-256 hash in base64url without padding. */
const hash32 = { type: "string", pattern: "^[A-Za-z0-9_-]{43}$" } as const;

export const signatureSchema = {
  $id: "Signature",
  title: "Signature",
  type: "object",
  required: ["alg", "kid", "statement", "value"],
  description:
    "The server's signature of the answer's `statement`, by the key `kid` of GET /v1/signing-keys. With `v: 2` (every new answer), `value` is Ed25519 over the text `agent-authority answer batch v2`, `tree_size` and `root`, each followed by a newline: the root of the RFC 9162 Merkle tree of the statements answered together, whose leaf `leaf_index` is SHA-256(0x00 ‖ the canonical JSON (RFC 8785) of `statement`) and `path` its inclusion path. Without `v` (answers of earlier versions), `value` is Ed25519 over the canonical JSON of `statement`.",
  properties: {
    v: { const: 2, description: "The signature's form: 2, a batch signature; absent, one signature per statement." },
    alg: { const: "EdDSA" },
    kid: { type: "string", description: "The signing key: its JWK thumbprint (RFC 7638)." },
    statement: { oneOf: [decisionStatement, settlementStatement] },
    tree_size: { type: "integer", minimum: 1, description: "How many statements were signed together (`v: 2`)." },
    leaf_index: { type: "integer", minimum: 0, description: "The statement's leaf in the batch's tree (`v: 2`)." },
    path: {
      type: "array",
      items: hash32,
      maxItems: 16,
      description: "The RFC 9162 inclusion path from the statement's leaf to `root`, lowest first, base64url (`v: 2`).",
    },
    root: { ...hash32, description: "The batch tree's root hash, base64url (`v: 2`)." },
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

/** `GET /v1/ledger/consistency`: the RFC 9162 proof that the tree of `first` leaves is a prefix of the tree of `second`. */
export const ledgerConsistencySchema = {
  $id: "LedgerConsistency",
  title: "LedgerConsistency",
  type: "object",
  required: ["first", "second", "proof"],
  properties: {
    first: { type: "integer", minimum: 0 },
    second: { type: "integer", minimum: 0 },
    proof: {
      type: "array",
      items: { type: "string" },
      description: "Base64 SHA-256 hashes in the order of RFC 9162 §2.1.4 (SUBPROOF); empty when `first` is 0 or equals `second`.",
    },
  },
} as const;

const receiptEntry = {
  type: "object",
  additionalProperties: false,
  required: ["leaf_index", "prev_hash", "hash", "record", "inclusion_proof"],
  properties: {
    leaf_index: {
      type: "integer",
      minimum: 0,
      description: "The record's position in the ledger's global order: its leaf in the Merkle tree.",
    },
    prev_hash: {
      type: "string",
      pattern: "^[0-9a-f]{64}$",
      description: "The hash of the previous record of its chain (64 zeros for the first).",
    },
    hash: {
      type: "string",
      pattern: "^[0-9a-f]{64}$",
      description: "SHA-256 of `prev_hash`, a newline and `record`; the leaf is SHA-256(0x00 || these 32 bytes).",
    },
    record: { type: "string", description: "The sealed record: its canonical JSON, exactly the text its hash covers." },
    inclusion_proof: {
      type: "array",
      items: { type: "string" },
      description: "Base64 SHA-256 hashes from the leaf up to the checkpoint's root (RFC 9162 §2.1.3).",
    },
  },
} as const;

/** `GET /v1/decisions/{ledger_id}/receipt`: everything needed to check one decision offline with the JWKS alone. */
export const decisionReceiptSchema = {
  $id: "DecisionReceipt",
  title: "DecisionReceipt",
  type: "object",
  additionalProperties: false,
  required: ["format", "ledger_id", "kid", "checkpoint", "record", "settlements", "signature"],
  description: "Verified offline by `authority receipt verify FILE --keys JWKS` (docs/verification.md).",
  properties: {
    format: { const: "agent-authority.receipt.v1" },
    ledger_id: { type: "string" },
    kid: { type: "string", description: "The key of GET /v1/signing-keys that signed the checkpoint and the receipt." },
    checkpoint: {
      type: "string",
      description: "A signed checkpoint (C2SP tlog-checkpoint signed note) whose tree holds every record of the receipt.",
    },
    record: receiptEntry,
    settlements: { type: "array", items: receiptEntry, description: "The settlement records of the decision (at most one)." },
    signature: {
      type: "object",
      required: ["alg", "kid", "statement", "value"],
      description:
        "Ed25519 over the canonical JSON of `statement`, whose `receipt_sha256` is the SHA-256 of the canonical JSON of the receipt without `signature`.",
      properties: {
        alg: { const: "EdDSA" },
        kid: { type: "string" },
        statement: {
          type: "object",
          required: ["ledger_id", "receipt_sha256", "type"],
          properties: {
            ledger_id: { type: "string" },
            receipt_sha256: { type: "string", pattern: "^[0-9a-f]{64}$" },
            type: { const: "authority.receipt.v1" },
          },
        },
        value: { type: "string", pattern: "^[A-Za-z0-9_-]{86}$" },
      },
    },
  },
} as const;
