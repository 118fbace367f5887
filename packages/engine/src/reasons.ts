// The catalogue of reason codes: stable identifiers a client may branch on, one per gate verdict.

import type { GateName, Outcome } from "./types.js";

export interface ReasonEntry {
  /** The gate that answers the code; null for the marker of gates that did not run. */
  readonly gate: GateName | null;
  /** The outcome the code decides; null for a passing or skipped gate. */
  readonly outcome: Outcome | null;
  /** What the code means, for the documentation and for tests. */
  readonly meaning: string;
}

const entry = (gate: GateName | null, outcome: Outcome | null, meaning: string): ReasonEntry => ({ gate, outcome, meaning });

/** Every reason code the engine can answer. Codes are never reworded; new ones may be added. */
export const REASONS = Object.freeze({
  "grant.held": entry("grant", null, "the grant exists and the calling agent holds it"),
  "grant.not_held": entry("grant", "deny", "no grant with this id is held by the calling agent (existence is not revealed)"),
  "grant.chain_too_deep": entry("grant", "deny", "the delegation chain is longer than the engine decides on"),
  "status.active": entry("status", null, "the grant and every ancestor are active"),
  "status.revoked": entry("status", "deny", "the grant or an ancestor has been revoked"),
  "status.pending_approval": entry("status", "gated", "the grant or an ancestor awaits a human's approval"),
  "window.inside": entry("window", null, "now lies inside the window of the grant and every ancestor"),
  "window.not_yet_valid": entry("window", "deny", "the window of the grant or an ancestor has not started"),
  "window.expired": entry("window", "deny", "the grant or an ancestor has expired"),
  "audience.match": entry("audience", null, "the request names the audience of every grant of the chain (or none, when they name none)"),
  "audience.missing": entry("audience", "deny", "the chain names an audience and the request names none"),
  "audience.mismatch": entry(
    "audience",
    "deny",
    "the request names another audience than a grant of the chain (or one where it names none)",
  ),
  "certification.valid": entry("certification", null, "the agent's certificate is valid here and the attestation matches it"),
  "certification.not_required": entry("certification", null, "the grant is in `observe`, where certification is not required"),
  "certification.missing": entry("certification", "deny", "the agent holds no certificate for this environment"),
  "certification.revoked": entry("certification", "deny", "the agent's certificate has been revoked"),
  "certification.attestation_missing": entry("certification", "deny", "the request presents no attestation"),
  "certification.attestation_mismatch": entry("certification", "deny", "the attestation differs from the certified one"),
  "scope.covered": entry("scope", null, "every grant of the chain covers the tool"),
  "scope.out_of_scope": entry("scope", "deny", "a grant of the chain does not cover the tool"),
  "conditions.met": entry("conditions", null, "every condition of the chain holds"),
  "conditions.clean_context_required": entry(
    "conditions",
    "deny",
    "the chain requires a clean context and the request is not marked clean",
  ),
  "policy.allow": entry("policy", null, "every policy of the chain allows the action"),
  "policy.approved": entry("policy", null, "every policy of the chain allows the action with the presented approval's approver"),
  "policy.deny": entry("policy", "deny", "a policy of the chain refuses the action, whoever approves it"),
  "policy.gated": entry("policy", "gated", "the policies allow the action only with a human's approval; the residual says whose"),
  "policy.error": entry("policy", "deny", "a policy failed at run time and failed closed"),
  "policy.cost_exceeded": entry(
    "policy",
    "deny",
    "deciding the chain's policies on this action took more work units than one decision may use; it fails closed",
  ),
  "policy.invalid": entry("policy", "deny", "a stored policy does not compile; it fails closed"),
  "policy.no_single_approver": entry("policy", "deny", "each policy can be approved, but no single approver satisfies them all"),
  "approval.wrong_grant": entry("policy", "deny", "the presented approval was given for another grant"),
  "approval.wrong_tool": entry("policy", "deny", "the presented approval was given for another tool"),
  "approval.over_ceiling": entry("policy", "deny", "the amount exceeds the presented approval's ceiling"),
  "approval.expired": entry("policy", "deny", "the presented approval has expired"),
  "budget.fits": entry("budget", null, "the amount and one more use fit on the grant and every ancestor"),
  "budget.invalid_amount": entry("budget", "deny", "the amount is not a non-negative safe integer"),
  "budget.currency_mismatch": entry("budget", "deny", "the amount is in another currency than a grant's budget"),
  "budget.amount_exhausted": entry("budget", "exhausted", "the amount exceeds what is left of a grant's amount budget"),
  "budget.count_exhausted": entry("budget", "exhausted", "a grant of the chain has no use left"),
  "decision.allow": entry(null, "allow", "every gate passed"),
  "gate.not_reached": entry(null, null, "an earlier gate decided; this gate did not run"),
} satisfies Record<string, ReasonEntry>);

export type ReasonCode = keyof typeof REASONS;
