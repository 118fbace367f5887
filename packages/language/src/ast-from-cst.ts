// Pipeline step 2 of 4: CST to AST, with literal checks (escapes, integer range, list length).
import {
  joinSpans,
  spanOfToken,
  type ExpressionCstNode,
  type IToken,
  type ListCstNode,
  type OperandCstNode,
  type PolicyCstNode,
  type Span,
  tokens as T,
} from "@agent-authority/grammar";
import type { BinaryOperator, Expr } from "./ast.js";
import { error, type Diagnostic } from "./diagnostic.js";
import { LIMITS } from "./limits.js";

/** Builds the AST of a parsed policy; literal problems are appended to `diagnostics`. */
export function astFromCst(cst: PolicyCstNode, diagnostics: Diagnostic[]): Expr {
  return expression(cst.children.expression[0]!, diagnostics);
}

const NO_TOKENS: readonly IToken[] = [];
const NO_PATH: readonly string[] = Object.freeze([]);

/** Binding strength of each binary operator (grammar/policy.ebnf, the operator table). */
const PRECEDENCE: ReadonlyMap<string, number> = new Map([
  ["||", 1],
  ["&&", 2],
  ["==", 3],
  ["!=", 3],
  ["<", 3],
  ["<=", 3],
  [">", 3],
  [">=", 3],
  ["in", 3],
  ["+", 4],
  ["-", 4],
  ["*", 5],
]);
const COMPARISON = 3;

/**
 * Groups a flat `operand (operator operand)*` by precedence climbing: left-associative operators
 * fold to the left, and a second comparison at one level is a syntax error (comparisons do not chain).
 */
function expression(node: ExpressionCstNode, out: Diagnostic[]): Expr {
  const operands = node.children.operands;
  const operators = node.children.operators ?? [];
  if (operators.length === 0) return operand(operands[0]!, out);
  const state = { next: 1 };
  const first = operand(operands[0]!, out);
  return climb(first, 1, operands, operators, state, out);
}

function precedenceOf(token: IToken): number {
  return PRECEDENCE.get(token.image) ?? 0;
}

/**
 * One level of precedence climbing. A run of `&&` (or of `||`) is gathered and built as a
 * balanced tree (see `balancedChain`); every other operator folds to the left.
 */
function climb(
  left: Expr,
  minPrecedence: number,
  operands: readonly OperandCstNode[],
  operators: readonly IToken[],
  state: { next: number },
  out: Diagnostic[],
): Expr {
  let result = left;
  let chain: { op: "&&" | "||"; operands: Expr[] } | undefined;
  while (state.next - 1 < operators.length) {
    const token = operators[state.next - 1]!;
    const precedence = precedenceOf(token);
    if (precedence < minPrecedence) break;
    state.next++;
    let right = operand(operands[state.next - 1]!, out);
    while (state.next - 1 < operators.length) {
      if (precedenceOf(operators[state.next - 1]!) <= precedence) break;
      right = climb(right, precedence + 1, operands, operators, state, out);
    }
    const op = token.image as BinaryOperator;
    if (op === "&&" || op === "||") {
      if (chain !== undefined && chain.op === op) chain.operands.push(right);
      else {
        if (chain !== undefined) result = balancedChain(chain.op, chain.operands);
        chain = { op, operands: [result, right] };
      }
      continue;
    }
    if (chain !== undefined) result = balancedChain(chain.op, chain.operands);
    chain = undefined;
    result = binary(op, result, right);
    if (precedence === COMPARISON && state.next - 1 < operators.length && precedenceOf(operators[state.next - 1]!) === COMPARISON) {
      const again = operators[state.next - 1]!;
      out.push(
        error(
          "unexpected-token",
          `unexpected \`${again.image}\`: comparisons do not chain`,
          spanOfToken(again),
          "join two comparisons with `&&`",
        ),
      );
      return result;
    }
  }
  return chain === undefined ? result : balancedChain(chain.op, chain.operands);
}

/**
 * `a && b && c && …` as a balanced tree rather than a left-leaning one, so that the depth of the
 * tree grows with the logarithm of a chain's length and no walk over it recurses deeply
 * (docs/decisions/0116-balanced-chains-and-tree-depth.md). `&&` and `||` are associative under
 * the language's rules (operands are tried left to right, a false (true) operand decides, a
 * failure fails closed), so the shape changes no outcome. Up to three operands the tree is the
 * left-leaning one.
 */
export function balancedChain(op: "&&" | "||", operands: readonly Expr[], built?: (node: Expr) => void): Expr {
  const build = (from: number, to: number): Expr => {
    if (to - from === 1) return operands[from]!;
    const middle = from + Math.ceil((to - from) / 2);
    const node = binary(op, build(from, middle), build(middle, to));
    built?.(node);
    return node;
  };
  return build(0, operands.length);
}

function operand(node: OperandCstNode, out: Diagnostic[]): Expr {
  let result = primary(node, out);
  const prefix = node.children.prefix;
  if (prefix === undefined) return result;
  for (let i = prefix.length - 1; i >= 0; i--) {
    const token = prefix[i]!;
    result = { kind: "unary", op: token.image as "!" | "-", operand: result, span: joinSpans(spanOfToken(token), result.span) };
  }
  return result;
}

/** The operand without its prefix operators. */
function primary(node: OperandCstNode, out: Diagnostic[]): Expr {
  const c = node.children;
  if (c.literal) return literal(c.literal[0]!, out);
  if (c.list) return list(c.list[0]!, out);
  if (c.expression) {
    const inner = expression(c.expression[0]!, out);
    // Parentheses leave no node behind, but the span of what they enclose grows to cover them
    // so that a diagnostic on `(a || b)` underlines the parentheses too.
    return { ...inner, span: { start: c.LParen![0]!.startOffset, end: spanOfToken(c.RParen![0]!).end } } as Expr;
  }
  return callOrName(node, out);
}

function literal(token: IToken, out: Diagnostic[]): Expr {
  const span = spanOfToken(token);
  switch (token.tokenType) {
    case T.Integer:
      return integer(token, out);
    case T.StringLiteral:
      return { kind: "string", value: decodeString(token, out), span };
    case T.True:
      return { kind: "bool", value: true, span };
    case T.False:
      return { kind: "bool", value: false, span };
    default:
      return { kind: "null", span };
  }
}

function integer(token: IToken, out: Diagnostic[]): Expr {
  const span = spanOfToken(token);
  const value = Number(token.image);
  if (!Number.isSafeInteger(value)) {
    out.push(
      error(
        "integer-out-of-range",
        `integer \`${token.image}\` is larger than ${LIMITS.integerMax}`,
        span,
        "integers are safe integers, at most 2^53 - 1",
      ),
    );
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
    out.push(
      error("list-too-long", `list of ${elements.length} elements is longer than ${LIMITS.listElementsMax}`, {
        start: first.start,
        end: span.end,
      }),
    );
  }
  return { kind: "list", elements, span };
}

function callOrName(node: OperandCstNode, out: Diagnostic[]): Expr {
  const c = node.children;
  const nameToken = c.name![0]!;
  const nameSpan = spanOfToken(nameToken);
  const pathTokens = c.path ?? NO_TOKENS;
  if (c.arguments) {
    const a = c.arguments[0]!.children;
    const args = (a.values ?? []).map((argument) => expression(argument, out));
    if (c.Dot) out.push(error("unexpected-token", "unexpected `.`: a function call has no fields", spanOfToken(c.Dot[0]!)));
    return { kind: "call", callee: nameToken.image, args, span: joinSpans(nameSpan, spanOfToken(a.RParen[0]!)), calleeSpan: nameSpan };
  }
  const path = pathTokens.length === 0 ? NO_PATH : pathTokens.map((token) => token.image);
  const span = pathTokens.length > 0 ? joinSpans(nameSpan, spanOfToken(pathTokens[pathTokens.length - 1]!)) : nameSpan;
  return { kind: "name", name: nameToken.image, path, span };
}

function binary(op: BinaryOperator, left: Expr, right: Expr): Expr {
  return { kind: "binary", op, left, right, span: joinSpans(left.span, right.span) };
}

const simpleEscapes: ReadonlyMap<string, string> = new Map([
  ['"', '"'],
  ["\\", "\\"],
  ["n", "\n"],
  ["r", "\r"],
  ["t", "\t"],
]);

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
    const simple = simpleEscapes.get(next);
    if (simple !== undefined) {
      value += simple;
      i++;
    } else if (next === "u" && /^[0-9a-fA-F]{4}$/.test(image.slice(i + 2, i + 6))) {
      value += String.fromCharCode(parseInt(image.slice(i + 2, i + 6), 16));
      i += 5;
    } else {
      const start = token.startOffset + i;
      const width = next === "u" ? Math.min(2 + countHex(image, i + 2), image.length - 1 - i) : 2;
      out.push(
        error(
          "invalid-escape",
          `invalid escape \`${image.slice(i, i + width)}\` in string`,
          { start, end: start + width },
          'the escapes are \\", \\\\, \\n, \\r, \\t and \\uXXXX',
        ),
      );
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
