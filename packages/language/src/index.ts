// Public face of the language package: named re-exports only.
export { DIAGNOSTIC_CODES, type Diagnostic, type DiagnosticCode, type Fix } from "./diagnostic.js";
export { LIMITS } from "./limits.js";
export {
  checkEnvironment,
  ENVIRONMENT_NAMES,
  ENVIRONMENT_TYPES,
  FUNCTION_ARITY,
  WEEKDAYS,
  type EnvironmentInput,
  type PolicyEnvironment,
  type Weekday,
} from "./environment.js";
export { FUNCTION_COSTS, costEstimate, stringUnits, type CostEstimate, type FunctionCost } from "./cost.js";
export {
  compilePolicy,
  conjoin,
  costMeter,
  decideChain,
  decideLink,
  type ChainLinkPolicy,
  type ChainOutcome,
  type CostMeter,
  formatPolicy,
  lintPolicy,
  type CompiledPolicy,
  type CompileResult,
  type EvaluationResult,
  type PolicyOrigin,
  type PolicyOutcome,
} from "./policy.js";
export { parsePolicy, type ParseResult } from "./parse.js";
export { checkPolicy, type CheckResult, type Type } from "./check.js";
export { listOf, sameType, typeName, TYPES, type BasicType, type ElementType, type ListType, type TypeKind } from "./types.js";
export { formatExpr } from "./format.js";
export { childrenOf } from "./ast.js";
export type { BinaryOperator, Expr, UnaryOperator } from "./ast.js";
export { escapeHidden, hiddenCharacters, isHidden, lineColumn, type LineColumn, type Span } from "@agent-authority/grammar";
