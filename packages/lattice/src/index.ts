// Public face of the lattice package: named re-exports only.
export { BOTTOM, ENFORCEMENT_MODES, isEmptyWindow, isVoid, modeRank } from "./terms.js";
export type { EnforcementMode, GrantTerms, ParentUsage, Principal } from "./terms.js";
export { entryCovers, isPattern, normalizeScope, scopeLeq, scopeMeet, toolCovered } from "./scope.js";
export { conjoinPolicyText, policyConjuncts, policyLeq } from "./policy-text.js";
export { AXES, compareAxes, remainingAmount, remainingCount } from "./axes.js";
export type { Axis, AxisReport } from "./axes.js";
export { checkAttenuation, explainAttenuation, inheritChildTerms } from "./attenuation.js";
export type { AttenuationResult, ChildRequest, Widening } from "./attenuation.js";
export { effectiveGrant, equivalent, leq, meet, normalizeTerms } from "./order.js";
export { LATTICE_LIMITS } from "./limits.js";
