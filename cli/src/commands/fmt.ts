// `authority fmt`: print policies in their one canonical form, in `.policy` files and in families.
import { writeFileSync } from "node:fs";
import { formatFamilySource } from "@agent-authority/families";
import { formatPolicy, lineColumn } from "@agent-authority/language";
import { flag, parseArgs } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { collectInputs, type InputFile, readText } from "../files.js";
import { paint } from "../terminal.js";

type Outcome =
  | { readonly kind: "unchanged" }
  | { readonly kind: "changed"; readonly text: string }
  /** `where` is `:line:col` when the problem has a place in the file. */
  | { readonly kind: "error"; readonly reason: string; readonly where: string };

/** `:line:col` of an offset into `text`. */
function place(text: string, offset: number): string {
  const { line, column } = lineColumn(text, offset);
  return `:${line}:${column}`;
}

/**
 * The file's canonical text, or why it cannot be formatted. A policy whose canonical form would
 * break a limit is refused here, so nothing is written (docs/decisions/0117-format-never-breaks-a-policy.md).
 */
function formatFile(input: InputFile): Outcome {
  const text = readText(input);
  if (input.kind === "family") {
    const result = formatFamilySource(text);
    if (!result.ok) return { kind: "error", reason: result.reason, where: result.offset === undefined ? "" : place(text, result.offset) };
    return result.changed ? { kind: "changed", text: result.text } : { kind: "unchanged" };
  }
  const result = formatPolicy(text);
  if (!result.ok) {
    const first = result.diagnostics[0]!;
    return { kind: "error", reason: `${first.message} [${first.code}]`, where: place(text, first.span.start) };
  }
  const canonical = result.text.endsWith("\n") ? result.text : `${result.text}\n`;
  return canonical === text ? { kind: "unchanged" } : { kind: "changed", text: canonical };
}

export const fmtCommand: Command = {
  name: "fmt",
  summary: "format policies canonically, in .policy files and in families",
  usage: `authority fmt [PATH...] [--check]

Rewrites every .policy file and the policy of every family under the given paths (default: the
current directory) in the canonical form of the policy language. In a family only the policy
string changes; comments and layout elsewhere are kept.

  --check   change nothing; list the files that are not formatted and exit 1 if there are any

Exit status: 0 formatted (or already formatted), 1 with --check when a file would change or when a
file cannot be formatted, 2 usage error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { check: "boolean" });
    const check = flag(args, "check");
    const inputs = collectInputs(terminal.cwd, args.positionals.length > 0 ? args.positionals : ["."], ["family", "policy"]);
    const p = paint(terminal.color);
    let changed = 0;
    let errors = 0;
    for (const input of inputs) {
      const outcome = formatFile(input);
      if (outcome.kind === "error") {
        errors += 1;
        terminal.err.write(`${input.path}${outcome.where}: ${p.red("error")}: ${outcome.reason}\n`);
      } else if (outcome.kind === "changed") {
        changed += 1;
        if (check) terminal.out.write(`${input.path}: not formatted\n`);
        else {
          writeFileSync(input.absolute, outcome.text);
          terminal.out.write(`${input.path}: formatted\n`);
        }
      }
    }
    const verb = check ? "would be formatted" : "formatted";
    terminal.out.write(`${inputs.length} file${inputs.length === 1 ? "" : "s"} checked: ${changed} ${verb}${errors > 0 ? `, ${errors} could not be formatted` : ""}\n`);
    return errors > 0 || (check && changed > 0) ? EXIT.failed : EXIT.ok;
  },
};
