// Generated from the parser by scripts/generate-cst-types.mjs; do not edit. A test fails when it drifts.
import type { CstNode, ICstVisitor, IToken } from "chevrotain";

export interface PolicyCstNode extends CstNode {
  name: "policy";
  children: PolicyCstChildren;
}

export type PolicyCstChildren = {
  expression: ExpressionCstNode[];
};

export interface ExpressionCstNode extends CstNode {
  name: "expression";
  children: ExpressionCstChildren;
}

export type ExpressionCstChildren = {
  operands: (OperandCstNode)[];
  operators?: IToken[];
};

export interface OperandCstNode extends CstNode {
  name: "operand";
  children: OperandCstChildren;
}

export type OperandCstChildren = {
  prefix?: IToken[];
  literal?: IToken[];
  list?: ListCstNode[];
  LParen?: IToken[];
  expression?: ExpressionCstNode[];
  RParen?: IToken[];
  name?: IToken[];
  arguments?: ArgumentsCstNode[];
  Dot?: IToken[];
  path?: IToken[];
};

export interface ListCstNode extends CstNode {
  name: "list";
  children: ListCstChildren;
}

export type ListCstChildren = {
  LBracket: IToken[];
  elements?: (ExpressionCstNode)[];
  Comma?: IToken[];
  RBracket: IToken[];
};

export interface ArgumentsCstNode extends CstNode {
  name: "arguments";
  children: ArgumentsCstChildren;
}

export type ArgumentsCstChildren = {
  LParen: IToken[];
  values?: (ExpressionCstNode)[];
  Comma?: IToken[];
  RParen: IToken[];
};

export interface PolicyCstVisitor<IN, OUT> extends ICstVisitor<IN, OUT> {
  policy(children: PolicyCstChildren, param?: IN): OUT;
  expression(children: ExpressionCstChildren, param?: IN): OUT;
  operand(children: OperandCstChildren, param?: IN): OUT;
  list(children: ListCstChildren, param?: IN): OUT;
  arguments(children: ArgumentsCstChildren, param?: IN): OUT;
}
