// What the authorize and idempotency services share, with no code of their own: the claim an
// idempotent request brings and an answer ready to send. A leaf module, so neither imports the other.

import type { GateName, Outcome } from "@agent-authority/engine";

export const JSON_TYPE = "application/json; charset=utf-8";

/** What an idempotent request brings: the key, and the hash of what was asked under it. */
export interface RequestClaim {
  readonly key: string;
  readonly method: string;
  readonly path: string;
  readonly requestHash: string;
}

/** A request's claim under its caller's key: idempotency keys are kept per calling key. */
export interface IdempotencyClaim extends RequestClaim {
  readonly callerKeyId: string;
}

/** An answer ready to send: the exact bytes, so that a replay is byte for byte the same. */
export interface PreparedAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
  /** True when this is the stored first answer of an idempotency key. */
  readonly replayed: boolean;
  /** The id of the key that asked, for the request's log line; absent when no key was recognised. */
  readonly keyId?: string;
  /** A new decision's outcome and the gate that decided it (null: every gate passed), for the metrics; absent on a replay. */
  readonly outcome?: Outcome;
  readonly gate?: GateName | null;
  /** The breakers this decision tripped, by action and mode, for the metrics; absent when none did. */
  readonly trips?: readonly { readonly action: string; readonly mode: string }[];
}
