// Pipeline step 2 of 4: CST to AST, with literal checks (escapes, integer range, list length).
import {
  joinSpans,
  spanOfToken,
  type AdditiveCstNode,
  type CallOrNameCstNode,
  type ComparisonCstNode,
  type ConjunctionCstNode,
  type DisjunctionCstNode,
  type ExpressionCstNode,
  type IToken,
  type ListCstNode,
  type MultiplicativeCstNode,
  type PolicyCstNode,
  type PrimaryCstNode,
  type Span,
  type UnaryCstNode,
} from "@agent-authority/grammar";
import type { BinaryOperator, Expr } from "./ast.js";
import { error, type Diagnostic } from "./diagnostic.js";
import { LIMITS } from "./limits.js";

/** Builds the AST of a parsed policy; literal problems are appended to `diagnostics`. */
export function astFromCst(cst: PolicyCstNode, diagnostics: Diagnostic[]): Expr {
  return expression(cst.children.expression[0]!, diagnostics);
}

function expression(node: ExpressionCstNode, out: Diagnostic[]): Expr {
  return disjunction(node.children.disjunction[0]!, out);
}

function disjunction(node: DisjunctionCstNode, out: Diagnostic[]): Expr {
  const operands = node.children.operands;
  let result = conjunction(operands[0]!, out);
  for (let i = 1; i < operands.length; i++) result = binary("||", result, conjunction(operands[i]!, out));
  return result;
}

function conjunction(node: ConjunctionCstNode, out: Diagnostic[]): Expr {
  const operands = node.children.operands;
  let result = comparison(operands[0]!, out);
  for (let i = 1; i < operands.length; i++) result = binary("&&", result, comparison(operands[i]!, out));
  return result;
}

function comparison(node: ComparisonCstNode, out: Diagnostic[]): Expr {
  const operands = node.children.operands;
  const left = additive(operands[0]!, out);
  const operator = node.children.operator?.[0];
  if (operator === undefined || operands.length < 2) return left;
  return binary(operator.image as BinaryOperator, left, additive(operands[1]!, out));
}

function additive(node: AdditiveCstNode, out: Diagnostic[]): Expr {
  const operands = node.children.operands;
  const operators = node.children.operators ?? [];
  let result = multiplicative(operands[0]!, out);
  for (let i = 1; i < operands.length; i++) {
    result = binary(operators[i - 1]!.image as BinaryOperator, result, multiplicative(operands[i]!, out));
  }
  return result;
}

function multiplicative(node: MultiplicativeCstNode, out: Diagnostic[]): Expr {
  const operands = node.children.operands;
  let result = unary(operands[0]!, out);
  for (let i = 1; i < operands.length; i++) result = binary("*", result, unary(operands[i]!, out));
  return result;
}

function unary(node: UnaryCstNode, out: Diagnostic[]): Expr {
  const operator = node.children.operator?.[0];
  const operand = node.children.operand?.[0];
  if (operator !== undefined && operand !== undefined) {
    const inner = unary(operand, out);
    return { kind: "unary", op: operator.image as "!" | "-", operand: inner, span: joinSpans(spanOfToken(operator), inner.span) };
  }
  return primary(node.children.primary![0]!, out);
}

function primary(node: PrimaryCstNode, out: Diagnostic[]): Expr {
  const c = node.children;
  if (c.Integer) return integer(c.Integer[0]!, out);
  if (c.StringLiteral) {
    const token = c.StringLiteral[0]!;
    return { kind: "string", value: decodeString(token, out), span: spanOfToken(token) };
  }
  if (c.True) return { kind: "bool", value: true, span: spanOfToken(c.True[0]!) };
  if (c.False) return { kind: "bool", value: false, span: spanOfToken(c.False[0]!) };
  if (c.Null) return { kind: "null", span: spanOfToken(c.Null[0]!) };
  if (c.list) return list(c.list[0]!, out);
  if (c.parenthesized) {
    const p = c.parenthesized[0]!.children;
    const inner = expression(p.expression[0]!, out);
    // Parentheses leave no node behind, but the span of what they enclose grows to cover them
    // so that a diagnostic on `(a || b)` underlines the parentheses too.
    return { ...inner, span: { start: p.LParen[0]!.startOffset, end: spanOfToken(p.RParen[0]!).end } } as Expr;
  }
  return callOrName(c.callOrName![0]!, out);
}

function integer(token: IToken, out: Diagnostic[]): Expr {
  const span = spanOfToken(token);
  const value = Number(token.image);
  if (!Number.isSafeInteger(value)) {
    out.push(error("integer-out-of-range", `integer \`${token.image}\` is larger than ${LIMITS.integerMax}`, span, "integers are safe integers, at most 2^53 - 1"));
    return { kind: "int", value: 0, span };
  }
  return { kind: "int", value, span };
}

function list(node: ListCstNode, out: Diagnostic[]): Expr {
  const c = node.children;
  const elements = (c.elements ?? []).map((element) => expression(element, out));
  const span: Span = { start: c.LBracket[0]!.startOffset, end: spanOfToken(c.RBracket[0]!).end };
  if (elements.length > LIMITS.listElementsMax) {
    const first = elements[LIMITS.listElementsMax]!.span;
    out.push(error("list-too-long", `list of ${elements.length} elements is longer than ${LIMITS.listElementsMax}`, { start: first.start, end: span.end }));
  }
  return { kind: "list", elements, span };
}

function callOrName(node: CallOrNameCstNode, out: Diagnostic[]): Expr {
  const c = node.children;
  const nameToken = c.name[0]!;
  const nameSpan = spanOfToken(nameToken);
  if (c.LParen) {
    const args = (c.arguments ?? []).map((argument) => expression(argument, out));
    return { kind: "call", callee: nameToken.image, args, span: joinSpans(nameSpan, spanOfToken(c.RParen![0]!)), calleeSpan: nameSpan };
  }
  const pathTokens = c.path ?? [];
  const path = pathTokens.map((token) => token.image);
  const span = pathTokens.length > 0 ? joinSpans(nameSpan, spanOfToken(pathTokens[pathTokens.length - 1]!)) : nameSpan;
  return { kind: "name", name: nameToken.image, path, span };
}

function binary(op: BinaryOperator, left: Expr, right: Expr): Expr {
  return { kind: "binary", op, left, right, span: joinSpans(left.span, right.span) };
}

const simpleEscapes: Record<string, string> = { '"': '"', "\\": "\\", n: "\n", r: "\r", t: "\t" };

/** The value of a string literal; an unknown escape is reported with its own span. */
function decodeString(token: IToken, out: Diagnostic[]): string {
  const image = token.image;
  if (image.indexOf("\\") < 0) return image.slice(1, -1);
  let value = "";
  for (let i = 1; i < image.length - 1; i++) {
    const ch = image[i]!;
    if (ch !== "\\") {
      value += ch;
      continue;
    }
    const next = image[i + 1]!;
    const simple = simpleEscapes[next];
    if (simple !== undefined) {
      value += simple;
      i++;
    } else if (next === "u" && /^[0-9a-fA-F]{4}$/.test(image.slice(i + 2, i + 6))) {
      value += String.fromCharCode(parseInt(image.slice(i + 2, i + 6), 16));
      i += 5;
    } else {
      const start = token.startOffset + i;
      const width = next === "u" ? Math.min(2 + countHex(image, i + 2), image.length - 1 - i) : 2;
      out.push(error("invalid-escape", `invalid escape \`${image.slice(i, i + width)}\` in string`, { start, end: start + width }, 'the escapes are \\", \\\\, \\n, \\r, \\t and \\uXXXX'));
      i += width - 1;
    }
  }
  return value;
}

function countHex(image: string, from: number): number {
  let n = 0;
  while (n < 4 && from + n < image.length - 1 && /[0-9a-fA-F]/.test(image[from + n]!)) n++;
  return n;
}
