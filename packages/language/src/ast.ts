// The abstract syntax tree: what the checker, compiler, formatter and lint all read.
import type { Span } from "@agent-authority/grammar";

export type BinaryOperator = "||" | "&&" | "==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "+" | "-" | "*";
export type UnaryOperator = "!" | "-";

export type Expr =
  | { readonly kind: "int"; readonly value: number; readonly span: Span }
  | { readonly kind: "string"; readonly value: string; readonly span: Span }
  | { readonly kind: "bool"; readonly value: boolean; readonly span: Span }
  | { readonly kind: "null"; readonly span: Span }
  | { readonly kind: "list"; readonly elements: readonly Expr[]; readonly span: Span }
  /** A name, with a field path for `args.<name>` (and deeper fields of a dynamic value). */
  | { readonly kind: "name"; readonly name: string; readonly path: readonly string[]; readonly span: Span }
  | { readonly kind: "call"; readonly callee: string; readonly args: readonly Expr[]; readonly span: Span; readonly calleeSpan: Span }
  | { readonly kind: "unary"; readonly op: UnaryOperator; readonly operand: Expr; readonly span: Span }
  | { readonly kind: "binary"; readonly op: BinaryOperator; readonly left: Expr; readonly right: Expr; readonly span: Span };

export type ExprOf<K extends Expr["kind"]> = Extract<Expr, { kind: K }>;

/** Whether `expr` mentions the name `approver` anywhere. */
export function mentionsApprover(expr: Expr): boolean {
  switch (expr.kind) {
    case "name":
      return expr.name === "approver";
    case "list":
      return expr.elements.some(mentionsApprover);
    case "call":
      return expr.args.some(mentionsApprover);
    case "unary":
      return mentionsApprover(expr.operand);
    case "binary":
      return mentionsApprover(expr.left) || mentionsApprover(expr.right);
    default:
      return false;
  }
}

/** Whether `expr` mentions no name at all: its value is fixed by the text alone. */
export function isConstant(expr: Expr): boolean {
  switch (expr.kind) {
    case "name":
      return false;
    case "list":
      return expr.elements.every(isConstant);
    case "call":
      return expr.args.every(isConstant);
    case "unary":
      return isConstant(expr.operand);
    case "binary":
      return isConstant(expr.left) && isConstant(expr.right);
    default:
      return true;
  }
}

/**
 * The first node, in source order, that lies more than `max` levels deep, the root being level 1;
 * an explicit stack, so a tree of any depth is measured without recursion.
 */
export function nodeDeeperThan(root: Expr, max: number): Expr | undefined {
  const stack: { readonly node: Expr; readonly depth: number }[] = [{ node: root, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (depth > max) return node;
    const children = childrenOf(node);
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i]!, depth: depth + 1 });
  }
  return undefined;
}

const NO_CHILDREN: readonly Expr[] = Object.freeze([]);

/** The direct subexpressions of `e`, left to right. */
export function childrenOf(e: Expr): readonly Expr[] {
  switch (e.kind) {
    case "list":
      return e.elements;
    case "call":
      return e.args;
    case "unary":
      return [e.operand];
    case "binary":
      return [e.left, e.right];
    default:
      return NO_CHILDREN;
  }
}

/** A copy of `e` with each direct subexpression replaced by `f` of it (a leaf is returned as it is). */
export function mapChildren(e: Expr, f: (child: Expr) => Expr): Expr {
  switch (e.kind) {
    case "list":
      return { ...e, elements: e.elements.map(f) };
    case "call":
      return { ...e, args: e.args.map(f) };
    case "unary":
      return { ...e, operand: f(e.operand) };
    case "binary":
      return { ...e, left: f(e.left), right: f(e.right) };
    default:
      return e;
  }
}

/**
 * The operands of a chain of one logical operator, left to right, each with the span of the node
 * it is an operand of; an explicit stack, so a chain of any shape or length is walked flat.
 */
export function chainOperands(e: ExprOf<"binary">): { readonly operands: readonly Expr[]; readonly spans: readonly Span[] } {
  const operands: Expr[] = [];
  const spans: Span[] = [];
  const stack: { readonly node: Expr; readonly parent: Span }[] = [
    { node: e.right, parent: e.span },
    { node: e.left, parent: e.span },
  ];
  while (stack.length > 0) {
    const { node, parent } = stack.pop()!;
    if (node.kind === "binary" && node.op === e.op) {
      stack.push({ node: node.right, parent: node.span }, { node: node.left, parent: node.span });
    } else {
      operands.push(node);
      spans.push(parent);
    }
  }
  return { operands, spans };
}

/**
 * Whether two trees mean the same: equal ignoring spans and the shape of `&&` and `||` chains
 * (which are associative). An explicit stack, so any tree is compared without recursion.
 */
export function equivalentTrees(a: Expr, b: Expr): boolean {
  const stack: [Expr, Expr][] = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop()!;
    if (x.kind !== y.kind || !sameNode(x, y)) return false;
    const xs = x.kind === "binary" && (x.op === "&&" || x.op === "||") ? chainOperands(x).operands : childrenOf(x);
    const ys = y.kind === "binary" && (y.op === "&&" || y.op === "||") ? chainOperands(y).operands : childrenOf(y);
    if (xs.length !== ys.length) return false;
    for (let i = 0; i < xs.length; i++) stack.push([xs[i]!, ys[i]!]);
  }
  return true;
}

/** Whether two nodes of one kind agree on everything but their children and spans. */
function sameNode(x: Expr, y: Expr): boolean {
  switch (x.kind) {
    case "int":
    case "string":
    case "bool":
      return x.value === (y as typeof x).value;
    case "name":
      return x.name === (y as typeof x).name && x.path.join(".") === (y as typeof x).path.join(".");
    case "call":
      return x.callee === (y as typeof x).callee;
    case "unary":
    case "binary":
      return x.op === (y as typeof x).op;
    default:
      return true;
  }
}
