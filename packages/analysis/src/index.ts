// Public face of the analysis package: named re-exports only.
export { ANALYSIS_LIMITS } from "./limits.js";
export { createAnalyzer, type Analyzer, type Budget } from "./solver.js";
export {
  allowsInput,
  checkedPolicy,
  diffChecked,
  diffPolicies,
  relationOf,
  type ArgDomain,
  type CheckedPolicy,
  type DiffOptions,
  type DiffResult,
  type Difference,
  type Relation,
} from "./diff.js";
export type { WitnessInput } from "./witness.js";
export { type LintProof, proveLint, proveLintReport, type ProveOptions, type ProvedCode, type ProvedDiagnostic } from "./prove.js";
export { nearestAllowed, type Explanation } from "./explain.js";
export { diffFamilies, proveFamilyLint, type FamilyDiffResult, type FamilyDifference } from "./family.js";
