// `authority preview`: what a family or a grant would decide for sample actions, gate by gate.
import { readFileSync } from "node:fs";
import { extname, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import {
  checkGrantBody,
  exampleParameters,
  instantiateFamily,
  sampleParameters,
  previewAction,
  enforcedOutcome,
  setOwn,
  type GrantFamilyBody,
  type PreviewUsage,
  type SampleAction,
} from "@agent-authority/families";
import type { Decision } from "@agent-authority/engine";
import { choice, flag, option, options, parseArgs, type ParsedArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { collectInputs, displayPath } from "../files.js";
import { checkFile } from "../load.js";
import { formatText } from "../report.js";
import { paint, type Terminal } from "../terminal.js";
import { actionLine, decisionText } from "../decision-text.js";
import { explainRefusals, explanationJson } from "../preview-explain.js";

interface Case {
  readonly label: string;
  readonly grant: Readonly<Record<string, unknown>>;
  readonly action: SampleAction;
  readonly usage: PreviewUsage;
}

const OPTIONS = {
  param: "string",
  action: "string",
  tool: "string",
  amount: "string",
  currency: "string",
  audience: "string",
  args: "string",
  clean: "boolean",
  approver: "string",
  at: "string",
  uses: "string",
  spent: "string",
  format: "string",
  explain: "boolean",
} as const;

function integer(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(Number(text)))
    throw new UsageError(`\`--${name}\` must be an integer, not \`${text}\``);
  return Number(text);
}

/** `--param name=value`: integers and `true`/`false` are typed; anything else is a string. */
function parameterValues(args: ReturnType<typeof parseArgs>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const pair of options(args, "param")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`\`--param\` takes \`name=value\`, not \`${pair}\``);
    const raw = pair.slice(eq + 1);
    // An own field even for `__proto__`, so that an unknown name is reported, never swallowed.
    setOwn(values, pair.slice(0, eq), /^-?\d+$/.test(raw) ? Number(raw) : raw === "true" ? true : raw === "false" ? false : raw);
  }
  return values;
}

/** The options that describe the action of `--tool`; without `--tool` they would be dropped, so they are refused. */
const ACTION_DETAILS = ["amount", "currency", "audience", "args", "clean", "approver", "at"] as const;

function actionsFromFlags(args: ReturnType<typeof parseArgs>, cwd: string): SampleAction[] | undefined {
  const file = option(args, "action");
  const details = ACTION_DETAILS.filter((name) => args.flags.has(name));
  if (details.length > 0 && option(args, "tool") === undefined) {
    throw new UsageError(
      `\`--${details[0]}\` describes the action of \`--tool NAME\`: give \`--tool\` too${file !== undefined ? " (or put it in the action file)" : ""}`,
    );
  }
  if (file !== undefined && option(args, "tool") !== undefined)
    throw new UsageError("give the action with `--action FILE` or with `--tool NAME`, not both");
  if (file !== undefined) {
    const data = parseYaml(readFileSync(resolve(cwd, file), "utf8")) as unknown;
    const list = Array.isArray(data) ? data : [data];
    return list.map((item, i) => {
      if (item === null || typeof item !== "object" || typeof (item as { tool?: unknown }).tool !== "string") {
        throw new UsageError(`action ${i} in \`${file}\` needs a \`tool\``);
      }
      return item as SampleAction;
    });
  }
  const tool = option(args, "tool");
  if (tool === undefined) return undefined;
  const rawArgs = option(args, "args");
  let parsedArgs: Record<string, unknown> | undefined;
  if (rawArgs !== undefined) {
    try {
      parsedArgs = JSON.parse(rawArgs) as Record<string, unknown>;
    } catch {
      throw new UsageError("`--args` must be a JSON object");
    }
  }
  const amount = integer("amount", option(args, "amount"));
  const action: SampleAction = {
    tool,
    ...(amount !== undefined ? { amount_minor: amount } : {}),
    ...(option(args, "currency") !== undefined ? { currency: option(args, "currency")! } : {}),
    ...(option(args, "audience") !== undefined ? { audience: option(args, "audience")! } : {}),
    ...(parsedArgs !== undefined ? { args: parsedArgs } : {}),
    ...(flag(args, "clean") ? { context: { clean: true } } : {}),
    ...(option(args, "approver") !== undefined ? { approver: option(args, "approver")! } : {}),
    ...(option(args, "at") !== undefined ? { at: option(args, "at")! } : {}),
  };
  return [action];
}

export const previewCommand: Command = {
  name: "preview",
  summary: "show what a family or grant decides for sample actions, gate by gate",
  usage: `authority preview FILE [--param NAME=VALUE]... [ACTION] [--uses N] [--spent N] [--format text|json] [--explain]

FILE is a family (.yaml, .yml) or a grant issue body (.json). ACTION is one of:
  --action FILE                  a JSON or YAML file with one action or a list of them
  --tool NAME [--amount N --currency EUR] [--audience A] [--args JSON] [--clean]
              [--approver EMAIL] [--at RFC3339-TIME]
Without ACTION, a family previews the actions of its examples (each with its parameters).

The decision is the engine's own: the grant is active, issued a minute before the action, and
its agent's certificate is taken as valid. --uses and --spent set the usage before the action.
--explain adds, for each action the policy refused, the nearest input the policy allows (found by
an SMT solver and confirmed by the evaluator).

Exit status: 0 previewed, 1 the family or grant has errors, 2 usage error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, OPTIONS);
    const format = choice(args, "format", ["text", "json"] as const, "text");
    if (args.positionals.length !== 1) throw new UsageError("name one family or grant file to preview");
    const usage: PreviewUsage = {
      uses: integer("uses", option(args, "uses")) ?? 0,
      spent_minor: integer("spent", option(args, "spent")) ?? 0,
    };
    const actions = actionsFromFlags(args, terminal.cwd);
    const path = resolve(terminal.cwd, args.positionals[0]!);
    const gathered =
      extname(path).toLowerCase() === ".json"
        ? grantCases(path, actions, usage, terminal)
        : familyCases(args.positionals[0]!, args, actions, usage, terminal);
    if (gathered === undefined) return EXIT.failed;
    const results = gathered.cases.map((c) => ({ ...c, decision: previewAction(c.grant, c.action, c.usage) }));
    const explained = flag(args, "explain") ? await explainRefusals(results) : results.map(() => undefined);
    if (format === "json") writeJson(results, explained, terminal);
    else writeText(gathered.heading, results, explained, terminal);
    return EXIT.ok;
  },
};

/** What a preview shows: a heading and the cases, each an action against a grant. */
interface Gathered {
  readonly heading: string;
  readonly cases: Case[];
}

type Previewed = Case & { readonly decision: ReturnType<typeof previewAction> };
type Explained = Awaited<ReturnType<typeof explainRefusals>>;

/** The cases of a grant body: the actions given, or the body's own `action`; undefined when the body has errors (written). */
function grantCases(path: string, actions: SampleAction[] | undefined, usage: PreviewUsage, terminal: Terminal): Gathered | undefined {
  const checked = checkGrantBody(readFileSync(path, "utf8"), displayPath(terminal.cwd, path));
  if (!checked.ok) {
    terminal.err.write(formatText([{ path: checked.source.file, source: checked.source, diagnostics: checked.diagnostics }], paint(false)));
    return undefined;
  }
  const grant = checked.grant!;
  const list = actions ?? (checked.action !== undefined ? [checked.action] : undefined);
  if (list === undefined)
    throw new UsageError("a grant preview needs an action: `--action FILE`, `--tool NAME` or an `action` field in the body");
  return {
    heading: `grant for \`${String(grant["agent_id"])}\``,
    cases: list.map((action) => ({ label: actionLine(action), grant, action, usage })),
  };
}

/** The cases of a family file, its heading saying when its grants wait for approval; undefined when it has errors (written). */
function familyCases(
  file: string,
  args: ParsedArgs,
  actions: SampleAction[] | undefined,
  usage: PreviewUsage,
  terminal: Terminal,
): Gathered | undefined {
  const [input] = collectInputs(terminal.cwd, [file], ["family"]);
  const checked = checkFile(input!);
  if (!checked.family?.ok) {
    terminal.err.write(formatText([checked], paint(false)));
    return undefined;
  }
  const family = checked.family.body!;
  let heading = `${family.id} v${family.version} (${family.content_hash.slice(0, 19)}…)`;
  if (family.approval !== undefined) {
    const when =
      family.approval.required === true ? "every grant" : `a grant with a budget above ${family.approval.above_budget_minor ?? 0}`;
    heading += `\n${when} waits for a human's approval before it is active${family.approval.reason !== undefined ? `: ${family.approval.reason}` : ""}; the previews show it once active`;
  }
  const cases: Case[] = [];
  const failed = collectFamilyCases(family, parameterValues(args), actions, usage, cases, terminal.err.write.bind(terminal.err));
  return failed ? undefined : { heading, cases };
}

function writeJson(results: readonly Previewed[], explained: readonly (Explained[number] | undefined)[], terminal: Terminal): void {
  const out = results.map((r, i) => ({
    label: r.label,
    action: r.action,
    outcome: enforcedOutcome(r.decision),
    decision: r.decision,
    ...(explained[i] !== undefined ? { explain: explanationJson(explained[i]) } : {}),
  }));
  terminal.out.write(`${JSON.stringify(out, null, 2)}\n`);
}

function writeText(
  heading: string,
  results: readonly Previewed[],
  explained: readonly (Explained[number] | undefined)[],
  terminal: Terminal,
): void {
  const p = paint(terminal.color);
  terminal.out.write(`${p.bold(heading)}\n`);
  for (const [i, r] of results.entries()) {
    terminal.out.write(`\n${r.label}\n${decisionText(r.decision as Decision, p)}`);
    const e = explained[i];
    if (e?.kind === "nearest")
      terminal.out.write(`  nearest allowed input (changed: ${e.changed.join(", ")}): ${JSON.stringify(e.input)}\n`);
    else if (e !== undefined) terminal.out.write(`  nearest allowed input: ${JSON.stringify(explanationJson(e))}\n`);
  }
}

/** The cases of a family: the given actions with the given parameters, or each example with its own. */
function collectFamilyCases(
  family: GrantFamilyBody,
  given: Record<string, unknown>,
  actions: SampleAction[] | undefined,
  usage: PreviewUsage,
  cases: Case[],
  error: (text: string) => void,
): boolean {
  const instantiate = (params: Record<string, unknown>): Readonly<Record<string, unknown>> | undefined => {
    const result = instantiateFamily(family, params);
    if (result.ok) return result.value.grant;
    for (const problem of result.parameterProblems) error(`error[${problem.code}]: ${problem.message}\n`);
    for (const problem of result.grantErrors) error(`error[grant-shape]: ${problem.path.join(".")}: ${problem.message}\n`);
    return undefined;
  };
  if (actions !== undefined) {
    const grant = instantiate({ ...sampleParameters(family), ...given });
    if (grant === undefined) return true;
    for (const action of actions) cases.push({ label: actionLine(action), grant, action, usage });
    return false;
  }
  const examples = family.examples ?? [];
  if (examples.length === 0) {
    error("error: the family has no examples; give an action with `--action FILE` or `--tool NAME`\n");
    return true;
  }
  for (const [index, example] of examples.entries()) {
    const grant = instantiate({ ...exampleParameters(family, index), ...given });
    if (grant === undefined) return true;
    cases.push({
      label: `${example.name}: ${actionLine(example.action)} (expects ${example.expect})`,
      grant,
      action: example.action,
      usage: example.usage ?? usage,
    });
  }
  return false;
}
