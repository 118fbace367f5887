// Family diagnostics: every error and warning carries the file, line and column it is about.

/** A position in a source file: 1-based line and column (UTF-16 code units), plus the 0-based offset. */
export interface SourcePosition {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
}

/** A half-open range in a source file. */
export interface SourceRange {
  readonly start: SourcePosition;
  readonly end: SourcePosition;
}

export type Severity = "error" | "warning";

export interface FamilyDiagnostic {
  /** Stable code, never reworded (for example `yaml-syntax`, `schema`, `policy/unknown-name`). */
  readonly code: string;
  readonly severity: Severity;
  /** Lower case, no final period, the user's input in backticks. */
  readonly message: string;
  readonly help?: string;
  /** The file name the caller passed in, as given. */
  readonly file: string;
  readonly range: SourceRange;
  /** The field the diagnostic is about, as a dotted path (`parameters.agent_id.pattern`), when one field is. */
  readonly field?: string;
  /** A mechanical repair an editor offers as a quick fix: `text` replaces the file's text at `range`. */
  readonly fix?: FamilyFix;
}

export interface FamilyFix {
  readonly title: string;
  readonly range: SourceRange;
  readonly text: string;
}

/** True when any diagnostic is an error. */
export function hasErrors(diagnostics: readonly FamilyDiagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === "error");
}

/** Orders diagnostics by position, then by code, so every report is stable. */
export function sortDiagnostics(diagnostics: readonly FamilyDiagnostic[]): FamilyDiagnostic[] {
  return [...diagnostics].sort(
    (a, b) => a.file.localeCompare(b.file) || a.range.start.offset - b.range.start.offset || a.code.localeCompare(b.code),
  );
}
