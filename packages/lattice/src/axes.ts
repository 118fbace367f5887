// Every axis of the order `child ≤ parent` (docs/attenuation.md), each with a verdict and a sentence.

import { conjoinPolicyText, policyConjuncts, policyLeq } from "./policy-text.js";
import { uncoveredEntries } from "./scope.js";
import { isEmptyWindow, modeRank, type GrantTerms, type ParentUsage } from "./terms.js";

/** The axes, in the order they are reported. */
export const AXES = Object.freeze([
  "scope.tool",
  "window",
  "budget_amount_minor",
  "budget_currency",
  "budget_count",
  "conditions.clean_context",
  "enforcement_mode",
  "audience",
  "principal",
  "delegation_policy",
  "delegation_depth_max",
  "policy",
] as const);

export type Axis = (typeof AXES)[number];

/** One axis compared: whether the child is narrower or equal, both values, and why. */
export interface AxisReport {
  readonly axis: Axis;
  readonly ok: boolean;
  readonly parent: unknown;
  readonly child: unknown;
  /** Lower case, no final period, values in backticks. */
  readonly message: string;
}

/** How an axis comparison is made: as a plain order, or as a delegation one level below the parent. */
export interface CompareMode {
  /** Budgets are compared against what is left of the parent's after this usage. */
  readonly usage: ParentUsage;
  /** A delegation also needs an `attenuating` parent and uses one level of the parent's depth cap. */
  readonly delegation: boolean;
}

/** What is left of the parent's amount budget after `spent_minor`; never below zero. */
export function remainingAmount(parent: GrantTerms, usage: ParentUsage): number {
  return Math.max(0, parent.budget_amount_minor - usage.spent_minor);
}

/** What is left of the parent's use budget after `uses`; `null` when the parent has no use limit. */
export function remainingCount(parent: GrantTerms, usage: ParentUsage): number | null {
  return parent.budget_count === null ? null : Math.max(0, parent.budget_count - usage.uses);
}

const fmt = (value: unknown): string => `\`${value === null ? "null" : typeof value === "string" ? value : JSON.stringify(value)}\``;
const countText = (value: number | null): string => (value === null ? "no limit" : fmt(value));

/** Compares every axis; the reports come in the order of `AXES`. */
export function compareAxes(parent: GrantTerms, child: GrantTerms, mode: CompareMode): AxisReport[] {
  return [
    scopeAxis(parent, child),
    windowAxis(parent, child),
    amountAxis(parent, child, mode.usage),
    currencyAxis(parent, child),
    countAxis(parent, child, mode.usage),
    conditionsAxis(parent, child),
    modeAxis(parent, child),
    audienceAxis(parent, child),
    principalAxis(parent, child),
    delegationPolicyAxis(parent, child, mode.delegation),
    depthAxis(parent, child, mode.delegation),
    policyAxis(parent, child, mode.delegation),
  ];
}

function scopeAxis(parent: GrantTerms, child: GrantTerms): AxisReport {
  const uncovered = uncoveredEntries(child.scope.tool, parent.scope.tool);
  const base = { axis: "scope.tool" as const, parent: parent.scope.tool, child: child.scope.tool };
  if (uncovered.length === 0) return { ...base, ok: true, message: "every child tool is covered by a parent tool" };
  return { ...base, ok: false, message: `no parent tool covers ${uncovered.map(fmt).join(", ")}` };
}

function windowAxis(parent: GrantTerms, child: GrantTerms): AxisReport {
  const base = { axis: "window" as const, parent: parent.window, child: child.window };
  if (isEmptyWindow(child.window)) return { ...base, ok: true, message: "the child's window is empty: it adds no instant" };
  const problems: string[] = [];
  if (child.window.start < parent.window.start) {
    problems.push(`the child starts at ${iso(child.window.start)}, before the parent's start ${iso(parent.window.start)}`);
  }
  if (child.window.end > parent.window.end) {
    problems.push(`the child expires at ${iso(child.window.end)}, after the parent's expiry ${iso(parent.window.end)}`);
  }
  if (problems.length === 0) return { ...base, ok: true, message: "the child's window lies inside the parent's" };
  return { ...base, ok: false, message: problems.join("; ") };
}

function amountAxis(parent: GrantTerms, child: GrantTerms, usage: ParentUsage): AxisReport {
  const remaining = remainingAmount(parent, usage);
  const base = { axis: "budget_amount_minor" as const, parent: remaining, child: child.budget_amount_minor };
  if (child.budget_amount_minor <= remaining) {
    return {
      ...base,
      ok: true,
      message: `the child's amount ${fmt(child.budget_amount_minor)} fits the parent's remaining ${fmt(remaining)}`,
    };
  }
  const detail = usage.spent_minor > 0 ? ` (budget ${fmt(parent.budget_amount_minor)}, spent or held ${fmt(usage.spent_minor)})` : "";
  return {
    ...base,
    ok: false,
    message: `the child's amount ${fmt(child.budget_amount_minor)} exceeds the parent's remaining ${fmt(remaining)}${detail}`,
  };
}

// INVARIANT (currency-spend): the currency matters only when the child may spend; a child whose
// amount budget is 0 can spend nothing in any currency, and no policy sees a grant's currency
// (the engine's policy environment binds the request's own).
function currencyAxis(parent: GrantTerms, child: GrantTerms): AxisReport {
  const base = { axis: "budget_currency" as const, parent: parent.budget_currency, child: child.budget_currency };
  if (child.budget_amount_minor === 0) return { ...base, ok: true, message: "the child may not spend, so its currency does not matter" };
  if (child.budget_currency === parent.budget_currency) return { ...base, ok: true, message: "the child spends in the parent's currency" };
  return {
    ...base,
    ok: false,
    message: `the child's currency ${fmt(child.budget_currency)} differs from the parent's ${fmt(parent.budget_currency)}`,
  };
}

function countAxis(parent: GrantTerms, child: GrantTerms, usage: ParentUsage): AxisReport {
  const remaining = remainingCount(parent, usage);
  const base = { axis: "budget_count" as const, parent: remaining, child: child.budget_count };
  if (remaining === null) return { ...base, ok: true, message: "the parent has no use limit" };
  if (child.budget_count === null) {
    return { ...base, ok: false, message: `the child has no use limit but the parent has ${fmt(remaining)} uses left` };
  }
  if (child.budget_count <= remaining) {
    return { ...base, ok: true, message: `the child's ${fmt(child.budget_count)} uses fit the parent's remaining ${fmt(remaining)}` };
  }
  return {
    ...base,
    ok: false,
    message: `the child's ${fmt(child.budget_count)} uses exceed the parent's remaining ${countText(remaining)}`,
  };
}

function conditionsAxis(parent: GrantTerms, child: GrantTerms): AxisReport {
  const base = {
    axis: "conditions.clean_context" as const,
    parent: parent.conditions.clean_context,
    child: child.conditions.clean_context,
  };
  if (!parent.conditions.clean_context || child.conditions.clean_context) {
    return { ...base, ok: true, message: "the child requires every condition the parent requires" };
  }
  return { ...base, ok: false, message: "the parent requires a clean context (`clean_context: true`) and the child drops it" };
}

function modeAxis(parent: GrantTerms, child: GrantTerms): AxisReport {
  const base = { axis: "enforcement_mode" as const, parent: parent.enforcement_mode, child: child.enforcement_mode };
  if (modeRank(child.enforcement_mode) >= modeRank(parent.enforcement_mode)) {
    return { ...base, ok: true, message: "the child is at least as strict as the parent" };
  }
  return {
    ...base,
    ok: false,
    message: `the child's mode ${fmt(child.enforcement_mode)} is less strict than the parent's ${fmt(parent.enforcement_mode)}`,
  };
}

function audienceAxis(parent: GrantTerms, child: GrantTerms): AxisReport {
  const base = { axis: "audience" as const, parent: parent.audience, child: child.audience };
  if (child.audience === parent.audience) return { ...base, ok: true, message: "the audience is the parent's" };
  return { ...base, ok: false, message: `the child's audience ${fmt(child.audience)} differs from the parent's ${fmt(parent.audience)}` };
}

function principalAxis(parent: GrantTerms, child: GrantTerms): AxisReport {
  const base = { axis: "principal" as const, parent: parent.principal, child: child.principal };
  if (child.principal.type === parent.principal.type && child.principal.id === parent.principal.id) {
    return { ...base, ok: true, message: "the principal is the parent's" };
  }
  return {
    ...base,
    ok: false,
    message: `the child acts for ${fmt(`${child.principal.type}:${child.principal.id}`)}, the parent for ${fmt(`${parent.principal.type}:${parent.principal.id}`)}`,
  };
}

function delegationPolicyAxis(parent: GrantTerms, child: GrantTerms, delegation: boolean): AxisReport {
  const base = { axis: "delegation_policy" as const, parent: parent.delegation_policy, child: child.delegation_policy };
  if (delegation && parent.delegation_policy !== "attenuating") {
    return { ...base, ok: false, message: "the parent's delegation policy is `none`: it may not delegate" };
  }
  if (child.delegation_policy === "none" || parent.delegation_policy === "attenuating") {
    return { ...base, ok: true, message: "the child may delegate no more than the parent" };
  }
  return { ...base, ok: false, message: "the child may delegate (`attenuating`) but the parent may not (`none`)" };
}

function depthAxis(parent: GrantTerms, child: GrantTerms, delegation: boolean): AxisReport {
  // A delegation is one level below the parent, so it uses one level of the parent's cap.
  const allowed = parent.delegation_depth_max === null ? null : parent.delegation_depth_max - (delegation ? 1 : 0);
  const base = { axis: "delegation_depth_max" as const, parent: parent.delegation_depth_max, child: child.delegation_depth_max };
  if (allowed === null) return { ...base, ok: true, message: "the parent has no delegation depth cap" };
  if (allowed < 0) return { ...base, ok: false, message: "the parent's delegation depth cap is `0`: no level may be added below it" };
  if (child.delegation_depth_max === null) {
    return { ...base, ok: false, message: `the child has no delegation depth cap but at most ${fmt(allowed)} further levels are allowed` };
  }
  if (child.delegation_depth_max <= allowed) {
    return {
      ...base,
      ok: true,
      message: `the child's depth cap ${fmt(child.delegation_depth_max)} is within the ${fmt(allowed)} levels allowed`,
    };
  }
  return {
    ...base,
    ok: false,
    message: `the child's depth cap ${fmt(child.delegation_depth_max)} exceeds the ${fmt(allowed)} further levels the parent allows`,
  };
}

function policyAxis(parent: GrantTerms, child: GrantTerms, delegation: boolean): AxisReport {
  if (delegation) {
    // INVARIANT (policy-conjunction): a delegated child is decided under its own policy AND every
    // ancestor's, so its effective policy can only be narrower; the policy axis never widens.
    return {
      axis: "policy",
      ok: true,
      parent: parent.policy,
      child: conjoinPolicyText([parent.policy, child.policy]),
      message: "the child's effective policy is its own AND the parent's, so it is never wider",
    };
  }
  const base = { axis: "policy" as const, parent: parent.policy, child: child.policy };
  if (policyLeq(child.policy, parent.policy))
    return { ...base, ok: true, message: "the child's policy contains every conjunct of the parent's" };
  const own = new Set(policyConjuncts(child.policy));
  const missing = policyConjuncts(parent.policy).filter((c) => !own.has(c));
  return { ...base, ok: false, message: `the child's policy lacks the parent's conjunct ${missing.map(fmt).join(", ")}` };
}

function iso(ms: number): string {
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? `\`${new Date(ms).toISOString()}\`` : fmt(ms);
}
