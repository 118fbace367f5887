// Public face of the grammar package: named re-exports only.
export { lineColumn, joinSpans, spanOfToken, type LineColumn, type Span } from "./span.js";
export * as tokens from "./tokens.js";
export { codePointName, escapeHidden, EXTRA_LINE_TERMINATORS, HIDDEN_PATTERN_SOURCE, hiddenCharacters, isHidden } from "./hidden.js";
export { parseCst, policyParser, PolicyParser, NESTING_DEPTH_MAX, type CstResult, type LexError, type ParseError } from "./parser.js";
export { cstTypesText } from "./cst-types.js";
export type { CstNode, IToken } from "chevrotain";
export type * from "./cst.generated.js";
