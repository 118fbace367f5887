// Lint: warnings with spans for policies that compile but cannot mean what their author meant.
import type { Expr } from "./ast.js";
import type { Type } from "./check.js";
import type { Diagnostic } from "./diagnostic.js";

export function lintAst(_root: Expr, _types: ReadonlyMap<Expr, Type>): readonly Diagnostic[] {
  return [];
}
