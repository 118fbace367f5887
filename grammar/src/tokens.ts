// The lexical grammar of policy.ebnf: every token type and the one lexer instance.
import { createToken, Lexer, type TokenType } from "chevrotain";

export const WhiteSpace = createToken({ name: "WhiteSpace", pattern: /[ \t\r\n]+/, group: Lexer.SKIPPED });
export const Identifier = createToken({ name: "Identifier", pattern: /[A-Za-z_][A-Za-z0-9_]*/ });
export const True = createToken({ name: "True", pattern: /true/, longer_alt: Identifier });
export const False = createToken({ name: "False", pattern: /false/, longer_alt: Identifier });
export const Null = createToken({ name: "Null", pattern: /null/, longer_alt: Identifier });
export const In = createToken({ name: "In", pattern: /in/, longer_alt: Identifier });
export const Integer = createToken({ name: "Integer", pattern: /0|[1-9][0-9]*/ });
export const StringLiteral = createToken({ name: "StringLiteral", pattern: /"(?:[^"\\\n\r]|\\[^\n\r])*"/ });
/** A string that reaches a line end or the end of input before its closing quote; reported as a lex error. */
export const UnterminatedString = createToken({ name: "UnterminatedString", pattern: /"(?:[^"\\\n\r]|\\[^\n\r])*\\?/ });
export const OrOr = createToken({ name: "OrOr", pattern: /\|\|/ });
export const AndAnd = createToken({ name: "AndAnd", pattern: /&&/ });
export const EqEq = createToken({ name: "EqEq", pattern: /==/ });
export const NotEq = createToken({ name: "NotEq", pattern: /!=/ });
export const LtEq = createToken({ name: "LtEq", pattern: /<=/ });
export const GtEq = createToken({ name: "GtEq", pattern: />=/ });
export const Lt = createToken({ name: "Lt", pattern: /</ });
export const Gt = createToken({ name: "Gt", pattern: />/ });
export const Bang = createToken({ name: "Bang", pattern: /!/ });
export const Plus = createToken({ name: "Plus", pattern: /\+/ });
export const Minus = createToken({ name: "Minus", pattern: /-/ });
export const Star = createToken({ name: "Star", pattern: /\*/ });
export const LParen = createToken({ name: "LParen", pattern: /\(/ });
export const RParen = createToken({ name: "RParen", pattern: /\)/ });
export const LBracket = createToken({ name: "LBracket", pattern: /\[/ });
export const RBracket = createToken({ name: "RBracket", pattern: /]/ });
export const Comma = createToken({ name: "Comma", pattern: /,/ });
export const Dot = createToken({ name: "Dot", pattern: /\./ });

/** Every token type in lexing order: longer operators before their prefixes, keywords before names. */
export const allTokens: readonly TokenType[] = [
  WhiteSpace,
  True,
  False,
  Null,
  In,
  Identifier,
  Integer,
  StringLiteral,
  UnterminatedString,
  OrOr,
  AndAnd,
  EqEq,
  NotEq,
  LtEq,
  GtEq,
  Lt,
  Gt,
  Bang,
  Plus,
  Minus,
  Star,
  LParen,
  RParen,
  LBracket,
  RBracket,
  Comma,
  Dot,
];

/** The one lexer instance; offsets only, since every position is a span over the text. */
export const policyLexer = new Lexer(allTokens as TokenType[], {
  positionTracking: "onlyOffset",
  ensureOptimizations: true,
});
