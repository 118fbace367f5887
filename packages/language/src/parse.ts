// Pipeline step 1 of 4: text to AST, through the grammar's CST, with the text limits checked first.
import { type IToken, parseCst, type PolicyCstNode, type Span } from "@agent-authority/grammar";
import { nodeDeeperThan, type Expr } from "./ast.js";
import { astFromCst } from "./ast-from-cst.js";
import { byPosition, error, type Diagnostic } from "./diagnostic.js";
import { hintLexErrors, wordOperatorHints } from "./hints.js";
import { LIMITS, utf8Cut, utf8Length } from "./limits.js";

export type ParseResult =
  /** `comments` are the spans of the `//` comments, in source order. */
  | { readonly ok: true; readonly ast: Expr; readonly comments: readonly Span[] }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

/** Parses policy text into an AST; every problem is a diagnostic, nothing throws. */
export function parsePolicy(text: string, options: { readonly skipTextLimit?: boolean } = {}): ParseResult {
  if (typeof text !== "string") {
    return { ok: false, diagnostics: [error("unexpected-token", "a policy must be a string", { start: 0, end: 0 })] };
  }
  if (!options.skipTextLimit && text.length > LIMITS.policyBytesMax / 4 && utf8Length(text) > LIMITS.policyBytesMax) {
    const cut = utf8Cut(text, LIMITS.policyBytesMax);
    return {
      ok: false,
      diagnostics: [
        error(
          "policy-too-long",
          `policy of ${utf8Length(text)} bytes is longer than ${LIMITS.policyBytesMax}`,
          { start: cut, end: text.length },
          "split the condition across a grant and its delegations, or simplify it",
        ),
      ],
    };
  }
  const { cst, tokens, comments, lexErrors, parseErrors } = parseCst(text);
  if (lexErrors.length > 0) {
    return {
      ok: false,
      diagnostics: hintLexErrors(
        text,
        lexErrors.map((e) => error(e.code, e.message, e.span)),
      ).sort(byPosition),
    };
  }
  if (parseErrors.length > 0 || cst === undefined) {
    return {
      ok: false,
      diagnostics: syntaxDiagnostics(
        tokens,
        parseErrors.map((e) => error(e.code, e.message, e.span)),
      ),
    };
  }
  const diagnostics: Diagnostic[] = [];
  const ast = astFromCst(cst as PolicyCstNode, diagnostics);
  if (diagnostics.length > 0) return { ok: false, diagnostics: diagnostics.sort(byPosition) };
  // Every level of the tree takes at least one character, so a short text cannot be too deep.
  const deep = text.length > LIMITS.expressionDepthMax ? nodeDeeperThan(ast, LIMITS.expressionDepthMax) : undefined;
  if (deep !== undefined) {
    const message = `expression nested deeper than ${LIMITS.expressionDepthMax} levels`;
    return {
      ok: false,
      diagnostics: [
        error(
          "nesting-too-deep",
          message,
          deep.span,
          "each `+`, `-` and `*` counts one level; split a long sum, or use `&&` and `||`, whose chains count little",
        ),
      ],
    };
  }
  return { ok: true, ast, comments };
}

/**
 * The syntax errors of a text that lexed: `and`, `or` and `not` used as operators are reported
 * with their replacements, and the parser's one error only when it lies before the first of them
 * (after one, it is a consequence, not a second mistake).
 */
function syntaxDiagnostics(tokens: readonly IToken[], parseErrors: readonly Diagnostic[]): Diagnostic[] {
  const hints = wordOperatorHints(tokens);
  const first = hints[0];
  const kept = first === undefined ? parseErrors : parseErrors.filter((d) => d.span.start < first.span.start);
  return [...kept, ...hints].sort(byPosition);
}
