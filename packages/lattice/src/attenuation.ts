// checkAttenuation: whether a requested child grant is narrower than or equal to its parent.

import { compareAxes, remainingAmount, remainingCount, type AxisReport } from "./axes.js";
import { deepFreeze, type GrantTerms, type ParentUsage } from "./terms.js";

/** One axis on which the child is wider than the parent, with both values. */
export interface Widening {
  readonly axis: string;
  readonly parent: unknown;
  readonly child: unknown;
  /** Lower case, no final period, values in backticks. */
  readonly message: string;
}

export type AttenuationResult = { readonly ok: true } | { readonly ok: false; readonly widenings: readonly Widening[] };

/**
 * Checks a delegation: every axis of docs/attenuation.md, budgets against what is left of the parent's
 * after `usage`, the parent's delegation policy and depth cap. Reports every widening axis, never
 * just the first, so one 422 answer tells the caller everything to fix.
 */
export function checkAttenuation(parent: GrantTerms, child: GrantTerms, usage: ParentUsage): AttenuationResult {
  const widenings = explainAttenuation(parent, child, usage)
    .filter((report) => !report.ok)
    .map(({ axis, parent: p, child: c, message }) => ({ axis, parent: p, child: c, message }));
  return widenings.length === 0 ? { ok: true } : deepFreeze({ ok: false, widenings });
}

/** The explanation of a delegation: one report per axis, passing or not, in a fixed order. */
export function explainAttenuation(parent: GrantTerms, child: GrantTerms, usage: ParentUsage): readonly AxisReport[] {
  return deepFreeze(compareAxes(parent, child, { usage, delegation: true }));
}

/** The fields a delegate request may name; a field left out is inherited from the parent. */
export type ChildRequest = Partial<
  Pick<
    GrantTerms,
    | "scope"
    | "window"
    | "budget_amount_minor"
    | "budget_currency"
    | "budget_count"
    | "conditions"
    | "enforcement_mode"
    | "audience"
    | "principal"
    | "delegation_policy"
    | "delegation_depth_max"
    | "policy"
  >
>;

/**
 * The child a delegate request describes: every field it leaves out is the parent's, the budgets
 * are the parent's remaining, the depth cap is one level less than the parent's, and the policy is
 * the child's own (`null` when left out: it inherits the parent's by conjunction anyway). The
 * smallest request yields a child whose authority equals the parent's remaining authority.
 */
export function inheritChildTerms(parent: GrantTerms, request: ChildRequest, usage: ParentUsage): GrantTerms {
  const depth = parent.delegation_depth_max === null ? null : Math.max(0, parent.delegation_depth_max - 1);
  return deepFreeze({
    scope: { tool: [...(request.scope?.tool ?? parent.scope.tool)] },
    window: { ...(request.window ?? parent.window) },
    budget_amount_minor: request.budget_amount_minor ?? remainingAmount(parent, usage),
    budget_currency: request.budget_currency !== undefined ? request.budget_currency : parent.budget_currency,
    budget_count: request.budget_count !== undefined ? request.budget_count : remainingCount(parent, usage),
    conditions: { ...(request.conditions ?? parent.conditions) },
    enforcement_mode: request.enforcement_mode ?? parent.enforcement_mode,
    audience: request.audience !== undefined ? request.audience : parent.audience,
    principal: { ...(request.principal ?? parent.principal) },
    delegation_policy: request.delegation_policy ?? parent.delegation_policy,
    delegation_depth_max: request.delegation_depth_max !== undefined ? request.delegation_depth_max : depth,
    policy: request.policy ?? null,
  });
}
