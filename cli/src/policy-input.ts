// A policy named on the command line (a `.policy` path, or `-` for stdin), and its errors as lint shows them.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { checkPolicyFile, SourceText } from "@agent-authority/families";
import { UsageError } from "./args.js";
import { displayPath } from "./files.js";
import { formatText } from "./report.js";
import { readStdin } from "./stdin.js";
import { paint, type Terminal } from "./terminal.js";

export interface PolicyInput {
  /** As reported: the path relative to the working directory, or `<stdin>`. */
  readonly path: string;
  readonly text: string;
}

/** Reads the one policy argument of a command; any other count of positionals is a usage error. */
export async function readPolicyArgument(positionals: readonly string[], terminal: Terminal): Promise<PolicyInput> {
  if (positionals.length !== 1) throw new UsageError("name one policy file, or `-` for standard input");
  const arg = positionals[0]!;
  if (arg === "-") return { path: "<stdin>", text: await readStdin() };
  const absolute = resolve(terminal.cwd, arg);
  try {
    return { path: displayPath(terminal.cwd, absolute), text: readFileSync(absolute, "utf8") };
  } catch {
    throw new UsageError(`cannot read \`${arg}\``);
  }
}

/** Writes the policy's errors (if any) with code frames to stderr; true when there were errors. */
export function reportPolicyErrors(input: PolicyInput, terminal: Terminal): boolean {
  const source = new SourceText(input.path, input.text);
  const diagnostics = checkPolicyFile(source).filter((d) => d.severity === "error");
  if (diagnostics.length > 0) terminal.err.write(formatText([{ path: input.path, source, diagnostics }], paint(terminal.color)));
  return diagnostics.length > 0;
}
