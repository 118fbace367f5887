// The server key: 32 random bytes that never enter the database. It seals the signing keys the
// database keeps (AES-256-GCM) and keys the HMAC of page cursors, each through a key derived for
// that one purpose (HKDF-SHA256). Every replica must hold the same one (docs/operations.md).

import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";

export const SERVER_KEY_LIMITS = Object.freeze({
  /** The key itself. */
  keyBytes: 32,
  /** The longest key file read; a real one is 44 bytes. */
  fileBytesMax: 1_024,
});

/** The purposes keys are derived for; each derived key serves only its own. */
export type KeyPurpose = "cursor" | "signing-key-seal";

/** A server key that cannot be read or made: the server refuses to start (exit 1) with the reason. */
export class ServerKeyError extends Error {}

const KEY_TEXT = /^[A-Za-z0-9_-]{43}$/;

/** The key in its text form (base64url, 43 characters), as a key file or AUTHORITY_SERVER_KEY holds it. */
export function parseServerKey(text: string, origin: string): Buffer {
  const trimmed = text.trim();
  if (!KEY_TEXT.test(trimmed))
    throw new ServerKeyError(`${origin} must hold 32 bytes in base64url (43 characters), as \`authority serve\` writes it`);
  return Buffer.from(trimmed, "base64url");
}

/** A new key in its text form. */
export function newServerKeyText(): string {
  return randomBytes(SERVER_KEY_LIMITS.keyBytes).toString("base64url");
}

/**
 * The key of `file`, written first when there is none: a new key goes to a file of its own (mode
 * 0600) and is linked into place, so that replicas starting at once all end with the one key that
 * won, never with half a file.
 */
export function serverKeyFromFile(file: string): Buffer {
  try {
    return readKeyFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  mkdirSync(dirname(file), { recursive: true });
  const draft = `${file}.${process.pid}.${randomBytes(6).toString("hex")}`;
  const fd = openSync(draft, "wx", 0o600);
  try {
    writeSync(fd, `${newServerKeyText()}\n`);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    rmSync(draft, { force: true });
  }
  return readKeyFile(file);
}

function readKeyFile(file: string): Buffer {
  const bytes = readFileSync(file);
  if (bytes.length > SERVER_KEY_LIMITS.fileBytesMax)
    throw new ServerKeyError(`the server key file \`${file}\` is larger than ${SERVER_KEY_LIMITS.fileBytesMax} bytes`);
  return parseServerKey(bytes.toString("utf8"), `the server key file \`${file}\``);
}

/** The key derived from the server key for one purpose. */
export function derivedKey(serverKey: Buffer, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync("sha256", serverKey, Buffer.alloc(0), `agent-authority ${purpose} v1`, 32));
}

const SEALED = /^v1\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{22})$/;

/** `plain` encrypted and authenticated under `key`, bound to `context` (which must match to open it). */
export function sealBytes(key: Buffer, plain: Buffer, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(context, "utf8"));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return `v1.${iv.toString("base64url")}.${body.toString("base64url")}.${cipher.getAuthTag().toString("base64url")}`;
}

/** The bytes `sealBytes` sealed under `key` with `context`; undefined when the key, context or text differ. */
export function openSealed(key: Buffer, sealed: string, context: string): Buffer | undefined {
  const parts = SEALED.exec(sealed);
  if (parts === null) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(parts[1]!, "base64url"));
    decipher.setAAD(Buffer.from(context, "utf8"));
    decipher.setAuthTag(Buffer.from(parts[3]!, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(parts[2]!, "base64url")), decipher.final()]);
  } catch {
    return undefined;
  }
}
