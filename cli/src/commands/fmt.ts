// `authority fmt`: print policies in their one canonical form, in `.policy` files and in families.
import { writeFileSync } from "node:fs";
import { formatFamilySource } from "@agent-authority/families";
import { formatPolicy, lineColumn } from "@agent-authority/language";
import { choice, flag, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { unifiedDiff } from "../diff.js";
import { collectInputs, type FileKind, readText } from "../files.js";
import { readStdin } from "../stdin.js";
import { paint, type Terminal } from "../terminal.js";

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
 * The canonical form of a text, or why it cannot be formatted. A policy whose canonical form would
 * break a limit is refused here, so nothing is written (docs/decisions/0117-format-never-breaks-a-policy.md).
 */
function formatText(text: string, kind: FileKind): Outcome {
  if (kind === "family") {
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

type Mode = "write" | "check" | "diff" | "list";

/** `fmt -`: standard input in, its canonical form out, nothing written. */
async function formatStdin(kind: FileKind, terminal: Terminal): Promise<number> {
  const text = await readStdin();
  const outcome = formatText(text, kind);
  if (outcome.kind === "error") {
    terminal.err.write(`<stdin>${outcome.where}: ${paint(terminal.color).red("error")}: ${outcome.reason}\n`);
    return EXIT.failed;
  }
  terminal.out.write(outcome.kind === "changed" ? outcome.text : text);
  return EXIT.ok;
}

function modeOf(args: ReturnType<typeof parseArgs>): Mode {
  const chosen = (["write", "check", "diff", "list"] as const).filter((m) => flag(args, m));
  if (chosen.length > 1) throw new UsageError(`choose one of ${chosen.map((m) => `\`--${m}\``).join(", ")}`);
  return chosen[0] ?? "write";
}

export const fmtCommand: Command = {
  name: "fmt",
  summary: "format policies canonically, in .policy files and in families",
  usage: `authority fmt [PATH...] [--write | --check | --diff | --list]
authority fmt - [--kind policy|family]

Formats every .policy file and the policy of every family under the given paths (default: the
current directory) in the canonical form of the policy language. In a family only the policy
string changes; comments and layout elsewhere are kept. \`-\` reads one policy (or, with
\`--kind family\`, one family) from standard input and prints its canonical form to standard output.

  --write   rewrite each file that is not formatted (the default for paths)
  --check   change nothing; list the files that are not formatted and exit 1 if there are any
  --diff    change nothing; print a unified diff of each file that is not formatted, exit 1 if any
  --list    change nothing; print only the path of each file that is not formatted, exit 0
  --kind    what standard input holds: policy (default) or family

Exit status: 0 formatted (or already formatted), 1 with --check or --diff when a file would change,
or when a file cannot be formatted, 2 usage error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { write: "boolean", check: "boolean", diff: "boolean", list: "boolean", kind: "string" });
    const mode = modeOf(args);
    const kind = choice(args, "kind", ["policy", "family"] as const, "policy");
    if (args.positionals.includes("-")) {
      if (args.positionals.length > 1) throw new UsageError("`-` (standard input) cannot be combined with paths");
      if (mode !== "write" || flag(args, "write"))
        throw new UsageError("`-` prints to standard output; it takes no `--write`, `--check`, `--diff` or `--list`");
      return formatStdin(kind, terminal);
    }
    if (args.flags.has("kind")) throw new UsageError("`--kind` applies to `-` (standard input) only; a file's kind is its extension");
    const inputs = collectInputs(terminal.cwd, args.positionals.length > 0 ? args.positionals : ["."], ["family", "policy"]);
    const p = paint(terminal.color);
    let changed = 0;
    let errors = 0;
    for (const input of inputs) {
      const before = readText(input);
      const outcome = formatText(before, input.kind);
      if (outcome.kind === "error") {
        errors += 1;
        terminal.err.write(`${input.path}${outcome.where}: ${p.red("error")}: ${outcome.reason}\n`);
      } else if (outcome.kind === "changed") {
        changed += 1;
        if (mode === "check") terminal.out.write(`${input.path}: not formatted\n`);
        else if (mode === "list") terminal.out.write(`${input.path}\n`);
        else if (mode === "diff") terminal.out.write(unifiedDiff(input.path, before, outcome.text));
        else {
          writeFileSync(input.absolute, outcome.text);
          terminal.out.write(`${input.path}: formatted\n`);
        }
      }
    }
    if (mode === "check" || mode === "write") {
      const verb = mode === "check" ? "would be formatted" : "formatted";
      terminal.out.write(
        `${inputs.length} file${inputs.length === 1 ? "" : "s"} checked: ${changed} ${verb}${errors > 0 ? `, ${errors} could not be formatted` : ""}\n`,
      );
    }
    return errors > 0 || ((mode === "check" || mode === "diff") && changed > 0) ? EXIT.failed : EXIT.ok;
  },
};
