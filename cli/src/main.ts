// The `authority` command line: finds the command in the table and runs it.
import { UsageError } from "./args.js";
import { type Command, EXIT } from "./command.js";
import { COMMANDS, commandsUnder, findCommand } from "./commands/index.js";
import { processTerminal, type Terminal } from "./terminal.js";
import { docPath } from "./docs-path.js";
import { CLI_VERSION } from "./version.js";

export function helpText(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const rows = (available: boolean): string =>
    COMMANDS.filter((c) => c.available === available)
      .map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`)
      .join("\n");
  // The heading for planned commands appears only while some command is still planned.
  const planned = COMMANDS.some((c) => !c.available)
    ? `Not yet available in this version (they exit with status 2):\n${rows(false)}\n\n`
    : "";
  return `authority ${CLI_VERSION}: grant families and policies as code

Usage: authority <command> [arguments] [--help]

Commands:
${rows(true)}

${planned}Exit status: 0 success, 1 errors found or a test failed, 2 usage error or command not available.
Every command and a CI job: ${docPath("cli.md")}
`;
}

/** The help of a group of commands (`authority keys --help`): each subcommand's summary and usage. */
function groupHelp(word: string, group: readonly Command[]): string {
  const width = Math.max(...group.map((c) => c.name.length));
  const list = group.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join("\n");
  return `Usage: authority ${word} <subcommand> [arguments] [--help]

Subcommands:
${list}

${group.map((c) => c.usage).join("\n")}`;
}

/** Runs the CLI with `argv` (without `node` and the script) and returns the exit status. */
export async function main(argv: readonly string[], terminal: Terminal = processTerminal()): Promise<number> {
  const [first] = argv;
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    const target = first === "help" && argv.length > 1 ? findCommand(argv.slice(1)) : undefined;
    terminal.out.write(target !== undefined ? target.command.usage : helpText());
    return first === undefined ? EXIT.usage : EXIT.ok;
  }
  if (first === "--version" || first === "-V") {
    terminal.out.write(`${CLI_VERSION}\n`);
    return EXIT.ok;
  }
  const found = findCommand(argv);
  if (found === undefined) {
    const group = commandsUnder(first);
    if (group.length > 0 && (argv.includes("--help") || argv.includes("-h"))) {
      terminal.out.write(groupHelp(first, group));
      return EXIT.ok;
    }
    if (group.length > 0) {
      terminal.err.write(`authority ${first}: name a subcommand: ${group.map((c) => `\`${c.name}\``).join(", ")}\n`);
    } else {
      terminal.err.write(`authority: unknown command \`${first}\`; run \`authority --help\` for the list\n`);
    }
    return EXIT.usage;
  }
  if (found.rest.includes("--help") || found.rest.includes("-h")) {
    terminal.out.write(found.command.usage);
    return EXIT.ok;
  }
  try {
    return await found.command.run(found.rest, terminal);
  } catch (error) {
    if (error instanceof UsageError) {
      terminal.err.write(`authority ${found.command.name}: ${error.message}\n`);
      return EXIT.usage;
    }
    throw error;
  }
}
