// Source positions: the one half-open Span type and the one place chevrotain offsets become spans.
import type { IToken } from "chevrotain";

/** A half-open range of UTF-16 code-unit offsets into the source text: `start` ≤ i < `end`. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/**
 * The span of one token. Chevrotain's `endOffset` is inclusive (and the lexer tracks only start
 * offsets, for speed), so this is the only place that turns a token position into a span: every
 * other module works with half-open spans.
 */
export function spanOfToken(token: IToken): Span {
  return { start: token.startOffset, end: token.startOffset + token.image.length };
}

/** The span of a chevrotain lexing error (`offset` plus `length`, already half-open). */
export function spanOfLexingError(error: { readonly offset: number; readonly length: number }): Span {
  return { start: error.offset, end: error.offset + error.length };
}

/** The smallest span covering both `a` and `b`. */
export function joinSpans(a: Span, b: Span): Span {
  return { start: Math.min(a.start, b.start), end: Math.max(a.end, b.end) };
}

/** One-based line and column (in UTF-16 code units) of an offset into `text`. */
export interface LineColumn {
  readonly line: number;
  readonly column: number;
}

/** The line and column of `offset`; a line ends at `\n`, and `\r\n` counts as one line end. */
export function lineColumn(text: string, offset: number): LineColumn {
  const end = Math.max(0, Math.min(offset, text.length));
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}
