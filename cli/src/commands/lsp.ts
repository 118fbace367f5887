// `authority lsp`: the language server for editors, spoken over stdin and stdout.
import { docPath } from "../docs-path.js";
import { UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { CLI_VERSION } from "../version.js";
import type { Analyzer } from "@agent-authority/analysis";

export const lspCommand: Command = {
  name: "lsp",
  summary: "run the language server for .policy files and families (for editors, over stdio)",
  usage: `authority lsp [--stdio] [--prove]

Runs the Agent Authority language server on stdin and stdout, as editors start it: diagnostics
with the codes of \`authority lint\`, hover, completion, formatting, go to definition from a
placeholder to its parameter, and quick fixes. \`--stdio\` is accepted, and is the only transport.
\`--prove\` adds the SMT solver's proved warnings to valid .policy documents (never-allows,
always-allows, redundant-condition), computed off the main loop and dropped when the text changes.
See ${docPath("lsp.md")} for VS Code and Neovim.

Exit status: 0 when the editor closes the connection, 2 usage error.
`,
  available: true,
  async run(argv) {
    const unknown = argv.find((a) => a !== "--stdio" && a !== "--prove");
    if (unknown !== undefined) throw new UsageError(`unknown argument \`${unknown}\``);
    // Loaded only here, so that every other command starts without the language server's modules.
    const { serveStreams } = await import("@agent-authority/lsp");
    if (!argv.includes("--prove")) {
      await serveStreams(process.stdin, process.stdout, CLI_VERSION);
      return EXIT.ok;
    }
    // The solver starts with the first proof, and its threads end with the connection.
    let analyzer: Promise<Analyzer> | undefined;
    const prove = async (text: string) => {
      const analysis = await import("@agent-authority/analysis");
      analyzer ??= analysis.createAnalyzer();
      return analysis.proveLint(await analyzer, text);
    };
    try {
      await serveStreams(process.stdin, process.stdout, CLI_VERSION, { prove });
    } finally {
      if (analyzer !== undefined) await (await analyzer).close();
    }
    return EXIT.ok;
  },
};
