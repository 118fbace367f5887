// The seal: canonical JSON, the hash-linked sealed records and their verifier, and the server's Ed25519 signatures.

export {
  canonicalJson,
  canonicalMerge,
  CanonicalText,
  checkTreeChain,
  GENESIS_HASH,
  linkHash,
  sealedRow,
  sealRecord,
  verifyLedger,
} from "./ledger.js";
export type { LedgerBreak, LedgerVerification, SealInput } from "./ledger.js";
export { keyId, Signer, SIGNING_LIMITS } from "./signing.js";
export type { BatchSignatureField, PublicSigningKey, SignatureField } from "./signing.js";
export {
  abandonmentDetail,
  decisionRecord,
  familyBody,
  instanceParameters,
  ledgerRecord,
  SEALED_CHARS_MAX,
  SEALED_DEPTH_MAX,
  SealedRecordError,
  sealedObject,
  sealedPosition,
  settlementRecord,
} from "./sealed-records.js";
export type { AbandonmentDetail, DecisionRecord, LedgerRecord, SettlementRecord } from "./sealed-records.js";
