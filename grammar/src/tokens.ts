// The lexical grammar of policy.ebnf: every token type and the one lexer instance.
import type { TokenType } from "chevrotain";
import { createToken, Lexer } from "./chevrotain.js";

/** Categories: one CONSUME matches any member, which keeps the parser free of wide alternations. */
export const BinaryOperator = createToken({ name: "BinaryOperator", pattern: Lexer.NA });
export const PrefixOperator = createToken({ name: "PrefixOperator", pattern: Lexer.NA });
export const Literal = createToken({ name: "Literal", pattern: Lexer.NA });

export const WhiteSpace = createToken({ name: "WhiteSpace", pattern: /[ \t\r\n]+/, group: Lexer.SKIPPED });
/**
 * `//` to the end of the line: kept apart from the tokens the parser reads, so the formatter can
 * keep it. A line ends where editors end it: at a line feed or carriage return, and at U+0085,
 * U+2028 and U+2029, which outside a string are then refused (no token matches them).
 */
export const Comment = createToken({ name: "Comment", pattern: /\/\/[^\n\r\u0085\u2028\u2029]*/, group: "comments" });
export const Identifier = createToken({ name: "Identifier", pattern: /[A-Za-z_][A-Za-z0-9_]*/ });
export const True = createToken({ name: "True", pattern: /true/, longer_alt: Identifier, categories: [Literal] });
export const False = createToken({ name: "False", pattern: /false/, longer_alt: Identifier, categories: [Literal] });
export const Null = createToken({ name: "Null", pattern: /null/, longer_alt: Identifier, categories: [Literal] });
export const In = createToken({ name: "In", pattern: /in/, longer_alt: Identifier, categories: [BinaryOperator] });
export const Integer = createToken({ name: "Integer", pattern: /0|[1-9][0-9]*/, categories: [Literal] });
export const StringLiteral = createToken({ name: "StringLiteral", pattern: /"(?:[^"\\\n\r]|\\[^\n\r])*"/, categories: [Literal] });
/** A string that reaches a line end or the end of input before its closing quote; reported as a lex error. */
export const UnterminatedString = createToken({ name: "UnterminatedString", pattern: /"(?:[^"\\\n\r]|\\[^\n\r])*\\?/ });
export const OrOr = createToken({ name: "OrOr", pattern: /\|\|/, categories: [BinaryOperator] });
export const AndAnd = createToken({ name: "AndAnd", pattern: /&&/, categories: [BinaryOperator] });
export const EqEq = createToken({ name: "EqEq", pattern: /==/, categories: [BinaryOperator] });
export const NotEq = createToken({ name: "NotEq", pattern: /!=/, categories: [BinaryOperator] });
export const LtEq = createToken({ name: "LtEq", pattern: /<=/, categories: [BinaryOperator] });
export const GtEq = createToken({ name: "GtEq", pattern: />=/, categories: [BinaryOperator] });
export const Lt = createToken({ name: "Lt", pattern: /</, categories: [BinaryOperator] });
export const Gt = createToken({ name: "Gt", pattern: />/, categories: [BinaryOperator] });
export const Bang = createToken({ name: "Bang", pattern: /!/, categories: [PrefixOperator] });
export const Plus = createToken({ name: "Plus", pattern: /\+/, categories: [BinaryOperator] });
export const Minus = createToken({ name: "Minus", pattern: /-/, categories: [BinaryOperator, PrefixOperator] });
export const Star = createToken({ name: "Star", pattern: /\*/, categories: [BinaryOperator] });
export const LParen = createToken({ name: "LParen", pattern: /\(/ });
export const RParen = createToken({ name: "RParen", pattern: /\)/ });
export const LBracket = createToken({ name: "LBracket", pattern: /\[/ });
export const RBracket = createToken({ name: "RBracket", pattern: /]/ });
export const Comma = createToken({ name: "Comma", pattern: /,/ });
export const Dot = createToken({ name: "Dot", pattern: /\./ });

/** Every token type in lexing order: longer operators before their prefixes, keywords before names. */
export const allTokens: readonly TokenType[] = [
  BinaryOperator,
  PrefixOperator,
  Literal,
  WhiteSpace,
  Comment,
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
