// Verifying the server's word: a decision counts only when its signature verifies under one of the
// server's public keys (Ed25519 through node:crypto; no dependency) and its signed statement is
// about this very request: the nonce the client sent, the grant, tool, amount, currency and args
// it asked about, and the ledger id, outcome and time the answer shows (docs/verification.md).

import { createPublicKey, hash, verify, type KeyObject } from "node:crypto";
import { canonicalJson } from "./canonical-json.js";
import { leafHash, verifyInclusion } from "./merkle.js";
import type { AuthorizeBody, SettleBody, SigningKeySet } from "./generated/types.js";

/** Bounds on what a server's key set and answers may make the client do. */
export const VERIFY_LIMITS = Object.freeze({
  /** Keys read from a key set; the rest are ignored. */
  keysMax: 64,
  /** Random bytes of a nonce (22 base64url characters). */
  nonceBytes: 16,
  /**
   * Leaves of a signed batch (`tree_size`), so at most 16 hashes in an inclusion path. The server
   * signs at most one group-commit batch (256 decisions) at a time.
   */
  batchLeavesMax: 65_536,
  /** Hashes of an inclusion path: log2 of batchLeavesMax. */
  pathHashesMax: 16,
  /** Batch roots a keyring remembers as verified, so that a batch's signature is checked once (oldest forgotten first). */
  verifiedRootsMax: 1_024,
});

/**
 * The first line of the text a batch signature covers. It has spaces, which no checkpoint's origin
 * may have, and is not JSON, which every single-statement signature covers: a signed batch root
 * cannot pass for a ledger checkpoint, a receipt or a statement, nor any of them for it.
 */
export const ANSWER_BATCH_HEADER = "agent-authority answer batch v2";

/** The text a batch signature (`v: 2`) covers: the header, the tree size and the root hash (base64url), each on its line. */
export function answerBatchText(treeSize: number, root: Uint8Array): string {
  return `${ANSWER_BATCH_HEADER}\n${treeSize}\n${base64url(root)}\n`;
}

/** The leaf of a statement in a signed batch: SHA-256(0x00 ‖ its canonical JSON), RFC 9162 §2.1.1; undefined when it has no canonical form. */
export function statementLeaf(statement: unknown): Uint8Array | undefined {
  const text = canonicalOrUndefined(statement);
  return text === undefined ? undefined : leafHash(text);
}

/** Base64url without padding (RFC 4648 §5), as the server writes a root: the bytes of the view only. */
function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url");
}

/** Why an answer was not accepted as the server's. */
export type VerificationReason = "unsigned" | "unknown_key" | "bad_signature" | "replayed" | "mismatch";

export interface VerificationFailure {
  readonly reason: VerificationReason;
  /** For `mismatch`: the statement's member that does not match the request or the answer. */
  readonly field?: string;
  readonly message: string;
}

/** Where the client gets the server's keys: a JWKS it was given, or the server's, fetched once and pinned. */
export type SigningKeysOption = SigningKeySet | "fetch-once";

/** A fresh nonce: 128 random bits in base64url. */
export function newNonce(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(VERIFY_LIMITS.nonceBytes));
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The nonce of a call repeated under the caller's Idempotency-Key: SHA-256 of the key, 128 bits in
 * base64url. Hashed in one synchronous call: WebCrypto's `digest` costs a job and a promise, about
 * a hundred times the hash of so short a text.
 */
export async function nonceOfKey(idempotencyKey: string): Promise<string> {
  const digest = hash("sha256", `authority nonce\n${idempotencyKey}`, "buffer");
  return digest.subarray(0, VERIFY_LIMITS.nonceBytes).toString("base64url");
}

/** The canonical text of a value (RFC 8785), or undefined when it has none (a lone surrogate, too deep). */
function canonicalOrUndefined(value: unknown): string | undefined {
  try {
    return canonicalJson(value);
  } catch {
    return undefined;
  }
}

/** The bytes of a base64url text; undefined for any text that is not one (a stray length included), never a throw. */
function fromBase64url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  let binary: string;
  try {
    binary = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4));
  } catch {
    return undefined;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Whether `signature` is `key`'s over the UTF-8 bytes of `text`; anything node:crypto refuses does not verify. */
function ed25519Verifies(key: KeyObject, text: string, signature: Uint8Array): boolean {
  try {
    return verify(null, Buffer.from(text, "utf8"), key, signature);
  } catch {
    return false;
  }
}

/** An Ed25519 public key from its JWK `x`; undefined when it is not one. */
function publicKeyOf(x: string): KeyObject | undefined {
  try {
    const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
    return key.asymmetricKeyType === "ed25519" ? key : undefined;
  } catch {
    return undefined;
  }
}

/** SHA-256 of a value's canonical text; undefined, which matches no signed hash, when it has none. */
async function sha256HexOf(value: unknown): Promise<string | undefined> {
  const text = canonicalOrUndefined(value);
  return text === undefined ? undefined : hash("sha256", text, "hex");
}

/**
 * The public keys of a key set by kid, imported once; keys that are not Ed25519, or whose `x` is not
 * a public key, are left out. node:crypto verifies in the calling thread: a third less CPU than
 * WebCrypto's job, and no trip through the thread pool (decision 1903).
 */
export class SigningKeyring {
  readonly #keys = new Map<string, KeyObject>();

  constructor(set: SigningKeySet) {
    const keys = Array.isArray(set?.keys) ? set.keys.slice(0, VERIFY_LIMITS.keysMax) : [];
    for (const key of keys) {
      if (key?.kty !== "OKP" || key.crv !== "Ed25519" || typeof key.x !== "string" || typeof key.kid !== "string") continue;
      const imported = publicKeyOf(key.x);
      if (imported !== undefined) this.#keys.set(key.kid, imported);
    }
  }

  get size(): number {
    return this.#keys.size;
  }

  key(kid: string): KeyObject | undefined {
    return this.#keys.get(kid);
  }

  /**
   * Batch signatures that verified, each as its key id, its value and the text it covers (tree size
   * and root): another answer of the same batch needs only its inclusion path checked. Ed25519
   * verification is deterministic, so the same key, value and text verify again; anything else,
   * even one byte of it, is verified in full. Bounded by `VERIFY_LIMITS.verifiedRootsMax`.
   */
  readonly #verifiedRoots = new Set<string>();

  /** True when this signature over this batch text verified before with this keyring. */
  verifiedBefore(kid: string, value: string, text: string): boolean {
    return this.#verifiedRoots.has(`${kid}\n${value}\n${text}`);
  }

  /** Remembers a batch signature that verified; the oldest is forgotten past the bound. */
  rememberVerified(kid: string, value: string, text: string): void {
    this.#verifiedRoots.add(`${kid}\n${value}\n${text}`);
    if (this.#verifiedRoots.size > VERIFY_LIMITS.verifiedRootsMax) this.#verifiedRoots.delete(this.#verifiedRoots.values().next().value!);
  }
}

const fail = (reason: VerificationReason, message: string, field?: string): VerificationFailure => ({
  reason,
  message,
  ...(field === undefined ? {} : { field }),
});

/** A signature over one statement (the first form, no `v`): Ed25519 over its canonical JSON. */
interface SingleSignature {
  readonly v: 1;
  readonly kid: string;
  readonly statement: Record<string, unknown>;
  readonly value: string;
}

/** A signature over a batch (`v: 2`): Ed25519 over the batch's root, and the statement's path to it. */
interface BatchSignature {
  readonly v: 2;
  readonly kid: string;
  readonly statement: Record<string, unknown>;
  readonly value: string;
  readonly treeSize: number;
  readonly leafIndex: number;
  readonly path: readonly Uint8Array[];
  readonly root: Uint8Array;
}

/** A 32-byte hash in base64url, or undefined. */
function hashOf(text: unknown): Uint8Array | undefined {
  const bytes = typeof text === "string" ? fromBase64url(text) : undefined;
  return bytes !== undefined && bytes.length === 32 ? bytes : undefined;
}

/** The batch members of a `v: 2` signature, checked within VERIFY_LIMITS; a failure when they are not well formed. */
function batchOf(
  signature: Record<string, unknown>,
): Pick<BatchSignature, "treeSize" | "leafIndex" | "path" | "root"> | VerificationFailure {
  const { tree_size: treeSize, leaf_index: leafIndex, path, root } = signature;
  if (typeof treeSize !== "number" || !Number.isSafeInteger(treeSize) || treeSize < 1)
    return fail("unsigned", "the batch signature's `tree_size` is not a positive integer");
  if (treeSize > VERIFY_LIMITS.batchLeavesMax)
    return fail("bad_signature", `the signed batch has ${treeSize} leaves, more than the ${VERIFY_LIMITS.batchLeavesMax} a client accepts`);
  if (typeof leafIndex !== "number" || !Number.isSafeInteger(leafIndex) || leafIndex < 0 || leafIndex >= treeSize)
    return fail("unsigned", "the batch signature's `leaf_index` is not a leaf of its tree");
  if (!Array.isArray(path)) return fail("unsigned", "the batch signature's `path` is not a list of hashes");
  if (path.length > VERIFY_LIMITS.pathHashesMax)
    return fail("bad_signature", `the inclusion path has ${path.length} hashes, more than ${VERIFY_LIMITS.pathHashesMax}`);
  const hashes = path.map(hashOf);
  const rootHash = hashOf(root);
  if (rootHash === undefined || !hashes.every((hash): hash is Uint8Array => hash !== undefined))
    return fail("unsigned", "the batch signature's `root` and `path` must be 32-byte hashes in base64url");
  return { treeSize, leafIndex, path: hashes, root: rootHash };
}

/** The signature member of an answer in either form, checked to be well formed; a failure when it is not. */
function signatureOf(answer: Record<string, unknown>): SingleSignature | BatchSignature | VerificationFailure {
  const signature = answer["signature"];
  const malformed = fail("unsigned", "the answer carries no well-formed signature");
  if (typeof signature !== "object" || signature === null || Array.isArray(signature)) return malformed;
  const fields = signature as Record<string, unknown>;
  const { alg, kid, statement, value, v } = fields;
  if (alg !== "EdDSA" || typeof kid !== "string" || typeof value !== "string") return malformed;
  if (typeof statement !== "object" || statement === null || Array.isArray(statement)) return malformed;
  const signed = { kid, statement: statement as Record<string, unknown>, value };
  if (v === undefined) return { v: 1, ...signed };
  if (v !== 2) return fail("unsigned", `the answer's signature is of a version this client does not know (\`v\` ${JSON.stringify(v)})`);
  const batch = batchOf(fields);
  return "reason" in batch ? batch : { v: 2, ...signed, ...batch };
}

/**
 * Whether the answer (a decision or a settlement) is signed by a key of `keyring`; the signed
 * statement when it is. Both forms verify: one signature over the statement's canonical JSON, or
 * (`v: 2`) one over a batch's root, to which the statement's leaf and its path must lead. The one
 * verifier of the SDK, `authority signature verify` and the gateway.
 */
export async function signedStatement(
  answer: Record<string, unknown>,
  keyring: SigningKeyring,
): Promise<{ statement: Record<string, unknown> } | { failure: VerificationFailure }> {
  const signature = signatureOf(answer);
  if ("reason" in signature) return { failure: signature };
  const key = keyring.key(signature.kid);
  if (key === undefined)
    return {
      failure: fail(
        "unknown_key",
        `the answer is signed by \`${signature.kid}\`, which is not one of the server's keys given to this client`,
      ),
    };
  const bytes = fromBase64url(signature.value);
  if (bytes === undefined || bytes.length !== 64)
    return { failure: fail("bad_signature", "the signature value is not 64 bytes in base64url") };
  let signed: string | undefined;
  if (signature.v === 1) signed = canonicalOrUndefined(signature.statement);
  else {
    const leaf = statementLeaf(signature.statement);
    if (leaf === undefined || !verifyInclusion(signature.leafIndex, signature.treeSize, leaf, signature.path, signature.root))
      return {
        failure: fail("bad_signature", "the statement is not in the signed batch: its inclusion path does not lead to the signed root"),
      };
    signed = answerBatchText(signature.treeSize, signature.root);
    // The root of a batch verified before: its statement's path to it was checked just above.
    if (keyring.verifiedBefore(signature.kid, signature.value, signed)) return { statement: signature.statement };
  }
  const valid = signed !== undefined && ed25519Verifies(key, signed, bytes);
  if (valid && signature.v === 2) keyring.rememberVerified(signature.kid, signature.value, signed!);
  return valid
    ? { statement: signature.statement }
    : {
        failure: fail(
          "bad_signature",
          signature.v === 1
            ? "the signature does not verify over the answer's statement"
            : "the signature does not verify over the batch's root",
        ),
      };
}

/**
 * Checks a decision answer to `body`, sent with `nonce`: undefined when the server signed it for
 * this request, otherwise why not.
 */
export async function verifyDecision(
  answer: Record<string, unknown>,
  body: AuthorizeBody,
  nonce: string,
  keyring: SigningKeyring,
): Promise<VerificationFailure | undefined> {
  return statementFailure(answer, keyring, nonce, {
    type: "authority.decision.v1",
    grant_id: body.grant_id,
    tool: body.tool,
    amount_minor: body.amount_minor ?? null,
    currency: body.currency ?? null,
    args_sha256: body.args === undefined ? null : await sha256HexOf(body.args),
    ledger_id: answer["ledger_id"],
    outcome: answer["outcome"],
    decided_at: answer["decided_at"],
  });
}

/**
 * Checks a settlement answer to `body` on the decision `decisionLedgerId`, sent with `nonce`:
 * undefined when the server signed this very settlement for this request, otherwise why not. The
 * statement must name the decision and the amount asked for, and every figure the answer shows
 * (held, released, currency, grant, time, its own ledger id) must be the signed one.
 */
export async function verifySettlement(
  answer: Record<string, unknown>,
  decisionLedgerId: string,
  body: SettleBody,
  nonce: string,
  keyring: SigningKeyring,
): Promise<VerificationFailure | undefined> {
  const failure = await statementFailure(answer, keyring, nonce, {
    type: "authority.settlement.v1",
    decision_ledger_id: decisionLedgerId,
    amount_minor: body.amount_minor,
    ledger_id: answer["ledger_id"],
    grant_id: answer["grant_id"],
    currency: answer["currency"] ?? null,
    held_minor: answer["held_minor"],
    released_minor: answer["released_minor"],
    settled_at: answer["settled_at"],
  });
  if (failure !== undefined) return failure;
  if (answer["decision_ledger_id"] !== decisionLedgerId || answer["amount_minor"] !== body.amount_minor) {
    return fail(
      "mismatch",
      "the settlement answered is not the one asked for",
      answer["decision_ledger_id"] !== decisionLedgerId ? "decision_ledger_id" : "amount_minor",
    );
  }
  return undefined;
}

/**
 * Why a signed answer is not the server's word for this request: its signature, its nonce, or the
 * first member of `expected` the signed statement does not hold; undefined when it is.
 */
async function statementFailure(
  answer: Record<string, unknown>,
  keyring: SigningKeyring,
  nonce: string,
  expected: Readonly<Record<string, unknown>>,
): Promise<VerificationFailure | undefined> {
  const checked = await signedStatement(answer, keyring);
  if ("failure" in checked) return checked.failure;
  const signed = checked.statement;
  if (signed["nonce"] !== nonce)
    return fail("replayed", "the signed statement answers another request (its nonce is not the one sent)", "nonce");
  for (const [field, value] of Object.entries(expected)) {
    if (signed[field] !== value)
      return fail("mismatch", `the signed statement's \`${field}\` does not match the request or the answer`, field);
  }
  return undefined;
}
