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
