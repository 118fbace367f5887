// The order on grants, its greatest lower bound (`meet`), canonical forms and the effective grant.

import { compareAxes } from "./axes.js";
import { conjunctionText, policyConjuncts, unionConjuncts } from "./policy-text.js";
import { compareText, normalizeScope, scopeMeet } from "./scope.js";
import { BOTTOM, deepFreeze, isVoid, modeRank, type GrantTerms } from "./terms.js";

const NO_USAGE = Object.freeze({ uses: 0, spent_minor: 0 });

/**
 * The order of the lattice: `child ≤ parent` when the child is void (it can allow nothing) or when
 * every axis of the child is narrower or equal (budgets compared whole, the policy by its
 * conjuncts). It is a preorder on terms and a partial order on canonical terms (`normalizeTerms`).
 */
export function leq(child: GrantTerms, parent: GrantTerms): boolean {
  if (isVoid(child)) return true;
  return compareAxes(parent, child, { usage: NO_USAGE, delegation: false }).every((report) => report.ok);
}

/** Both grants have the same authority: each is below the other. */
export function equivalent(a: GrantTerms, b: GrantTerms): boolean {
  return leq(a, b) && leq(b, a);
}

/**
 * The canonical form of terms: void grants become `BOTTOM`; the scope loses covered and duplicate
 * entries and is sorted; a currency without spending is `null`; the policy's conjuncts are
 * deduplicated and sorted. Equivalent grants have equal canonical forms.
 */
export function normalizeTerms(terms: GrantTerms): GrantTerms {
  if (isVoid(terms)) return BOTTOM;
  const conjuncts = [...new Set(policyConjuncts(terms.policy))].sort(compareText);
  return deepFreeze({
    ...terms,
    scope: { tool: normalizeScope(terms.scope.tool) },
    window: { ...terms.window },
    budget_currency: terms.budget_amount_minor === 0 ? null : terms.budget_currency,
    conditions: { ...terms.conditions },
    principal: { ...terms.principal },
    policy: conjunctionText(conjuncts),
  });
}

/**
 * The greatest lower bound: the most authority both grants have. Every axis takes the narrower
 * value (scope intersection, window intersection, the smaller budgets, every condition, the
 * stricter mode, the conjunction of policies). When the grants disagree on an axis that only
 * equality orders (audience, principal) or share nothing, the answer is `BOTTOM`.
 */
export function meet(a: GrantTerms, b: GrantTerms): GrantTerms {
  if (isVoid(a) || isVoid(b)) return BOTTOM;
  if (a.audience !== b.audience) return BOTTOM;
  if (a.principal.type !== b.principal.type || a.principal.id !== b.principal.id) return BOTTOM;
  const sameCurrency = a.budget_amount_minor === 0 || b.budget_amount_minor === 0 || a.budget_currency === b.budget_currency;
  const amount = sameCurrency ? Math.min(a.budget_amount_minor, b.budget_amount_minor) : 0;
  const result: GrantTerms = {
    scope: { tool: scopeMeet(a.scope.tool, b.scope.tool) },
    window: { start: Math.max(a.window.start, b.window.start), end: Math.min(a.window.end, b.window.end) },
    budget_amount_minor: amount,
    budget_currency: amount === 0 ? null : a.budget_currency,
    budget_count: minOrNull(a.budget_count, b.budget_count),
    conditions: { clean_context: a.conditions.clean_context || b.conditions.clean_context },
    enforcement_mode: modeRank(a.enforcement_mode) >= modeRank(b.enforcement_mode) ? a.enforcement_mode : b.enforcement_mode,
    audience: a.audience,
    principal: { ...a.principal },
    delegation_policy: a.delegation_policy === "attenuating" && b.delegation_policy === "attenuating" ? "attenuating" : "none",
    delegation_depth_max: minOrNull(a.delegation_depth_max, b.delegation_depth_max),
    policy: conjunctionText(unionConjuncts([policyConjuncts(a.policy), policyConjuncts(b.policy)])),
  };
  return isVoid(result) ? BOTTOM : deepFreeze(result);
}

/**
 * The effective grant of a delegation chain, root first: the meet of every link, with the policy
 * conjoined in chain order and the depth cap counted from each link's own cap and its distance to
 * the last link. This is the authority the last link actually has; budgets here are the static
 * budgets, and the engine checks what is left of each link's budget at decision time.
 */
export function effectiveGrant(chain: readonly GrantTerms[]): GrantTerms {
  if (chain.length === 0) return BOTTOM;
  let result = chain[0]!;
  for (let i = 1; i < chain.length; i += 1) result = meet(result, chain[i]!);
  if (result === BOTTOM) return BOTTOM;
  let depth: number | null = null;
  chain.forEach((link, i) => {
    if (link.delegation_depth_max !== null) {
      depth = minOrNull(depth, Math.max(0, link.delegation_depth_max - (chain.length - 1 - i)));
    }
  });
  return deepFreeze({ ...result, delegation_depth_max: depth });
}

function minOrNull(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}
