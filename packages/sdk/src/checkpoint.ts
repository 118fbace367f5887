// Signed tree heads in the C2SP tlog-checkpoint format, signed as C2SP signed notes with Ed25519:
// writing the note, parsing it strictly, and checking its signature with keys of a JWKS. Pure.

import { createHash, createPublicKey, verify } from "node:crypto";

export const CHECKPOINT_LIMITS = Object.freeze({
  /** A checkpoint note longer than this is refused before it is read. */
  noteBytesMax: 8_192,
  /** An origin or key name: 1 to 255 characters, printable ASCII without spaces or `+`. */
  nameLengthMax: 255,
  /** Signature lines read; more is refused. */
  signaturesMax: 16,
});

/** The C2SP signature type byte of an Ed25519 key. */
const ED25519_TYPE = 0x01;
const NAME = /^[\x21-\x2a\x2c-\x7e]+$/;
const SIZE = /^(0|[1-9][0-9]{0,15})$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** `— ` (U+2014 and a space) opens every signature line. */
const SIGNATURE_PREFIX = "\u2014 ";

/** A checkpoint's body, the three lines the signature covers. */
export interface CheckpointBody {
  readonly origin: string;
  readonly size: number;
  /** The tree hash, 32 bytes. */
  readonly root: Buffer;
}

/** A public key as a JWKS lists it (RFC 8037); only Ed25519 keys are used. */
export interface CheckpointKey {
  readonly kty: string;
  readonly crv?: string;
  readonly x?: string;
  readonly kid?: string;
}

export function isCheckpointName(name: string): boolean {
  return name.length >= 1 && name.length <= CHECKPOINT_LIMITS.nameLengthMax && NAME.test(name);
}

/** The note text a checkpoint's signature covers: origin, size and root hash, each on its line. */
export function checkpointText(body: CheckpointBody): string {
  return `${body.origin}\n${body.size}\n${body.root.toString("base64")}\n`;
}

/** The C2SP key id: the first 4 bytes of SHA-256(name || "\n" || 0x01 || the raw public key). */
export function noteKeyId(name: string, publicKey: Uint8Array): Buffer {
  return createHash("sha256").update(`${name}\n`, "utf8").update(Uint8Array.of(ED25519_TYPE)).update(publicKey).digest().subarray(0, 4);
}

/** A signed note: the text, a blank line, and one signature line `— <name> <base64(key id || signature)>`. */
export function signedNote(text: string, name: string, publicKey: Uint8Array, signature: Uint8Array): string {
  return `${text}\n${SIGNATURE_PREFIX}${name} ${Buffer.concat([noteKeyId(name, publicKey), signature]).toString("base64")}\n`;
}

export type CheckpointFault =
  | "too_long"
  | "malformed"
  | "origin"
  | "size"
  | "root"
  | "extension"
  | "unsigned"
  | "unknown_key"
  | "bad_signature";

/** A checkpoint whose signature verified: its body and the key (its JWKS `kid`) and name that signed it. */
export interface VerifiedCheckpoint extends CheckpointBody {
  readonly text: string;
  readonly kid: string;
  readonly keyName: string;
}

export type CheckpointCheck =
  | ({ readonly ok: true } & VerifiedCheckpoint)
  | { readonly ok: false; readonly fault: CheckpointFault; readonly message: string };

const fail = (fault: CheckpointFault, message: string): CheckpointCheck => ({ ok: false, fault, message });

/** Parses a checkpoint body (the signed text) strictly: three lines, no extension lines. */
export function parseCheckpointText(text: string): CheckpointBody | { fault: CheckpointFault; message: string } {
  if (!text.endsWith("\n")) return { fault: "malformed", message: "the checkpoint text does not end with a newline" };
  const lines = text.slice(0, -1).split("\n");
  if (lines.length < 3) return { fault: "malformed", message: "a checkpoint has an origin, a size and a root hash, one a line" };
  if (lines.length > 3) return { fault: "extension", message: "this checkpoint has extension lines, which these checkpoints never have" };
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (!isCheckpointName(origin)) return { fault: "origin", message: "line 1: the origin is 1 to 255 printable characters without spaces" };
  if (!SIZE.test(sizeText) || !Number.isSafeInteger(Number(sizeText)))
    return { fault: "size", message: "line 2: the tree size is a decimal integer without leading zeros" };
  const root = BASE64.test(rootText) ? Buffer.from(rootText, "base64") : Buffer.alloc(0);
  if (root.length !== 32 || root.toString("base64") !== rootText)
    return { fault: "root", message: "line 3: the root hash is 32 bytes in standard base64" };
  return { origin, size: Number(sizeText), root };
}

function ed25519(key: CheckpointKey): { raw: Buffer; verifier: ReturnType<typeof createPublicKey> } | undefined {
  if (key.kty !== "OKP" || key.crv !== "Ed25519" || typeof key.x !== "string" || !/^[A-Za-z0-9_-]{43}$/.test(key.x)) return undefined;
  try {
    return {
      raw: Buffer.from(key.x, "base64url"),
      verifier: createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: key.x }, format: "jwk" }),
    };
  } catch {
    return undefined;
  }
}

/**
 * Checks a signed checkpoint against the keys given (a JWKS's `keys`): the note is parsed strictly,
 * and one of its signature lines must name a key of the set (by C2SP key id, which binds the key
 * name) and verify over the text. `origin`, when given, must be the checkpoint's.
 */
export function verifyCheckpoint(note: string, keys: readonly CheckpointKey[], origin?: string): CheckpointCheck {
  if (typeof note !== "string") return fail("malformed", "a checkpoint is text");
  if (Buffer.byteLength(note, "utf8") > CHECKPOINT_LIMITS.noteBytesMax)
    return fail("too_long", `a checkpoint is at most ${CHECKPOINT_LIMITS.noteBytesMax} bytes`);
  const split = note.indexOf("\n\n");
  if (split < 0 || !note.endsWith("\n")) return fail("unsigned", "the note has no signature block (a blank line, then signature lines)");
  const text = note.slice(0, split + 1);
  const body = parseCheckpointText(text);
  if ("fault" in body) return fail(body.fault, body.message);
  if (origin !== undefined && body.origin !== origin)
    return fail("origin", `the checkpoint's origin is \`${body.origin}\`, not \`${origin}\``);
  const signatureLines = note.slice(split + 2, -1).split("\n");
  if (signatureLines.length > CHECKPOINT_LIMITS.signaturesMax)
    return fail("malformed", `a checkpoint has at most ${CHECKPOINT_LIMITS.signaturesMax} signatures`);
  const usable = keys.map((key) => ({ key, ed: ed25519(key) })).filter((k) => k.ed !== undefined);
  let named = false;
  for (const line of signatureLines) {
    if (!line.startsWith(SIGNATURE_PREFIX)) return fail("malformed", "a signature line starts with `— ` (an em dash and a space)");
    const parts = line.slice(SIGNATURE_PREFIX.length).split(" ");
    if (parts.length !== 2 || !isCheckpointName(parts[0]!) || !BASE64.test(parts[1]!))
      return fail("malformed", "a signature line is `— <key name> <base64 signature>`");
    const [name, encoded] = parts as [string, string];
    const blob = Buffer.from(encoded, "base64");
    if (blob.toString("base64") !== encoded || blob.length !== 4 + 64) continue;
    const id = blob.subarray(0, 4);
    for (const { key, ed } of usable) {
      if (!noteKeyId(name, ed!.raw).equals(id)) continue;
      named = true;
      if (verify(null, Buffer.from(text, "utf8"), ed!.verifier, blob.subarray(4))) {
        return { ok: true, ...body, text, kid: key.kid ?? "", keyName: name };
      }
    }
  }
  return named
    ? fail("bad_signature", "the checkpoint's signature does not verify with the key it names")
    : fail("unknown_key", "no signature of the checkpoint is by a key of the set given");
}
