// `authority lint`: check families and policy files; exit 1 when any has an error.
import { type FamilyDiagnostic, sortDiagnostics } from "@agent-authority/families";
import { choice, count, flag, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { collectInputs } from "../files.js";
import { type CheckedFile, checkFileOrReport, INTERNAL_ERROR_CODE } from "../load.js";
import { formatJson, formatSarif, formatText, limitErrors, MAX_ERRORS_DEFAULT, REPORT_FORMATS } from "../report.js";
import { repositoryRoot } from "../repo-root.js";
import { paint, progressLine } from "../terminal.js";
import { CLI_VERSION } from "../version.js";

export const lintCommand: Command = {
  name: "lint",
  summary: "check grant families (.yaml) and policy files (.policy)",
  usage: `authority lint [PATH...] [--format text|json|sarif] [--strict] [--max-errors N] [--no-prove]

Checks every family and policy file under the given paths (default: the current directory):
YAML syntax, the family schema, parameter bounds, placeholders, the grant shape and the policy,
each error at its file, line and column.

  --format FORMAT   text (default; a code frame under each error), json or sarif
  --strict          treat warnings as errors
  --no-prove        skip the SMT solver: by default a valid policy file is also proved never to
                    allow, always to allow, or to hold a redundant condition where the interval
                    check cannot tell (the solver starts in about half a second, only when a
                    policy file is linted; \`--prove\` is accepted and is the default)
  --max-errors N    report at most N errors per file (default 10; 0 reports all); the exit
                    status and the summary count every error

A file that cannot be read, or whose check fails unexpectedly, is reported as an
\`internal-error\` diagnostic at that file; every other file is still checked and reported.

Exit status: 0 no errors, 1 errors found, 2 usage error or an internal error in some file.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { format: "string", strict: "boolean", "max-errors": "string", prove: "boolean", "no-prove": "boolean" });
    const maxErrors = count(args, "max-errors", MAX_ERRORS_DEFAULT);
    const format = choice(args, "format", REPORT_FORMATS, "text");
    const inputs = collectInputs(terminal.cwd, args.positionals.length > 0 ? args.positionals : ["."], ["family", "policy"]);
    const progress = progressLine(terminal);
    const checked = inputs.map((input, i) => {
      progress.update(`linting ${i + 1}/${inputs.length} ${input.path}`);
      return checkFileOrReport(input);
    });
    progress.done();
    if (flag(args, "prove") && flag(args, "no-prove")) throw new UsageError("`--prove` and `--no-prove` contradict each other");
    const reports = flag(args, "no-prove") ? checked : await withProofs(checked);
    const strict = flag(args, "strict");
    const all = reports.flatMap((r) => r.diagnostics);
    const errors = all.filter((d) => d.severity === "error").length;
    const warnings = all.length - errors;
    const failed = errors > 0 || (strict && warnings > 0);
    const shown = limitErrors(reports, maxErrors);
    if (format === "json") terminal.out.write(formatJson(shown));
    else if (format === "sarif")
      terminal.out.write(
        formatSarif(
          shown.map((r) => ({ ...r, absolute: r.input.absolute })),
          CLI_VERSION,
          repositoryRoot(terminal.cwd),
        ),
      );
    else {
      const p = paint(terminal.color);
      terminal.out.write(formatText(shown, p));
      const summary = `${inputs.length} file${inputs.length === 1 ? "" : "s"} checked: ${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"}`;
      terminal.out.write(`${failed ? p.red(summary) : p.green(summary)}\n`);
    }
    if (all.some((d) => d.code === INTERNAL_ERROR_CODE)) return EXIT.internal;
    return failed ? EXIT.failed : EXIT.ok;
  },
};

/**
 * Each valid policy file's report with the solver's proved warnings added (those the interval
 * check already gave, same code and span, are not repeated). Families are checked as before.
 */
async function withProofs(reports: readonly CheckedFile[]): Promise<CheckedFile[]> {
  const targets = reports.filter((r) => r.input.kind === "policy" && !r.diagnostics.some((d) => d.severity === "error"));
  if (targets.length === 0) return [...reports];
  const analysis = await import("@agent-authority/analysis");
  const analyzer = await analysis.createAnalyzer();
  try {
    const out: CheckedFile[] = [];
    for (const report of reports) {
      if (!targets.includes(report)) {
        out.push(report);
        continue;
      }
      const proved = await analysis.proveLint(analyzer, report.source.text);
      const added: FamilyDiagnostic[] = proved
        .map((d) => ({
          code: `policy/${d.code}`,
          severity: d.severity,
          message: d.message,
          ...(d.help !== undefined ? { help: d.help } : {}),
          file: report.path,
          range: report.source.range(d.span.start, d.span.end),
        }))
        .filter((d) => !report.diagnostics.some((e) => e.code === d.code && sameRange(e, d)));
      out.push({ ...report, diagnostics: sortDiagnostics([...report.diagnostics, ...added]) });
    }
    return out;
  } finally {
    await analyzer.close();
  }
}

function sameRange(a: FamilyDiagnostic, b: FamilyDiagnostic): boolean {
  return JSON.stringify(a.range) === JSON.stringify(b.range);
}
