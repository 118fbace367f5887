// The engine's inputs and outputs: a request, a delegation chain with its usage, and the decision.

import type { Diagnostic } from "@agent-authority/language";
import type { EnforcementMode, GrantTerms } from "@agent-authority/lattice";

/** The four outcomes; `allow` is the one that permits. */
export type Outcome = "allow" | "deny" | "exhausted" | "gated";

/** The nine gates of docs/decisions.md, in the order they run. */
export const GATES = Object.freeze([
  "grant",
  "status",
  "window",
  "audience",
  "certification",
  "scope",
  "conditions",
  "policy",
  "budget",
] as const);
export type GateName = (typeof GATES)[number];

/** What an agent presents about itself; the certificate's own field names. */
export interface Attestation {
  readonly manifest_hash: string;
  readonly content_hash: string;
  readonly provenance_version: string;
}

/** The calling agent's current certificate for the server's environment, as the store holds it. */
export interface CertificateState extends Attestation {
  readonly certificate_id: string;
  readonly agent_id: string;
  readonly environment: string;
  readonly revoked_at: number | null;
}

/** An approval of a gated decision, validated and looked up by the store; single use is the store's job. */
export interface ApprovalRecord {
  readonly approval_id: string;
  readonly approver: string;
  readonly grant_id: string;
  readonly tool: string;
  readonly amount_ceiling_minor: number;
  readonly expires_at: number;
}

/** The action an agent asks about. */
export interface DecisionRequest {
  readonly grant_id: string;
  /** The calling agent, from its key: never from the body. */
  readonly agent_id: string;
  readonly tool: string;
  /** Minor units; absent means 0 (no spending). */
  readonly amount_minor?: number | null;
  readonly currency?: string | null;
  readonly audience?: string | null;
  readonly args?: Readonly<Record<string, unknown>> | null;
  readonly context?: { readonly clean?: boolean | null } | null;
  readonly attestation?: Attestation | null;
  readonly approval?: ApprovalRecord | null;
}

/** A hold on one grant's amount budget. */
export interface LiveHold {
  readonly amount_minor: number;
  readonly expires_at: number;
}

/** One grant of the delegation chain; the chain runs root first and ends with the requested grant. */
export interface ChainLink {
  readonly grant_id: string;
  readonly agent_id: string;
  readonly status: "pending_approval" | "active" | "revoked";
  readonly terms: GrantTerms;
  readonly usage: {
    /** Allowed (counted) decisions so far under this grant and its subtree. */
    readonly uses: number;
    readonly settled_minor: number;
    /** Holds as stored; expired ones are ignored by the engine itself. */
    readonly holds: readonly LiveHold[];
  };
}

/** The rest of the world the decision needs, passed in so that the engine stays pure. */
export interface DecisionState {
  /** The environment the server runs in. */
  readonly environment: string;
  /** The calling agent's current certificate, or null when it has none. */
  readonly certificate: CertificateState | null;
  /** The longest a hold may live, in milliseconds; `DEFAULT_HOLD_LIFETIME_MS` when absent. */
  readonly hold_lifetime_ms?: number;
}

/** How one gate went. `not_reached` follows the gate that decided; `skipped` did not apply. */
export interface GateResult {
  readonly gate: GateName;
  readonly result: "pass" | "fail" | "skipped" | "not_reached";
  /** A stable reason code such as `scope.out_of_scope`; never reworded. */
  readonly code: string;
  /** A sentence a human can act on: lower case, no final period, values in backticks. */
  readonly reason: string;
  /** The outcome this gate decides when it fails. */
  readonly outcome?: Outcome;
  /** The grant of the chain the reason is about, when it is about one. */
  readonly grant_id?: string;
}

/** A hold the decision places when it is counted: one on the grant and one on every ancestor. */
export interface Hold {
  readonly grant_id: string;
  readonly amount_minor: number;
  readonly currency: string | null;
  readonly expires_at: number;
}

export interface Decision {
  /** `allow` permits; in `observe` it is always `allow` past the grant, status and window gates. */
  readonly outcome: Outcome;
  /** In `observe` only: what `enforce` would have said. */
  readonly would_outcome?: Outcome;
  readonly mode: EnforcementMode;
  /** The gate that decided a refusal (or would have, in `observe`); null when every gate passed. */
  readonly decided_by: GateName | null;
  /** The stable code of the deciding reason. */
  readonly reason_code: string;
  readonly reason: string;
  readonly gates: readonly GateResult[];
  /** For `gated` (or `would_outcome` `gated`) by the policy: who could approve, as an expression. */
  readonly residual?: string;
  /** The approver bound by a presented approval, or null. */
  readonly approver: string | null;
  readonly approval_id?: string;
  /** The policy's run-time error, when the policy failed closed. */
  readonly policy_error?: Diagnostic;
  /**
   * Whether the store counts this decision: one use on the grant and every ancestor, plus `holds`.
   * True exactly when the enforce outcome is `allow`, in `observe` too.
   */
  readonly counted: boolean;
  readonly holds: readonly Hold[];
}
