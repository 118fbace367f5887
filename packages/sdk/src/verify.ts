// Verifying the server's word: a decision counts only when its signature verifies under one of the
// server's public keys (Ed25519 through WebCrypto; no dependency) and its signed statement is
// about this very request: the nonce the client sent, the grant, tool, amount, currency and args
// it asked about, and the ledger id, outcome and time the answer shows (docs/verification.md).

import { canonicalJson } from "./canonical-json.js";
import type { AuthorizeBody, SettleBody, SigningKeySet } from "./generated/types.js";

/** Bounds on what a server's key set and answers may make the client do. */
export const VERIFY_LIMITS = Object.freeze({
  /** Keys read from a key set; the rest are ignored. */
  keysMax: 64,
  /** Random bytes of a nonce (22 base64url characters). */
  nonceBytes: 16,
});

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

/** The nonce of a call repeated under the caller's Idempotency-Key: SHA-256 of the key, 128 bits in base64url. */
export async function nonceOfKey(idempotencyKey: string): Promise<string> {
  const digest = new Uint8Array(
    await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(`authority nonce\n${idempotencyKey}`)),
  );
  let text = "";
  for (const byte of digest.subarray(0, VERIFY_LIMITS.nonceBytes)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
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

/** SHA-256 of a value's canonical text; undefined, which matches no signed hash, when it has none. */
async function sha256HexOf(value: unknown): Promise<string | undefined> {
  const text = canonicalOrUndefined(value);
  return text === undefined ? undefined : sha256Hex(text);
}

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** An imported public key, as WebCrypto hands it back. */
type VerifyKey = Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>;

/** The public keys of a key set by kid, imported once; keys that are not Ed25519 are left out. */
export class SigningKeyring {
  readonly #keys = new Map<string, Promise<VerifyKey | undefined>>();

  constructor(set: SigningKeySet) {
    const keys = Array.isArray(set?.keys) ? set.keys.slice(0, VERIFY_LIMITS.keysMax) : [];
    for (const key of keys) {
      if (key?.kty !== "OKP" || key.crv !== "Ed25519" || typeof key.x !== "string" || typeof key.kid !== "string") continue;
      const x = key.x;
      this.#keys.set(
        key.kid,
        globalThis.crypto.subtle
          .importKey("jwk", { kty: "OKP", crv: "Ed25519", x }, { name: "Ed25519" }, false, ["verify"])
          .catch(() => undefined),
      );
    }
  }

  get size(): number {
    return this.#keys.size;
  }

  key(kid: string): Promise<VerifyKey | undefined> {
    return this.#keys.get(kid) ?? Promise.resolve(undefined);
  }
}

const fail = (reason: VerificationReason, message: string, field?: string): VerificationFailure => ({
  reason,
  message,
  ...(field === undefined ? {} : { field }),
});

/** The signature member of an answer, checked to be well formed; undefined when it is not. */
function signatureOf(answer: Record<string, unknown>): { kid: string; statement: Record<string, unknown>; value: string } | undefined {
  const signature = answer["signature"];
  if (typeof signature !== "object" || signature === null) return undefined;
  const { alg, kid, statement, value } = signature as Record<string, unknown>;
  if (alg !== "EdDSA" || typeof kid !== "string" || typeof value !== "string") return undefined;
  if (typeof statement !== "object" || statement === null || Array.isArray(statement)) return undefined;
  return { kid, statement: statement as Record<string, unknown>, value };
}

/** Whether the answer (a decision or a settlement) is signed by a key of `keyring`; the signed statement when it is. */
export async function signedStatement(
  answer: Record<string, unknown>,
  keyring: SigningKeyring,
): Promise<{ statement: Record<string, unknown> } | { failure: VerificationFailure }> {
  const signature = signatureOf(answer);
  if (signature === undefined) return { failure: fail("unsigned", "the answer carries no well-formed signature") };
  const key = await keyring.key(signature.kid);
  if (key === undefined)
    return {
      failure: fail(
        "unknown_key",
        `the answer is signed by \`${signature.kid}\`, which is not one of the server's keys given to this client`,
      ),
    };
  const bytes = fromBase64url(signature.value);
  const signed = canonicalOrUndefined(signature.statement);
  const valid =
    bytes !== undefined &&
    bytes.length === 64 &&
    signed !== undefined &&
    (await globalThis.crypto.subtle.verify({ name: "Ed25519" }, key, bytes, new TextEncoder().encode(signed)));
  return valid
    ? { statement: signature.statement }
    : { failure: fail("bad_signature", "the signature does not verify over the answer's statement") };
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
