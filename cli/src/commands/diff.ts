// `authority diff`: the semantic diff of two policy files, proved by the solver: can the new one allow what the old refused?
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { DiffResult, FamilyDifference, FamilyDiffResult } from "@agent-authority/analysis";
import { choice, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { displayPath } from "../files.js";
import { type PolicyInput, reportPolicyErrors } from "../policy-input.js";
import { compileFamily } from "@agent-authority/families";
import { formatText, SARIF_SCHEMA_URI } from "../report.js";
import { paint, type Terminal } from "../terminal.js";
import { CLI_VERSION } from "../version.js";

/** The exit status of each relation: 0 nothing newly allowed, 1 something is, 3 the solver could not tell. */
export const DIFF_EXIT = Object.freeze({ equivalent: 0, narrows: 0, widens: 1, incomparable: 1, unknown: 3 });

export const diffCommand: Command = {
  name: "diff",
  summary: "prove whether a new policy allows anything the old one refused",
  usage: `authority diff OLD NEW [--format text|json|sarif]

Compares two policy files (.policy), or two family files (.yaml), for every possible input, by an SMT solver: the relation is
\`equivalent\`, \`narrows\` (the new one allows less), \`widens\` (it allows more), \`incomparable\`
(both), or \`unknown\` (the solver could not tell within its budget, with the reason). Each witness
is a complete input for \`authority eval --input\`, \`approver\` included, confirmed by the
evaluator; the first of each list is the fewest names away from a default action. For families,
each grant axis is compared (tools, budgets, TTL, audience, the policy, with parameters symbolic
within their declared min, max and enum) and each witness names its axis and parameter values.

  --format FORMAT  text (default), json ({"relation", "widening", "narrowing", "reason"}) or sarif

Exit status: 0 equivalent or narrows, 1 widens or incomparable, 2 usage error or a policy with
errors, 3 unknown.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { format: "string" });
    const format = choice(args, "format", ["text", "json", "sarif"] as const, "text");
    if (args.positionals.length !== 2) throw new UsageError("name two policy files, or two family files: OLD and NEW");
    const [before, after] = args.positionals.map((p) => readPolicyFile(p, terminal)) as [PolicyInput, PolicyInput];
    const families = args.positionals.map((p) => /\.ya?ml$/.test(p));
    if (families[0] !== families[1]) throw new UsageError("compare two policy files, or two family files, not one of each");
    if (families[0]) return diffFamilyFiles(before, after, format, terminal);
    const badBefore = reportPolicyErrors(before, terminal);
    const badAfter = reportPolicyErrors(after, terminal);
    if (badBefore || badAfter) return EXIT.usage;
    const analysis = await import("@agent-authority/analysis");
    const analyzer = await analysis.createAnalyzer();
    let result: DiffResult;
    try {
      result = await analysis.diffPolicies(analyzer, before.text, after.text);
    } finally {
      await analyzer.close();
    }
    if (format === "json") terminal.out.write(`${JSON.stringify(result)}\n`);
    else if (format === "sarif") terminal.out.write(diffSarif(result, after.path));
    else terminal.out.write(diffText(result));
    return DIFF_EXIT[result.relation];
  },
};

/** `authority diff` of two family files: each compiled (errors as lint shows them, exit 2), then compared axis by axis. */
async function diffFamilyFiles(
  before: PolicyInput,
  after: PolicyInput,
  format: "text" | "json" | "sarif",
  terminal: Terminal,
): Promise<number> {
  const compiled = [before, after].map((f) => compileFamily(f.text, f.path));
  const failed = compiled.filter((c) => !c.ok);
  if (failed.length > 0) {
    terminal.err.write(
      formatText(
        failed.map((c) => ({ path: c.source.file, source: c.source, diagnostics: c.diagnostics })),
        paint(terminal.color),
      ),
    );
    return EXIT.usage;
  }
  const analysis = await import("@agent-authority/analysis");
  const analyzer = await analysis.createAnalyzer();
  let result: FamilyDiffResult;
  try {
    result = await analysis.diffFamilies(analyzer, compiled[0]!.body!, compiled[1]!.body!);
  } finally {
    await analyzer.close();
  }
  if (format === "json") terminal.out.write(`${JSON.stringify(result)}\n`);
  else if (format === "sarif") terminal.out.write(diffSarif(result, after.path));
  else terminal.out.write(diffText(result));
  return DIFF_EXIT[result.relation];
}

function readPolicyFile(arg: string, terminal: Terminal): PolicyInput {
  const absolute = resolve(terminal.cwd, arg);
  try {
    return { path: displayPath(terminal.cwd, absolute), text: readFileSync(absolute, "utf8") };
  } catch {
    throw new UsageError(`cannot read \`${arg}\``);
  }
}

const RELATION_TEXT = Object.freeze({
  equivalent: "equivalent: the two policies decide every input alike",
  narrows: "narrows: the new policy allows nothing the old refused, and refuses some inputs the old allowed",
  widens: "widens: the new policy allows inputs the old refused",
  incomparable: "incomparable: the new policy allows some inputs the old refused, and refuses some the old allowed",
  unknown: "unknown: the solver could not tell",
});

/** The text report: the relation, and each witness as the JSON an `eval --input` file holds. */
export function diffText(result: DiffResult | FamilyDiffResult): string {
  const lines: string[] = [RELATION_TEXT[result.relation]];
  if (result.reason !== undefined) lines.push(`  reason: ${result.reason}`);
  for (const d of result.widening) lines.push(`  newly allowed${where(d)}: ${JSON.stringify(d.input)}`);
  for (const d of result.narrowing) lines.push(`  newly refused${where(d)}: ${JSON.stringify(d.input)}`);
  return `${lines.join("\n")}\n`;
}

/** For a family witness: the axis and the parameter values. */
function where(d: DiffResult["widening"][number] | FamilyDifference): string {
  if (!("axis" in d)) return "";
  const parameters = Object.keys(d.parameters).length > 0 ? ` with parameters ${JSON.stringify(d.parameters)}` : "";
  return ` (${d.axis}${parameters})`;
}

/** A SARIF log: a widening is an error at the new file, a narrowing a note, an unknown answer a warning. */
export function diffSarif(result: DiffResult | FamilyDiffResult, path: string): string {
  const rules = [
    { id: "policy-widening", text: "The new policy allows an input the old one refused." },
    { id: "policy-narrowing", text: "The new policy refuses an input the old one allowed." },
    { id: "policy-diff-unknown", text: "The solver could not tell whether the new policy allows more." },
  ];
  const location = [{ physicalLocation: { artifactLocation: { uri: path.split("/").map(encodeURIComponent).join("/") } } }];
  const results = [
    ...result.widening.map((d) => ({
      ruleId: "policy-widening",
      ruleIndex: 0,
      level: "error",
      message: { text: `newly allowed: ${JSON.stringify(d.input)}` },
      locations: location,
    })),
    ...result.narrowing.map((d) => ({
      ruleId: "policy-narrowing",
      ruleIndex: 1,
      level: "note",
      message: { text: `newly refused: ${JSON.stringify(d.input)}` },
      locations: location,
    })),
    ...(result.relation === "unknown"
      ? [
          {
            ruleId: "policy-diff-unknown",
            ruleIndex: 2,
            level: "warning",
            message: { text: result.reason ?? "unknown" },
            locations: location,
          },
        ]
      : []),
  ];
  const log = {
    $schema: SARIF_SCHEMA_URI,
    version: "2.1.0",
    runs: [
      {
        tool: {
          driver: { name: "authority", version: CLI_VERSION, rules: rules.map((r) => ({ id: r.id, shortDescription: { text: r.text } })) },
        },
        results,
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
