// `authority lint`: check families and policy files; exit 1 when any has an error.
import { type FamilyDiagnostic, mapScalar, scalarAt, sortDiagnostics } from "@agent-authority/families";
import { choice, count, flag, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { collectInputs } from "../files.js";
import { type CheckedFile, checkFileOrReport, INTERNAL_ERROR_CODE } from "../load.js";
import { formatJson, formatSarif, formatText, limitErrors, MAX_ERRORS_DEFAULT, REPORT_FORMATS } from "../report.js";
import { repositoryRoot } from "../repo-root.js";
import { paint, progressLine } from "../terminal.js";
import { CLI_VERSION } from "../version.js";

/** The time all the proofs of one lint run may take (ANALYSIS_LIMITS.lintRunMs, read here without loading the solver's package). */
const LINT_PROOF_BUDGET_MS = 30_000;

export const lintCommand: Command = {
  name: "lint",
  summary: "check grant families (.yaml) and policy files (.policy)",
  usage: `authority lint [PATH...] [--format text|json|sarif] [--strict] [--max-errors N] [--no-prove] [--prove-budget MS]

Checks every family and policy file under the given paths (default: the current directory):
YAML syntax, the family schema, parameter bounds, placeholders, the grant shape and the policy,
each error at its file, line and column.

  --format FORMAT   text (default; a code frame under each error), json or sarif
  --strict          treat warnings as errors
  --no-prove        skip the SMT solver: by default a valid policy file, and a valid family's
                    policy (for every value of its parameters within their declared bounds), is
                    also proved never to allow, always to allow, or to hold a redundant condition
                    where the interval check cannot tell (the solver starts in about half a
                    second; \`--prove\` is accepted and is the default)
  --prove-budget MS the time all proofs of the run may take, the solver's start included
                    (default and most 30000): past it the files left are not proved and a
                    \`note:\` on standard error names each, with why; the exit status is unchanged
  --max-errors N    report at most N errors per file (default 10; 0 reports all); the exit
                    status and the summary count every error

A file that cannot be read, or whose check fails unexpectedly, is reported as an
\`internal-error\` diagnostic at that file; every other file is still checked and reported.

Exit status: 0 no errors, 1 errors found, 2 usage error or an internal error in some file.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, {
      format: "string",
      strict: "boolean",
      "max-errors": "string",
      prove: "boolean",
      "no-prove": "boolean",
      "prove-budget": "string",
    });
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
    const budgetMs = Math.min(count(args, "prove-budget", LINT_PROOF_BUDGET_MS), LINT_PROOF_BUDGET_MS);
    const proved = flag(args, "no-prove") ? { reports: checked, open: [] } : await withProofs(checked, budgetMs);
    const reports = proved.reports;
    for (const { path, reason } of proved.open) terminal.err.write(`note: ${path}: not every proof was settled: ${reason}\n`);
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

/** The proofs of one lint run: what the solver added to each file, and each file it could not finish, with why. */
interface Proved {
  readonly reports: CheckedFile[];
  readonly open: { readonly path: string; readonly reason: string }[];
}

/**
 * Each valid policy file's and family's report with the solver's proved warnings added (those
 * the interval check already gave, same code and span, are not repeated). The whole run's
 * proofs, the solver's start included, end within `budgetMs`: a file reached after it is not
 * proved, and a question open when it ends gives no warning; either is listed in `open`.
 */
async function withProofs(reports: readonly CheckedFile[], budgetMs: number): Promise<Proved> {
  const targets = reports.filter(
    (r) => (r.input.kind === "policy" || r.family?.ok === true) && !r.diagnostics.some((d) => d.severity === "error"),
  );
  if (targets.length === 0) return { reports: [...reports], open: [] };
  const until = Date.now() + budgetMs;
  const analysis = await import("@agent-authority/analysis");
  const analyzer = await analysis.createAnalyzer();
  const open: { path: string; reason: string }[] = [];
  try {
    const out: CheckedFile[] = [];
    for (const report of reports) {
      if (!targets.includes(report)) {
        out.push(report);
        continue;
      }
      if (Date.now() >= until) {
        open.push({ path: report.path, reason: `the proof budget of the lint run (${budgetMs} ms) ran out before this file` });
        out.push(report);
        continue;
      }
      const proof =
        report.family === undefined
          ? await analysis.proveLintReport(analyzer, report.source.text, { until })
          : await analysis.proveFamilyLint(analyzer, report.family.body!, { until });
      if (proof.unknown !== undefined) open.push({ path: report.path, reason: proof.unknown });
      const toFile = report.family === undefined ? (offset: number) => offset : policyOffsets(report);
      const added: FamilyDiagnostic[] = proof.diagnostics
        .map((d) => ({
          code: `policy/${d.code}`,
          severity: d.severity,
          message: d.message,
          ...(d.help !== undefined ? { help: d.help } : {}),
          file: report.path,
          range: report.source.range(toFile(d.span.start), d.span.end > d.span.start ? toFile(d.span.end - 1) + 1 : toFile(d.span.start)),
        }))
        .filter((d) => !report.diagnostics.some((e) => e.code === d.code && sameRange(e, d)));
      out.push({ ...report, diagnostics: sortDiagnostics([...report.diagnostics, ...added]) });
    }
    return { reports: out, open };
  } finally {
    await analyzer.close();
  }
}

/** For a family, an offset in its policy string mapped to one in the file. */
function policyOffsets(report: CheckedFile): (offset: number) => number {
  const node = report.family?.document === undefined ? null : scalarAt(report.family.document, ["grant", "policy"]);
  if (node === null) return () => 0;
  const map = mapScalar(report.source.text, node);
  return (offset) => map.sourceOffset(offset);
}

function sameRange(a: FamilyDiagnostic, b: FamilyDiagnostic): boolean {
  return JSON.stringify(a.range) === JSON.stringify(b.range);
}
