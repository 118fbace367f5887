// decide: the nine gates of docs/decisions.md in order; the first that fails decides.

import type { EnforcementMode } from "@agent-authority/lattice";
import {
  audienceGate,
  budgetGate,
  certificationGate,
  conditionsGate,
  grantGate,
  requestAmount,
  scopeGate,
  statusGate,
  windowGate,
} from "./gates.js";
import { DEFAULT_HOLD_LIFETIME_MS, ENGINE_LIMITS } from "./limits.js";
import { policyGate } from "./policy-gate.js";
import {
  GATES,
  type ChainLink,
  type Decision,
  type DecisionRequest,
  type DecisionState,
  type GateName,
  type GateResult,
  type Hold,
  type Outcome,
} from "./types.js";
import { fail, type Failed, type Verdict } from "./verdict.js";

/** The gates every mode enforces, `observe` included: they say whether there is a usable grant at all. */
export const ABSOLUTE_GATES: ReadonlySet<GateName> = new Set(["grant", "status", "window"]);

/**
 * The mode a chain is decided in: the strictest on the chain. Attenuation keeps a child at least
 * as strict as its parent, and taking the strictest keeps that true after a parent is promoted.
 */
export function chainMode(chain: readonly ChainLink[]): EnforcementMode {
  return chain.length === 0 || chain.some((link) => link.terms.enforcement_mode === "enforce") ? "enforce" : "observe";
}

/**
 * Decides one request on a delegation chain (root first, the requested grant last) at `now`.
 * Pure: the same arguments always give the same decision, and nothing outside is read or changed.
 */
export function decide(request: DecisionRequest, chain: readonly ChainLink[], state: DecisionState, now: number): Decision {
  const mode = chainMode(chain);
  // Each gate by its name: GATES gives the order, and a gate missing here or named twice does not compile.
  const steps: Readonly<Record<GateName, () => Verdict>> = {
    grant: () => (chain.length > ENGINE_LIMITS.chainLinksMax ? tooDeep(chain) : grantGate(request, chain)),
    status: () => statusGate(chain),
    window: () => windowGate(chain, now),
    audience: () => audienceGate(request, chain),
    certification: () => certificationGate(request, state, mode === "enforce"),
    scope: () => scopeGate(request, chain),
    conditions: () => conditionsGate(request, chain),
    policy: () => policyGate(request, chain, now),
    budget: () => budgetGate(request, chain, now),
  };
  const gates: GateResult[] = [];
  let failed: { gate: GateName; verdict: Failed } | null = null;
  let approver: string | null = null;
  for (const gate of GATES) {
    if (failed !== null) {
      gates.push({ gate, result: "not_reached", code: "gate.not_reached", reason: `not evaluated: the ${failed.gate} gate decided` });
      continue;
    }
    const verdict = steps[gate]();
    gates.push(gateResult(gate, verdict));
    if (!verdict.ok) failed = { gate, verdict };
    else if (verdict.approver !== undefined && verdict.approver !== null) approver = verdict.approver;
  }
  return assemble(request, chain, state, now, mode, gates, failed, approver);
}

function tooDeep(chain: readonly ChainLink[]): Verdict {
  return fail(
    "deny",
    "grant.chain_too_deep",
    `the delegation chain has \`${chain.length}\` grants; at most \`${ENGINE_LIMITS.chainLinksMax}\` are decided on`,
  );
}

function gateResult(gate: GateName, verdict: Verdict): GateResult {
  if (verdict.ok) {
    const skipped = verdict.skipped === true;
    return { gate, result: skipped ? "skipped" : "pass", code: verdict.code, reason: verdict.reason };
  }
  const base = { gate, result: "fail" as const, code: verdict.code, reason: verdict.reason, outcome: verdict.outcome };
  return verdict.grant_id === undefined ? base : { ...base, grant_id: verdict.grant_id };
}

function assemble(
  request: DecisionRequest,
  chain: readonly ChainLink[],
  state: DecisionState,
  now: number,
  mode: EnforcementMode,
  gates: GateResult[],
  failed: { gate: GateName; verdict: Failed } | null,
  approver: string | null,
): Decision {
  const enforced: Outcome = failed === null ? "allow" : failed.verdict.outcome;
  // In `observe` the terms are recorded, not enforced; a grant that is not usable at all is refused.
  const observing = mode === "observe" && (failed === null || !ABSOLUTE_GATES.has(failed.gate));
  const counted = enforced === "allow";
  const amount = requestAmount(request);
  const holds = counted && amount > 0 ? holdsFor(request, chain, state, now, amount) : [];
  const verdict = failed?.verdict;
  const residual = verdict?.residual;
  const policyError = verdict?.policy_error;
  const baseReason = verdict?.reason ?? (approver !== null ? `every gate passed; approved by \`${approver}\`` : "every gate passed");
  const reason =
    observing && enforced !== "allow" ? `in \`observe\`: enforce would answer \`${enforced}\` because ${baseReason}` : baseReason;
  return Object.freeze({
    outcome: observing ? "allow" : enforced,
    ...(observing ? { would_outcome: enforced } : {}),
    mode,
    decided_by: failed?.gate ?? null,
    reason_code: verdict?.code ?? "decision.allow",
    reason,
    gates: Object.freeze(gates.map((g) => Object.freeze(g))),
    ...(residual !== undefined ? { residual } : {}),
    approver,
    ...(request.approval != null && approver !== null ? { approval_id: request.approval.approval_id } : {}),
    ...(policyError !== undefined ? { policy_error: policyError } : {}),
    counted,
    holds: Object.freeze(holds),
  });
}

/**
 * One hold per link (INVARIANT budget-monotone); each lives with the shortest window of the chain
 * and at most the hold lifetime, so every hold of a decision expires at the same instant.
 */
function holdsFor(request: DecisionRequest, chain: readonly ChainLink[], state: DecisionState, now: number, amount: number): Hold[] {
  const lifetime = state.hold_lifetime_ms ?? DEFAULT_HOLD_LIFETIME_MS;
  let expires = now + lifetime;
  for (const link of chain) expires = Math.min(expires, link.terms.window.end);
  return chain.map((link) =>
    Object.freeze({
      grant_id: link.grant_id,
      amount_minor: amount,
      currency: request.currency ?? link.terms.budget_currency,
      expires_at: expires,
    }),
  );
}
