// Public face of the families package: named re-exports only.
export { compileFamily, exampleParameters, sampleParameters } from "./compile.js";
export { familyTextAt } from "./sent-text.js";
export type { CompiledFamily } from "./compile.js";
export { hasErrors, sortDiagnostics } from "./diagnostics.js";
export type { FamilyDiagnostic, FamilyFix, Severity, SourcePosition, SourceRange } from "./diagnostics.js";
export { canonicalJson, familyContentHash, hashedFields, sha256Hex } from "./hash.js";
export { approvalRequired, instantiateFamily } from "./instantiate.js";
export type { InstantiatedGrant, InstantiateResult } from "./instantiate.js";
export { locate, rangeOf, scalarAt } from "./locate.js";
export { ownValue, setOwn } from "./own.js";
export type { JsonPath } from "./locate.js";
export { checkParameter, instantiationBudget, resolveParameters, sampleValue } from "./parameters.js";
export { compilePattern, instantiationCost, matchCost, PatternBudget, searchPattern } from "./patterns.js";
export type { CompiledPattern, PatternCheck, PatternResult } from "./patterns.js";
export type { ParameterProblem } from "./parameters.js";
export { placeholdersIn, placeholdersInPolicyStrings, policyLiteral, substituteGrant, substituteText } from "./placeholders.js";
export { checkPolicyFile } from "./policy-check.js";
export { mapScalar } from "./scalar-map.js";
export type { ScalarOffsetMap } from "./scalar-map.js";
export { FAMILY_LIMITS, GATE_NAMES, grantFamilyBodySchema, OUTCOMES, PARAMETER_NAME_PATTERN, RFC3339_PATTERN } from "./schema.js";
export type {
  FamilyApproval,
  FamilyExample,
  GateName,
  GrantFamilyBody,
  Outcome,
  ParameterSpec,
  ParameterType,
  ParameterValue,
  SampleAction,
} from "./schema.js";
export { SourceText } from "./source.js";
export { validateFamilyBody, validateGrantIssueBody } from "./validate.js";
export type { SchemaError } from "./validate.js";
export { formatFamilySource } from "./format.js";
export type { FormatFamilyResult } from "./format.js";
export { DEFAULT_ACTION_TIME, enforcedOutcome, grantTermsOf, previewAction, runExample, runExamples } from "./examples.js";
export type { ExampleResult, PreviewUsage } from "./examples.js";
export { checkGrantBody } from "./grant.js";
export type { CheckedGrant } from "./grant.js";
