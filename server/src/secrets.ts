// API key secrets: 256 random bits, shown once, kept only as a SHA-256 hash (docs/decisions/0302).

import { hash, randomBytes } from "node:crypto";

const SECRET_PREFIX = "aa_";

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64url");
}

/**
 * A fast unsalted hash is enough here because the secret is 256 random bits: there is nothing to
 * guess, so a slow password hash would only slow every request down.
 */
export function hashSecret(secret: string): string {
  return hash("sha256", secret, "hex");
}

/** An operator-supplied key must be long enough that the same argument holds. */
export function isStrongEnough(secret: string): boolean {
  return secret.length >= 32 && /^[\x21-\x7e]+$/.test(secret);
}
