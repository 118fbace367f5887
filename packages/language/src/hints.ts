// Hints for what authors bring from other languages: `=`, `and`, `nil`, 'EUR', EUR, each with a fix.
import type { Span } from "@agent-authority/grammar";
import type { IToken } from "@agent-authority/grammar";
import { error, withFix, type Diagnostic } from "./diagnostic.js";
import { quote } from "./format.js";

/** Words of other languages for the operators `&&`, `||` and `!`. */
const WORD_OPERATORS: ReadonlyMap<string, string> = new Map([
  ["and", "&&"],
  ["or", "||"],
  ["not", "!"],
]);

/** Names other languages give to null and the booleans. */
const FOREIGN_LITERALS: ReadonlyMap<string, string> = new Map([
  ["nul", "null"],
  ["nil", "null"],
  ["None", "null"],
  ["NULL", "null"],
  ["Null", "null"],
  ["undefined", "null"],
  ["True", "true"],
  ["False", "false"],
  ["TRUE", "true"],
  ["FALSE", "false"],
]);

/** An ISO 4217 code written as a name: three capital letters. */
const CURRENCY_CODE = /^[A-Z]{3}$/;

/**
 * The lexical errors of `text` with hints: `=` where `==` was meant, and a single-quoted string
 * (as CEL and SQL write them) as one error with its double-quoted form, instead of one error per
 * quote. Other errors pass through unchanged.
 */
export function hintLexErrors(text: string, errors: readonly Diagnostic[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  let coveredUntil = -1;
  for (const d of errors) {
    if (d.span.start < coveredUntil) continue;
    const at = text[d.span.start];
    if (d.code === "unexpected-character" && at === "=") {
      const span = { start: d.span.start, end: d.span.start + 1 };
      const hinted = error("unexpected-character", "`=` is not an operator", span, "compare with `==`");
      out.push(withFix(hinted, { title: "replace `=` with `==`", span, text: "==" }));
      continue;
    }
    const single = at === "'" ? /^'((?:[^'\\\n\r]|\\[^\n\r])*)'/.exec(text.slice(d.span.start, d.span.start + 4096)) : null;
    if (d.code === "unexpected-character" && single !== null) {
      const span = { start: d.span.start, end: d.span.start + single[0].length };
      const replacement = quote(single[1]!.replace(/\\'/g, "'"));
      const hinted = error(
        "unexpected-character",
        `single-quoted string \`${single[0]}\``,
        span,
        `strings take double quotes: \`${replacement}\``,
      );
      out.push(withFix(hinted, { title: `write ${replacement}`, span, text: replacement }));
      coveredUntil = span.end;
      continue;
    }
    out.push(d);
  }
  return out;
}

/** `and`, `or` and `not` used as operators, each as an error with its replacement; names after `.` are fields. */
export function wordOperatorHints(tokens: readonly IToken[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  tokens.forEach((token, i) => {
    const operator = WORD_OPERATORS.get(token.image);
    if (operator === undefined || token.tokenType.name !== "Identifier" || tokens[i - 1]?.image === ".") return;
    const span: Span = { start: token.startOffset, end: token.startOffset + token.image.length };
    const help =
      operator === "!"
        ? "write `!`; it binds tighter than a comparison, so negate one in parentheses, as in `!(a < b)`"
        : `write \`${operator}\``;
    const hinted = error("unexpected-token", `\`${token.image}\` is not an operator`, span, help);
    out.push(withFix(hinted, { title: `replace \`${token.image}\` with \`${operator}\``, span, text: operator }));
  });
  return out;
}

/** An unknown name that another language's literal or an unquoted currency explains, with its fix; else undefined. */
export function unknownNameHint(name: string, span: Span): Diagnostic | undefined {
  const literal = FOREIGN_LITERALS.get(name);
  if (literal !== undefined) {
    const hinted = error("unknown-name", `unknown name \`${name}\``, span, `the policy language writes \`${literal}\``);
    return withFix(hinted, { title: `replace \`${name}\` with \`${literal}\``, span, text: literal });
  }
  if (CURRENCY_CODE.test(name)) {
    const quoted = quote(name);
    const hinted = error("unknown-name", `unknown name \`${name}\``, span, `a currency is a string: \`${quoted}\``);
    return withFix(hinted, { title: `write ${quoted}`, span, text: quoted });
  }
  return undefined;
}

/** `not(x)`, which parses as a call of a function `not`: the operator `!` was meant. */
export function notCallHint(callee: string, span: Span): Diagnostic | undefined {
  if (callee !== "not") return undefined;
  const hinted = error("unknown-function", "`not` is not a function", span, "negate with `!`, as in `!(a && b)`");
  return withFix(hinted, { title: "replace `not` with `!`", span, text: "!" });
}
