// The canonical formatter: one printed form per tree, so format(parse(format(x))) == format(x).
import { isHidden } from "@agent-authority/grammar";
import type { BinaryOperator, Expr } from "./ast.js";

/** Binding strength; a child binding more loosely than its position allows gets parentheses. */
const precedence: Readonly<Record<BinaryOperator, number>> = Object.freeze({
  "||": 1,
  "&&": 2,
  "==": 3,
  "!=": 3,
  "<": 3,
  "<=": 3,
  ">": 3,
  ">=": 3,
  in: 3,
  "+": 4,
  "-": 4,
  "*": 5,
});
const UNARY = 6;
const PRIMARY = 7;

function precedenceOf(e: Expr): number {
  if (e.kind === "binary") return precedence[e.op];
  if (e.kind === "unary" || (e.kind === "int" && e.value < 0)) return UNARY;
  return PRIMARY;
}

/** Prints `e` in canonical form: single spaces around binary operators, minimal parentheses. */
export function formatExpr(e: Expr): string {
  switch (e.kind) {
    case "int":
      return String(e.value);
    case "string":
      return quote(e.value);
    case "bool":
      return e.value ? "true" : "false";
    case "null":
      return "null";
    case "list":
      return `[${e.elements.map(formatExpr).join(", ")}]`;
    case "name":
      return e.path.length === 0 ? e.name : `${e.name}.${e.path.join(".")}`;
    case "call":
      return `${e.callee}(${e.args.map(formatExpr).join(", ")})`;
    case "unary": {
      // `- -x` rather than `--x`, which reads like a decrement, or `-(-x)`, whose parentheses
      // would add a level of nesting per sign (docs/decisions/0117-format-never-breaks-a-policy.md).
      const wrap = precedenceOf(e.operand) < UNARY;
      const spaced =
        e.op === "-" && ((e.operand.kind === "unary" && e.operand.op === "-") || (e.operand.kind === "int" && e.operand.value < 0));
      const inner = formatExpr(e.operand);
      return `${e.op}${wrap ? `(${inner})` : spaced ? ` ${inner}` : inner}`;
    }
    case "binary": {
      const p = precedence[e.op];
      // Comparisons do not chain, so both operands of a comparison bind tighter; the other
      // operators associate to the left, so only the right operand needs strictly tighter binding,
      // except that `&&` and `||` are associative: `a && (b && c)` is `a && b && c`.
      const leftWrap = p === 3 ? precedenceOf(e.left) <= p : precedenceOf(e.left) < p;
      const associative = (e.op === "&&" || e.op === "||") && e.right.kind === "binary" && e.right.op === e.op;
      const rightWrap = !associative && precedenceOf(e.right) <= p;
      const left = formatExpr(e.left);
      const right = formatExpr(e.right);
      return `${leftWrap ? `(${left})` : left} ${e.op} ${rightWrap ? `(${right})` : right}`;
    }
  }
}

/** Printable ASCII but `"` and `\`: the common string, printed as it is. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * A string literal that reads back as `value`: quotes, backslashes and control characters
 * escaped, and every hidden character too (INVARIANT hidden-shown in grammar/src/hidden.ts), so
 * `"cfo@example.com\u202e"` never prints as if it were `"cfo@example.com"`.
 */
export function quote(value: string): string {
  if (PLAIN.test(value)) return `"${value}"`;
  let out = '"';
  let from = 0;
  for (let i = 0; i < value.length; ) {
    const codePoint = value.codePointAt(i)!;
    const width = codePoint > 0xffff ? 2 : 1;
    const special = codePoint < 0x20 || codePoint === 0x22 || codePoint === 0x5c || isHidden(codePoint);
    if (!special) {
      i += width;
      continue;
    }
    out += value.slice(from, i);
    if (codePoint === 0x22) out += '\\"';
    else if (codePoint === 0x5c) out += "\\\\";
    else if (codePoint === 0x0a) out += "\\n";
    else if (codePoint === 0x0d) out += "\\r";
    else if (codePoint === 0x09) out += "\\t";
    else
      for (let k = 0; k < width; k++)
        out += `\\u${value
          .charCodeAt(i + k)
          .toString(16)
          .padStart(4, "0")}`;
    i += width;
    from = i;
  }
  return `${out + value.slice(from)}"`;
}
