// Idempotency-Key (DESIGN.md §6): the same key and body replay the first answer byte for byte; the
// same key with another request is refused. Keys live in the database, per calling key, so they
// survive restarts and hold across processes; they are kept at least 24 hours.

import { createHash } from "node:crypto";
import { ApiProblem } from "../http/problem.js";
import type { IdempotencyClaim, RequestClaim } from "./authorize.js";

export const IDEMPOTENCY_HEADER = "idempotency-key";
/** How long a key is kept before it may be pruned: the 24 hours of DESIGN.md §6. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** A key is 1 to 255 visible ASCII characters (a UUID is the usual choice). */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The claim of a request before its caller is known, or undefined when it carries no key; a malformed key is a 400. */
export function requestClaim(header: string | string[] | undefined, method: string, path: string, body: Buffer): RequestClaim | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== "string" || !KEY_PATTERN.test(header)) {
    throw new ApiProblem("invalid_idempotency_key", "`Idempotency-Key` must be 1 to 255 visible ASCII characters, sent once");
  }
  const requestHash = createHash("sha256").update(method).update("\n").update(path).update("\n").update(body).digest("hex");
  return { key: header, method, path, requestHash };
}

/** The claim of a request under its caller's key, or undefined when it carries no key; a malformed key is a 400. */
export function idempotencyClaim(header: string | string[] | undefined, callerKeyId: string, method: string, path: string, body: Buffer): IdempotencyClaim | undefined {
  const claim = requestClaim(header, method, path, body);
  return claim === undefined ? undefined : { ...claim, callerKeyId };
}

export function reusedKey(claim: RequestClaim): ApiProblem {
  return new ApiProblem("idempotency_key_reused", `\`Idempotency-Key\` \`${claim.key.slice(0, 80)}\` was used with another request; use a new key for a new request`);
}
