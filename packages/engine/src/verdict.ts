// A gate's verdict, and the only three ways to make one: pass, skip, fail.

import type { Diagnostic } from "@agent-authority/language";
import type { ReasonCode } from "./reasons.js";
import type { Outcome } from "./types.js";

/** A gate's verdict before it is placed in the decision. */
export type Verdict =
  | {
      readonly ok: true;
      readonly code: ReasonCode;
      readonly reason: string;
      /** The gate does not apply here (certification in `observe`). */
      readonly skipped?: boolean;
      /** The policy gate's: who approved the action, when an approval was presented. */
      readonly approver?: string | null;
    }
  | {
      readonly ok: false;
      readonly outcome: Outcome;
      readonly code: ReasonCode;
      readonly reason: string;
      /** The link of the chain that decided, when one did. */
      readonly grant_id?: string;
      /** The policy gate's: what an approver must satisfy, when the outcome is `gated`. */
      readonly residual?: string;
      /** The policy gate's: the policy's run-time error, when one decided. */
      readonly policy_error?: Diagnostic;
    };

export type Failed = Extract<Verdict, { ok: false }>;

/** What a failing verdict may say besides its outcome, code and reason. */
export interface FailDetails {
  readonly grant_id?: string | undefined;
  readonly residual?: string | undefined;
  readonly policy_error?: Diagnostic | undefined;
}

export function pass(code: ReasonCode, reason: string, approver?: string | null): Verdict {
  return approver === undefined ? { ok: true, code, reason } : { ok: true, code, reason, approver };
}

export function skip(code: ReasonCode, reason: string): Verdict {
  return { ok: true, code, reason, skipped: true };
}

/** A failing verdict; a detail left undefined is left out, not written as undefined. */
export function fail(outcome: Outcome, code: ReasonCode, reason: string, details: FailDetails = {}): Failed {
  const verdict: { -readonly [K in keyof Failed]: Failed[K] } = { ok: false, outcome, code, reason };
  if (details.grant_id !== undefined) verdict.grant_id = details.grant_id;
  if (details.residual !== undefined) verdict.residual = details.residual;
  if (details.policy_error !== undefined) verdict.policy_error = details.policy_error;
  return verdict;
}
