// Receipts of sealed decisions, checked offline: the record and its settlements, each hashed as
// sealed and proved included in a signed checkpoint, and the server's signature binding them. Pure.

import { createHash, createPublicKey, verify } from "node:crypto";
import { canonicalJson } from "./canonical-json.js";
import { verifyCheckpoint, type CheckpointKey, type VerifiedCheckpoint } from "./checkpoint.js";
import { leafHash, MERKLE_LIMITS, verifyInclusion } from "./merkle.js";

export const RECEIPT_FORMAT = "agent-authority.receipt.v1";
/** The `type` of the statement a receipt's signature covers. */
export const RECEIPT_STATEMENT_TYPE = "authority.receipt.v1";

export const RECEIPT_LIMITS = Object.freeze({
  /** A receipt file larger than this is refused before it is parsed. */
  bytesMax: 4 * 1024 * 1024,
  /** A decision is settled at most once; a receipt lists at most this many settlements. */
  settlementsMax: 16,
});

/** One sealed record in a receipt: as sealed (its text, the chain hash before it, its hash) and where it is in the tree. */
export interface ReceiptEntry {
  readonly leaf_index: number;
  readonly prev_hash: string;
  readonly hash: string;
  /** The record's canonical JSON, exactly the text its hash covers. */
  readonly record: string;
  /** Base64 hashes from the leaf up to the checkpoint's root (RFC 9162 §2.1.3). */
  readonly inclusion_proof: readonly string[];
}

export interface Receipt {
  readonly format: typeof RECEIPT_FORMAT;
  readonly ledger_id: string;
  /** The JWKS key id that signed the checkpoint and the receipt. */
  readonly kid: string;
  /** A signed checkpoint (C2SP tlog-checkpoint) whose tree holds every record of the receipt. */
  readonly checkpoint: string;
  readonly record: ReceiptEntry;
  readonly settlements: readonly ReceiptEntry[];
  /** Ed25519 over the canonical JSON of `statement`, which names the SHA-256 of the rest of the receipt. */
  readonly signature: {
    readonly alg: "EdDSA";
    readonly kid: string;
    readonly statement: { readonly ledger_id: string; readonly receipt_sha256: string; readonly type: typeof RECEIPT_STATEMENT_TYPE };
    readonly value: string;
  };
}

/** What a verified receipt shows. */
export interface VerifiedReceipt {
  readonly ok: true;
  readonly ledger_id: string;
  readonly kid: string;
  readonly origin: string;
  readonly tree_size: number;
  readonly leaf_index: number;
  /** The sealed decision record, parsed. */
  readonly record: Readonly<Record<string, unknown>>;
  readonly settlements: ReadonlyArray<Readonly<Record<string, unknown>>>;
}

export interface ReceiptFailure {
  readonly ok: false;
  /** The receipt member that does not hold, as a path (`record.inclusion_proof`, `settlements[0].hash`). */
  readonly field: string;
  readonly message: string;
}

const HEX64 = /^[0-9a-f]{64}$/;
const RECEIPT_KEYS: readonly string[] = ["checkpoint", "format", "kid", "ledger_id", "record", "settlements", "signature"];
const ENTRY_KEYS: readonly string[] = ["hash", "inclusion_proof", "leaf_index", "prev_hash", "record"];

const failure = (field: string, message: string): ReceiptFailure => ({ ok: false, field, message });

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function sameKeys(value: Record<string, unknown>, keys: readonly string[]): boolean {
  const own = Object.keys(value).sort();
  return own.length === keys.length && own.every((key, i) => key === keys[i]);
}

/** The chain hash of a sealed record: SHA-256 over the previous hash, a newline and the record, in hex (decision 0600). */
export function sealedHash(prevHash: string, record: string): string {
  return createHash("sha256").update(`${prevHash}\n${record}`, "utf8").digest("hex");
}

/** The leaf of a sealed record in the ledger's Merkle tree: SHA-256(0x00 || the 32 bytes of its chain hash). */
export function recordLeaf(hash: string): Buffer {
  return leafHash(Buffer.from(hash, "hex"));
}

/** The SHA-256 (hex) of a receipt's canonical JSON without its signature: what the signature's statement names. */
export function receiptDigest(receipt: Readonly<Record<string, unknown>>): string {
  const { signature: _signature, ...rest } = receipt;
  return createHash("sha256").update(canonicalJson(rest), "utf8").digest("hex");
}

/** Checks one entry: its shape, its hash, its canonical record, its inclusion in the tree. Answers the parsed record. */
function checkEntry(
  value: unknown,
  at: string,
  size: number,
  root: Buffer,
): { readonly ok: true; readonly parsed: Record<string, unknown> } | ReceiptFailure {
  if (!isObject(value) || !sameKeys(value, ENTRY_KEYS)) return failure(at, `an entry has exactly ${ENTRY_KEYS.join(", ")}`);
  const { leaf_index: index, prev_hash: prev, hash, record, inclusion_proof: proof } = value;
  if (typeof prev !== "string" || !HEX64.test(prev)) return failure(`${at}.prev_hash`, "64 lower-case hex digits");
  if (typeof hash !== "string" || !HEX64.test(hash)) return failure(`${at}.hash`, "64 lower-case hex digits");
  if (typeof record !== "string") return failure(`${at}.record`, "the sealed record's text");
  if (sealedHash(prev, record) !== hash)
    return failure(`${at}.hash`, "the record does not match its hash: SHA-256(prev_hash, newline, record) differs");
  let parsed: Record<string, unknown>;
  try {
    const json: unknown = JSON.parse(record);
    if (!isObject(json) || canonicalJson(json) !== record) return failure(`${at}.record`, "the record is not an object in canonical JSON");
    parsed = json;
  } catch {
    return failure(`${at}.record`, "the record is not canonical JSON");
  }
  if (typeof index !== "number" || !Number.isSafeInteger(index) || index < 0 || index >= size)
    return failure(`${at}.leaf_index`, `a leaf index below the checkpoint's size ${size}`);
  if (
    !Array.isArray(proof) ||
    proof.length > MERKLE_LIMITS.proofHashesMax ||
    !proof.every((p) => typeof p === "string" && /^[A-Za-z0-9+/]{43}=$/.test(p))
  ) {
    return failure(`${at}.inclusion_proof`, "a list of base64 SHA-256 hashes");
  }
  const hashes = (proof as string[]).map((p) => Buffer.from(p, "base64"));
  if (!verifyInclusion(index, size, recordLeaf(hash), hashes, root)) {
    return failure(`${at}.inclusion_proof`, `the record is not proved at leaf ${index} of the checkpoint's tree of ${size}`);
  }
  return { ok: true, parsed };
}

/** The receipt's own members: its format, its ledger id, and the checkpoint signed by the key it names. */
function checkHeader(
  value: Record<string, unknown>,
  keys: readonly CheckpointKey[],
): { readonly ok: true; readonly ledgerId: string; readonly kid: string; readonly checkpoint: VerifiedCheckpoint } | ReceiptFailure {
  if (value["format"] !== RECEIPT_FORMAT) return failure("format", `the format is \`${RECEIPT_FORMAT}\``);
  const ledgerId = value["ledger_id"];
  if (typeof ledgerId !== "string") return failure("ledger_id", "a ledger id");
  const kid = value["kid"];
  if (typeof kid !== "string") return failure("kid", "a key id of the JWKS");
  const checkpoint = verifyCheckpoint(value["checkpoint"] as string, keys);
  if (!checkpoint.ok) return failure("checkpoint", checkpoint.message);
  if (checkpoint.kid !== kid) return failure("kid", `the checkpoint is signed by \`${checkpoint.kid}\`, not \`${kid}\``);
  return { ok: true, ledgerId, kid, checkpoint };
}

/** The settlements: each proved in the tree, a settlement of this decision later in its chain, none listed twice. */
function checkSettlements(
  value: unknown,
  decision: Record<string, unknown>,
  ledgerId: string,
  checkpoint: VerifiedCheckpoint,
): { readonly ok: true; readonly settlements: Record<string, unknown>[] } | ReceiptFailure {
  if (!Array.isArray(value) || value.length > RECEIPT_LIMITS.settlementsMax)
    return failure("settlements", `a list of at most ${RECEIPT_LIMITS.settlementsMax} entries`);
  const settlements: Record<string, unknown>[] = [];
  const seen = new Set<unknown>();
  for (const [i, entry] of value.entries()) {
    const at = `settlements[${i}]`;
    const checked = checkEntry(entry, at, checkpoint.size, checkpoint.root);
    if (!checked.ok) return checked;
    const settlement = checked.parsed;
    if (settlement["kind"] !== "settlement" || settlement["decision_ledger_id"] !== ledgerId)
      return failure(`${at}.record`, "the record is not a settlement of this decision");
    if (settlement["tree_id"] !== decision["tree_id"] || !(Number(settlement["seq"]) > Number(decision["seq"]))) {
      return failure(`${at}.record`, "the settlement is not later in the decision's chain");
    }
    if (seen.has(settlement["ledger_id"])) return failure(`${at}.record`, "the settlement is listed twice");
    seen.add(settlement["ledger_id"]);
    settlements.push(settlement);
  }
  return { ok: true, settlements };
}

/** Whether an Ed25519 signature value (base64url) verifies over the statement's canonical JSON with the key. */
function signatureVerifies(statement: Record<string, unknown>, signatureValue: unknown, key: CheckpointKey | undefined): boolean {
  if (typeof signatureValue !== "string" || !/^[A-Za-z0-9_-]{86}$/.test(signatureValue) || key === undefined) return false;
  try {
    return verify(
      null,
      Buffer.from(canonicalJson(statement), "utf8"),
      createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: key.x! }, format: "jwk" }),
      Buffer.from(signatureValue, "base64url"),
    );
  } catch {
    return false;
  }
}

/** The signature over the whole receipt: by the checkpoint's key, over this ledger id and the receipt's digest. */
function checkReceiptSignature(
  value: Record<string, unknown>,
  ledgerId: string,
  kid: string,
  keys: readonly CheckpointKey[],
): { readonly ok: true } | ReceiptFailure {
  const signature = value["signature"];
  if (!isObject(signature) || !sameKeys(signature, ["alg", "kid", "statement", "value"]) || signature["alg"] !== "EdDSA")
    return failure("signature", "an EdDSA signature with its kid, statement and value");
  if (signature["kid"] !== kid) return failure("signature.kid", "the receipt is signed by the key that signed the checkpoint");
  const statement = signature["statement"];
  if (
    !isObject(statement) ||
    !sameKeys(statement, ["ledger_id", "receipt_sha256", "type"]) ||
    statement["type"] !== RECEIPT_STATEMENT_TYPE ||
    statement["ledger_id"] !== ledgerId
  ) {
    return failure("signature.statement", `the statement is \`${RECEIPT_STATEMENT_TYPE}\` of this ledger id with the receipt's SHA-256`);
  }
  if (statement["receipt_sha256"] !== receiptDigest(value))
    return failure("signature.statement", "the receipt's members are not those the signature covers");
  const key = keys.find((k) => k.kid === kid && k.kty === "OKP" && k.crv === "Ed25519" && typeof k.x === "string");
  if (!signatureVerifies(statement, signature["value"], key))
    return failure("signature.value", "the receipt's signature does not verify with the key it names");
  return { ok: true };
}

/**
 * Checks a receipt with nothing but the keys given (a JWKS's `keys`, held by the verifier): the
 * checkpoint's signature, each record's hash, canonical form and inclusion in the checkpoint's
 * tree, that the settlements settle this decision in its chain, and the signature over the whole.
 * Answers the first member that does not hold.
 */
export function verifyReceipt(value: unknown, keys: readonly CheckpointKey[]): VerifiedReceipt | ReceiptFailure {
  if (!isObject(value) || !sameKeys(value, RECEIPT_KEYS))
    return failure("", `a receipt is an object with exactly ${RECEIPT_KEYS.join(", ")}`);
  const header = checkHeader(value, keys);
  if (!header.ok) return header;
  const { ledgerId, kid, checkpoint } = header;
  const record = checkEntry(value["record"], "record", checkpoint.size, checkpoint.root);
  if (!record.ok) return record;
  const decision = record.parsed;
  if (decision["ledger_id"] !== ledgerId) return failure("ledger_id", "the sealed record is another decision");
  if (decision["kind"] !== "decision") return failure("record.record", "the sealed record is not a decision");
  const settled = checkSettlements(value["settlements"], decision, ledgerId, checkpoint);
  if (!settled.ok) return settled;
  const signed = checkReceiptSignature(value, ledgerId, kid, keys);
  if (!signed.ok) return signed;
  return {
    ok: true,
    ledger_id: ledgerId,
    kid,
    origin: checkpoint.origin,
    tree_size: checkpoint.size,
    leaf_index: (value["record"] as { leaf_index: number }).leaf_index,
    record: decision,
    settlements: settled.settlements,
  };
}
