// Diagnostics: every problem the language reports is a value with a stable code and a span.
import type { Span } from "@agent-authority/grammar";

/**
 * Every diagnostic code, grouped by the phase that reports it. Codes are stable: a test compares
 * them, never the message text, and docs/policy-language.md explains each one.
 */
export const DIAGNOSTIC_CODES = [
  // Limits, checked before and while parsing.
  "policy-too-long",
  "nesting-too-deep",
  "list-too-long",
  "integer-out-of-range",
  "approver-search-too-large",
  "policy-too-costly",
  // Lexical and syntax errors.
  "unexpected-character",
  "unterminated-string",
  "invalid-escape",
  "unexpected-token",
  "unexpected-end",
  // Type errors.
  "unknown-name",
  "unknown-field",
  "unknown-function",
  "wrong-arity",
  "type-mismatch",
  "list-element-type",
  "approver-use",
  // Run-time errors: the policy fails closed.
  "runtime-type",
  "integer-overflow",
  "value-too-deep",
  "cost-exceeded",
  "invalid-path",
  "invalid-url",
  // Lint warnings.
  "constant-condition",
  "redundant-disjunct",
  "never-allows",
  "impossible-comparison",
  "duplicate-list-entry",
  "approver-unsatisfiable",
  "hidden-character",
  "mixed-script",
] as const;

export type DiagnosticCode = (typeof DIAGNOSTIC_CODES)[number];

export interface Diagnostic {
  /** Stable; never reworded. */
  readonly code: DiagnosticCode;
  readonly severity: "error" | "warning";
  /** Lower case, no final period, the user's input in backticks. */
  readonly message: string;
  readonly span: Span;
  /** Advice kept apart from the message, e.g. "did you mean `amount_minor`?". */
  readonly help?: string;
  /** A mechanical repair, which an editor offers as a quick fix: `text` replaces the text at `span`. */
  readonly fix?: Fix;
}

export interface Fix {
  /** What the fix does, e.g. "replace `=` with `==`". */
  readonly title: string;
  readonly span: Span;
  readonly text: string;
}

export function error(code: DiagnosticCode, message: string, span: Span, help?: string): Diagnostic {
  return help === undefined ? { code, severity: "error", message, span } : { code, severity: "error", message, span, help };
}

export function warning(code: DiagnosticCode, message: string, span: Span, help?: string): Diagnostic {
  return help === undefined ? { code, severity: "warning", message, span } : { code, severity: "warning", message, span, help };
}

/** `d` with a quick fix attached. */
export function withFix(d: Diagnostic, fix: Fix): Diagnostic {
  return { ...d, fix };
}

/** Orders diagnostics by position, then by code, so that output is deterministic. */
export function byPosition(a: Diagnostic, b: Diagnostic): number {
  return a.span.start - b.span.start || a.span.end - b.span.end || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0);
}
