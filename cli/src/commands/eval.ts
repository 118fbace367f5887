// `authority eval`: a bare policy evaluated on one input; prints its value, or the residual over `approver`.
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { checkEnvironment, compilePolicy, type EnvironmentInput, type PolicyEnvironment } from "@agent-authority/language";
import { choice, flag, option, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { readPolicyArgument, reportPolicyErrors } from "../policy-input.js";
import { STDIN_BYTES_MAX } from "../stdin.js";

/** The input file is bounded as standard input is: a larger one is refused before it is read. */
export function readInput(path: string, cwd: string, max = STDIN_BYTES_MAX): unknown {
  let text: string;
  try {
    const full = resolve(cwd, path);
    if (statSync(full).size > max) throw new UsageError(`\`${path}\` is larger than ${max} bytes`);
    text = readFileSync(full, "utf8");
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read \`${path}\``);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`\`${path}\` is not JSON: ${error instanceof Error ? error.message.toLowerCase() : "parse error"}`);
  }
}

export const evalCommand: Command = {
  name: "eval",
  summary: "evaluate a policy on an input and print its value or its residual",
  usage: `authority eval POLICY --input FILE [--format text|json] [--explain]

Evaluates POLICY (a .policy file, or \`-\` for standard input) on the names in FILE, a JSON object
with \`amount_minor\`, \`currency\`, \`tool\`, \`agent\`, \`principal\`, \`audience\`, \`uses\`,
\`spent_minor\`, \`hour_utc\`, \`weekday_utc\`, optionally \`args\` (an object; null is refused, as
by the server), and optionally \`approver\`.

With \`approver\` given (a string, or null for no approval) it prints the value: \`true\` or
\`false\`; a run-time error prints \`false\` and the error, since a policy fails closed. Without
\`approver\` the policy is decided as the engine decides an action with no approval yet: \`true\`,
\`false\`, or \`residual: <condition on approver>\` when an approval could still make it hold.

  --input FILE     the input (required)
  --explain        for a refused input, also the nearest input the policy allows (fewest names
                   changed, then the smallest change of each int), found by an SMT solver and
                   confirmed by the evaluator; an absent \`approver\` is searched from null
  --format FORMAT  text (default) or json: {"value": …} or {"residual": …}, and "error" when one occurred

Exit status: 0 evaluated, 1 the policy has errors (shown on stderr), 2 usage error or a bad input.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { input: "string", format: "string", explain: "boolean" });
    const format = choice(args, "format", ["text", "json"] as const, "text");
    const inputPath = option(args, "input");
    if (inputPath === undefined) throw new UsageError("`--input FILE` is required");
    const policy = await readPolicyArgument(args.positionals, terminal);
    const found = checkEnvironment(readInput(inputPath, terminal.cwd));
    if ("problem" in found) throw new UsageError(`\`${inputPath}\`: ${found.problem}`);
    const compiled = compilePolicy(policy.text);
    if (!compiled.ok) {
      reportPolicyErrors(policy, terminal);
      return EXIT.failed;
    }
    const { env } = found;
    let result: { value?: boolean; residual?: string; error?: { code: string; message: string }; nearest?: unknown; explain?: string };
    if (env.approver !== undefined) {
      const evaluated = compiled.policy.evaluate(env as PolicyEnvironment);
      result = evaluated.ok
        ? { value: evaluated.value }
        : { value: false, error: { code: evaluated.error.code, message: evaluated.error.message } };
    } else {
      const decided = compiled.policy.decide(env);
      if (decided.outcome === "gated") result = { residual: decided.residual };
      else
        result =
          decided.outcome === "allow"
            ? { value: true }
            : {
                value: false,
                ...(decided.error !== undefined ? { error: { code: decided.error.code, message: decided.error.message } } : {}),
              };
    }
    if (flag(args, "explain") && result.value === false) Object.assign(result, await explanation(policy.text, env));
    if (format === "json") terminal.out.write(`${JSON.stringify(result)}\n`);
    else if (result.residual !== undefined) terminal.out.write(`residual: ${result.residual}\n`);
    else
      terminal.out.write(
        `${String(result.value)}${result.error !== undefined ? ` (error[${result.error.code}]: ${result.error.message})` : ""}\n`,
      );
    if (format === "text" && result.nearest !== undefined) {
      const nearest = result.nearest as { input: unknown; changed: readonly string[] };
      terminal.out.write(`nearest allowed input (changed: ${nearest.changed.join(", ")}): ${JSON.stringify(nearest.input)}\n`);
    } else if (format === "text" && result.explain !== undefined) terminal.out.write(`nearest allowed input: ${result.explain}\n`);
    return EXIT.ok;
  },
};

/**
 * What `--explain` adds to a refused input: `nearest` (the input and the names changed), or
 * `explain` saying why there is none (the policy allows nothing, or the solver could not tell).
 */
export async function explanation(text: string, env: EnvironmentInput): Promise<{ nearest: unknown } | { explain: string }> {
  const analysis = await import("@agent-authority/analysis");
  const analyzer = await analysis.createAnalyzer();
  try {
    const found = await analysis.nearestAllowed(analyzer, text, { ...env, approver: env.approver ?? null });
    if (found.kind === "nearest") return { nearest: { input: found.input, changed: found.changed } };
    if (found.kind === "never") return { explain: "none: the policy allows no input" };
    if (found.kind === "unknown") return { explain: `unknown: ${found.reason}` };
    return { explain: "none: the input is allowed once an approver is known" };
  } finally {
    await analyzer.close();
  }
}
