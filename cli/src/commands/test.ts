// `authority test`: run every family's examples through the engine; exit 1 on any mismatch.
import { rangeOf, runExamples, searchPattern, type ExampleResult } from "@agent-authority/families";
import { choice, flag, option, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { collectInputs } from "../files.js";
import { checkFileOrReport } from "../load.js";
import { formatText } from "../report.js";
import { paint, progressLine } from "../terminal.js";
import { decisionText } from "../decision-text.js";

interface FamilyRun {
  readonly path: string;
  readonly family: string;
  readonly results: readonly (ExampleResult & { readonly line: number; readonly column: number })[];
}

export const testCommand: Command = {
  name: "test",
  summary: "run the examples of every family and compare each outcome with its expectation",
  usage: `authority test [PATH...] [--run PATTERN] [--verbose] [--format text|json]

Compiles every family under the given paths (default: the current directory), instantiates each
example with its parameters, decides its action with the engine and compares the outcome (and the
deciding gate and residual, where the example states them) with the expectation. A family that does
not compile counts as one failure. The last line is the summary \`N passed, N failed\`.

  --run PATTERN    run only the examples whose \`<family id>/<example name>\` matches the regular
                   expression PATTERN (RE2 syntax); a pattern that matches no example fails
  --verbose        list passing examples too
  --format FORMAT  text (default) or json

Exit status: 0 every example passed (or no family was found, which the output says), 1 a
mismatch or a family with errors, 2 usage error or a file that could not be read or checked
(reported as an \`internal-error\` at that file; the others still run).
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { verbose: "boolean", format: "string", run: "string" });
    const selected = examplePattern(option(args, "run"));
    const format = choice(args, "format", ["text", "json"] as const, "text");
    const verbose = flag(args, "verbose");
    const inputs = collectInputs(terminal.cwd, args.positionals.length > 0 ? args.positionals : ["."], ["family"]);
    const p = paint(terminal.color);
    const progress = progressLine(terminal);
    const tally: Tally = { passed: 0, failed: 0, notRun: 0, internal: false, text: "" };
    const runs: FamilyRun[] = [];
    for (const [i, input] of inputs.entries()) {
      progress.update(`testing ${i + 1}/${inputs.length} ${input.path}`);
      runs.push(testFamily(input, selected, verbose, p, tally));
    }
    progress.done();
    const { passed, failed, notRun } = tally;
    if (format === "json") {
      terminal.out.write(`${JSON.stringify({ passed, failed, families: runs }, null, 2)}\n`);
    } else {
      terminal.out.write(tally.text);
      if (inputs.length === 0) terminal.out.write("no family files found\n");
      if (args.flags.has("run") && passed + failed === 0) terminal.out.write(`no example matches \`${option(args, "run")!}\`\n`);
      terminal.out.write(`\n${passed} passed, ${failed} failed${args.flags.has("run") ? `, ${notRun} not run` : ""}\n`);
    }
    // No family is nothing to fail, as for \`lint\`: the output says none was found. A \`--run\`
    // pattern that selects no example fails, so that a misspelt filter cannot pass.
    if (tally.internal) return EXIT.internal;
    const nothingRan = args.flags.has("run") && inputs.length > 0 && passed + failed === 0;
    return failed > 0 || nothingRan ? EXIT.failed : EXIT.ok;
  },
};

/** The counts and the text report of a run, added to family by family. */
interface Tally {
  passed: number;
  failed: number;
  notRun: number;
  internal: boolean;
  text: string;
}

type Painter = ReturnType<typeof paint>;

/**
 * Runs one family file's selected examples. A file that cannot be read or checked is one failure
 * with its `internal-error` (decision 0119); a family that does not compile is one failure.
 */
function testFamily(
  input: ReturnType<typeof collectInputs>[number],
  selected: (title: string) => boolean,
  verbose: boolean,
  p: Painter,
  tally: Tally,
): FamilyRun {
  const checked = checkFileOrReport(input);
  const compiled = checked.family;
  if (compiled === undefined || !compiled.ok) {
    tally.failed += 1;
    tally.internal ||= compiled === undefined;
    tally.text += `${p.red("FAIL")} ${input.path}: the family ${compiled === undefined ? "could not be checked" : "does not compile"}\n${formatText([{ ...checked, diagnostics: checked.diagnostics.filter((d) => d.severity === "error") }], p)}`;
    return { path: input.path, family: "", results: [] };
  }
  const body = compiled.body!;
  const all = runExamples(body);
  const chosen = all.filter((result) => selected(`${body.id}/${result.name}`));
  tally.notRun += all.length - chosen.length;
  const results = chosen.map((result) => {
    const at = rangeOf(compiled.source, compiled.document!, ["examples", result.index, "expect"]).start;
    return { ...result, line: at.line, column: at.column };
  });
  if (results.length === 0 && verbose) tally.text += `${p.yellow("none")} ${input.path}: ${body.id} has no examples\n`;
  for (const result of results) reportExample(input.path, `${body.id} › ${result.name}`, result, verbose, p, tally);
  return { path: input.path, family: body.id, results };
}

/** One example's line: `ok` when verbose, else only a failure, with its mismatches and the decision taken. */
function reportExample(
  path: string,
  title: string,
  result: FamilyRun["results"][number],
  verbose: boolean,
  p: Painter,
  tally: Tally,
): void {
  if (result.passed) {
    tally.passed += 1;
    if (verbose) tally.text += `${p.green("ok")}   ${title}\n`;
    return;
  }
  tally.failed += 1;
  tally.text += `${p.red("FAIL")} ${path}:${result.line}:${result.column}: ${title}\n`;
  for (const mismatch of result.mismatches) tally.text += `     ${mismatch}\n`;
  if (result.decision !== undefined) tally.text += decisionText(result.decision, p, "       ");
}

/** The test of `--run PATTERN` (RE2 syntax, found anywhere in the title), or one that selects every example. */
function examplePattern(pattern: string | undefined): (title: string) => boolean {
  if (pattern === undefined) return () => true;
  const search = searchPattern(pattern);
  if (!search.ok) throw new UsageError(`\`--run\` must be a regular expression in RE2 syntax, not \`${pattern}\`: ${search.reason}`);
  return search.test;
}
