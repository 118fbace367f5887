// `authority version`: the CLI's version and the Node.js it runs on.
import { parseArgs } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { CLI_VERSION } from "../version.js";

export const versionCommand: Command = {
  name: "version",
  summary: "print the version of authority and of Node.js",
  usage: `authority version

Prints \`authority <version>\` and \`node <version>\`, one per line. \`authority --version\` prints
the bare version number.

Exit status: 0.
`,
  available: true,
  async run(argv, terminal) {
    parseArgs(argv, {});
    terminal.out.write(`authority ${CLI_VERSION}\nnode ${process.version}\n`);
    return EXIT.ok;
  },
};
