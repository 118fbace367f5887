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
  disjunction: DisjunctionCstNode[];
};

export interface DisjunctionCstNode extends CstNode {
  name: "disjunction";
  children: DisjunctionCstChildren;
}

export type DisjunctionCstChildren = {
  operands: (ConjunctionCstNode)[];
  OrOr?: IToken[];
};

export interface ConjunctionCstNode extends CstNode {
  name: "conjunction";
  children: ConjunctionCstChildren;
}

export type ConjunctionCstChildren = {
  operands: (ComparisonCstNode)[];
  AndAnd?: IToken[];
};

export interface ComparisonCstNode extends CstNode {
  name: "comparison";
  children: ComparisonCstChildren;
}

export type ComparisonCstChildren = {
  operands: (AdditiveCstNode)[];
  operator?: (IToken)[];
};

export interface AdditiveCstNode extends CstNode {
  name: "additive";
  children: AdditiveCstChildren;
}

export type AdditiveCstChildren = {
  operands: (MultiplicativeCstNode)[];
  operators?: (IToken)[];
};

export interface MultiplicativeCstNode extends CstNode {
  name: "multiplicative";
  children: MultiplicativeCstChildren;
}

export type MultiplicativeCstChildren = {
  operands: (UnaryCstNode)[];
  operators?: IToken[];
};

export interface UnaryCstNode extends CstNode {
  name: "unary";
  children: UnaryCstChildren;
}

export type UnaryCstChildren = {
  operator?: (IToken)[];
  operand?: UnaryCstNode[];
  primary?: PrimaryCstNode[];
};

export interface PrimaryCstNode extends CstNode {
  name: "primary";
  children: PrimaryCstChildren;
}

export type PrimaryCstChildren = {
  Integer?: IToken[];
  StringLiteral?: IToken[];
  True?: IToken[];
  False?: IToken[];
  Null?: IToken[];
  list?: ListCstNode[];
  parenthesized?: ParenthesizedCstNode[];
  callOrName?: CallOrNameCstNode[];
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

export interface ParenthesizedCstNode extends CstNode {
  name: "parenthesized";
  children: ParenthesizedCstChildren;
}

export type ParenthesizedCstChildren = {
  LParen: IToken[];
  expression: ExpressionCstNode[];
  RParen: IToken[];
};

export interface CallOrNameCstNode extends CstNode {
  name: "callOrName";
  children: CallOrNameCstChildren;
}

export type CallOrNameCstChildren = {
  name: IToken[];
  LParen?: IToken[];
  arguments?: (ExpressionCstNode)[];
  Comma?: IToken[];
  RParen?: IToken[];
  Dot?: IToken[];
  path?: IToken[];
};

export interface PolicyCstVisitor<IN, OUT> extends ICstVisitor<IN, OUT> {
  policy(children: PolicyCstChildren, param?: IN): OUT;
  expression(children: ExpressionCstChildren, param?: IN): OUT;
  disjunction(children: DisjunctionCstChildren, param?: IN): OUT;
  conjunction(children: ConjunctionCstChildren, param?: IN): OUT;
  comparison(children: ComparisonCstChildren, param?: IN): OUT;
  additive(children: AdditiveCstChildren, param?: IN): OUT;
  multiplicative(children: MultiplicativeCstChildren, param?: IN): OUT;
  unary(children: UnaryCstChildren, param?: IN): OUT;
  primary(children: PrimaryCstChildren, param?: IN): OUT;
  list(children: ListCstChildren, param?: IN): OUT;
  parenthesized(children: ParenthesizedCstChildren, param?: IN): OUT;
  callOrName(children: CallOrNameCstChildren, param?: IN): OUT;
}
