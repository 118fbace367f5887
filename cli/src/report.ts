// Diagnostics as text with a code frame, as JSON, or as SARIF 2.1.0.
import type { FamilyDiagnostic, SourceText } from "@agent-authority/families";
import { escapeHidden } from "@agent-authority/language";
import { relativeUri } from "./repo-root.js";
import { ruleText } from "./rules.js";
import type { Paint } from "./terminal.js";

export type ReportFormat = "text" | "json" | "sarif";
export const REPORT_FORMATS: readonly ReportFormat[] = ["text", "json", "sarif"];

/** One file's diagnostics and the text they point into. */
export interface FileReport {
  readonly path: string;
  readonly source: SourceText;
  readonly diagnostics: readonly FamilyDiagnostic[];
  /** Errors left out by `--max-errors`. */
  readonly hidden?: number;
}

/** The errors shown per file unless `--max-errors` says otherwise; 0 shows every one. */
export const MAX_ERRORS_DEFAULT = 10;

/**
 * Each report with at most `max` errors (the first, in source order) and every warning; the
 * number left out is kept, so the text says so. `max` 0 keeps everything.
 */
export function limitErrors<R extends FileReport>(reports: readonly R[], max: number): R[] {
  if (max === 0) return [...reports];
  return reports.map((r) => {
    let shown = 0;
    const diagnostics = r.diagnostics.filter((d) => d.severity !== "error" || ++shown <= max);
    const hidden = r.diagnostics.length - diagnostics.length;
    return hidden === 0 ? r : { ...r, diagnostics, hidden };
  });
}

const TAB_WIDTH = 1;

/**
 * `file:line:col: error[code]: message`, then the line with a caret under the range (the first
 * line of it when it spans several), then the help.
 */
export function formatText(reports: readonly FileReport[], paint: Paint): string {
  let out = "";
  for (const report of reports) {
    for (const d of report.diagnostics) {
      const where = `${report.path}:${d.range.start.line}:${d.range.start.column}`;
      const label = d.severity === "error" ? paint.red(paint.bold("error")) : paint.yellow(paint.bold("warning"));
      out += `${paint.bold(where)}: ${label}[${d.code}]: ${d.message}\n`;
      out += codeFrame(report.source, d, paint);
      if (d.help !== undefined) out += `  ${paint.cyan("help")}: ${d.help}\n`;
      out += "\n";
    }
    if (report.hidden !== undefined && report.hidden > 0) {
      out += `${paint.bold(report.path)}: ${report.hidden} more error${report.hidden === 1 ? "" : "s"} not shown (\`--max-errors 0\` shows all)\n\n`;
    }
  }
  return out;
}

export function codeFrame(source: SourceText, d: FamilyDiagnostic, paint: Paint): string {
  // Positions are 1-based; a diagnostic never points before the file's start, even if a bug says so.
  const line = Math.max(1, d.range.start.line);
  const raw = source.lineText(line).replace(/\t/g, " ".repeat(TAB_WIDTH));
  const rawStart = Math.max(1, d.range.start.column);
  const rawEnd = d.range.end.line === line ? Math.max(d.range.end.column, rawStart + 1) : raw.length + 1;
  // Hidden characters (bidi controls, zero-width) print as escapes, never raw to a terminal; the
  // columns of the marker move with them.
  const full = escapeHidden(raw);
  const startCol = escapeHidden(raw.slice(0, rawStart - 1)).length + 1;
  const endCol = escapeHidden(raw.slice(0, rawEnd - 1)).length + 1;
  // A long line (a minified file, a value of a megabyte) shows a window around the column.
  const from =
    full.length <= FRAME_CHARS_MAX ? 0 : Math.max(0, Math.min(startCol - 1 - FRAME_CONTEXT_CHARS, full.length - FRAME_CHARS_MAX));
  const text =
    full.length <= FRAME_CHARS_MAX
      ? full
      : `${from > 0 ? "…" : ""}${full.slice(from, from + FRAME_CHARS_MAX)}${from + FRAME_CHARS_MAX < full.length ? "…" : ""}`;
  const shift = from > 0 ? from - 1 : 0;
  const width = Math.max(1, Math.min(endCol - shift, text.length + 1) - (startCol - shift));
  const pad = " ".repeat(String(line).length);
  const mark = d.severity === "error" ? paint.red : paint.yellow;
  return (
    `${pad} ${paint.dim("|")}\n` +
    `${paint.dim(String(line))} ${paint.dim("|")} ${text}\n` +
    `${pad} ${paint.dim("|")} ${" ".repeat(startCol - shift - 1)}${mark("^".repeat(width))}\n`
  );
}

/** The most characters of a line a code frame shows, and how many of them lie before the column. */
const FRAME_CHARS_MAX = 160;
const FRAME_CONTEXT_CHARS = 40;

export function formatJson(reports: readonly FileReport[]): string {
  const diagnostics = reports.flatMap((r) =>
    r.diagnostics.map((d) => ({
      file: r.path,
      line: d.range.start.line,
      column: d.range.start.column,
      end_line: d.range.end.line,
      end_column: d.range.end.column,
      severity: d.severity,
      code: d.code,
      message: d.message,
      ...(d.help !== undefined ? { help: d.help } : {}),
    })),
  );
  const errors = diagnostics.filter((d) => d.severity === "error").length;
  return `${JSON.stringify({ files: reports.length, errors, warnings: diagnostics.length - errors, diagnostics }, null, 2)}\n`;
}

export const SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/** A file report that knows where the file is, for SARIF's repository-relative URIs. */
export interface LocatedReport extends FileReport {
  readonly absolute?: string;
}

/**
 * A SARIF 2.1.0 log with one run; each distinct code is a rule with its description in words and
 * a link to its section of the docs, each diagnostic a result. Paths are relative to `root` (the
 * repository), percent-encoded, under the base `%SRCROOT%`, as code scanning expects.
 */
export function formatSarif(reports: readonly LocatedReport[], toolVersion: string, root?: string): string {
  const codes = [...new Set(reports.flatMap((r) => r.diagnostics.map((d) => d.code)))].sort();
  const uriOf = (r: LocatedReport): string =>
    root !== undefined && r.absolute !== undefined ? relativeUri(root, r.absolute) : r.path.split("/").map(encodeURIComponent).join("/");
  const location = (r: LocatedReport, index: number) => ({ uri: uriOf(r), uriBaseId: "%SRCROOT%", index });
  const log = {
    $schema: SARIF_SCHEMA_URI,
    version: "2.1.0",
    runs: [
      {
        tool: {
          driver: {
            name: "authority",
            version: toolVersion,
            rules: codes.map((id) => {
              const rule = ruleText(id);
              return {
                id,
                name: ruleName(id),
                shortDescription: { text: rule.short },
                fullDescription: { text: rule.full },
                help: { text: rule.help },
              };
            }),
          },
        },
        artifacts: reports.map((r, i) => {
          const { index: _index, ...at } = location(r, i);
          return { location: at, sourceLanguage: r.path.endsWith(".policy") ? "policy" : "yaml" };
        }),
        results: reports.flatMap((r, artifactIndex) =>
          r.diagnostics.map((d) => ({
            ruleId: d.code,
            ruleIndex: codes.indexOf(d.code),
            level: d.severity === "error" ? "error" : "warning",
            message: { text: d.help !== undefined ? `${d.message} (help: ${d.help})` : d.message },
            locations: [
              {
                physicalLocation: {
                  artifactLocation: location(r, artifactIndex),
                  region: {
                    // SARIF lines and columns start at 1.
                    startLine: Math.max(1, d.range.start.line),
                    startColumn: Math.max(1, d.range.start.column),
                    endLine: Math.max(1, d.range.end.line, d.range.start.line),
                    endColumn:
                      d.range.end.line > d.range.start.line ? d.range.end.column : Math.max(d.range.end.column, d.range.start.column + 1),
                  },
                },
              },
            ],
          })),
        ),
        columnKind: "utf16CodeUnits",
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}

/** A rule's name in PascalCase, as SARIF viewers show it: `policy/unknown-name` is `PolicyUnknownName`. */
function ruleName(code: string): string {
  return code
    .split(/[/-]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
}
