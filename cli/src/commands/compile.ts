// `authority compile`: a family's YAML to the JSON body of `POST /v1/grant-families`.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { option, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { collectInputs } from "../files.js";
import { checkFile } from "../load.js";
import { formatText } from "../report.js";
import { paint } from "../terminal.js";

export const compileCommand: Command = {
  name: "compile",
  summary: "turn a family into the JSON body of POST /v1/grant-families",
  usage: `authority compile FILE [--out FILE]
authority compile PATH... --out-dir DIR

Compiles one family and prints the JSON body (content hash included) on stdout, or writes it to
--out. With --out-dir, compiles every family under the paths and writes DIR/<id>.json each.
Errors go to stderr with a code frame; nothing is written for a family with errors.

Exit status: 0 compiled, 1 errors found, 2 usage error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { out: "string", "out-dir": "string" });
    const outDir = option(args, "out-dir");
    const out = option(args, "out");
    if (args.positionals.length === 0) throw new UsageError("name the family to compile");
    const inputs = collectInputs(terminal.cwd, args.positionals, ["family"]);
    if (outDir === undefined && inputs.length !== 1)
      throw new UsageError(`\`compile\` without \`--out-dir\` takes one family, not ${inputs.length}`);
    const checked = inputs.map(checkFile);
    const failed = checked.filter((c) => !c.family?.ok);
    const withErrors = checked.filter((c) => c.diagnostics.length > 0);
    if (withErrors.length > 0) terminal.err.write(formatText(withErrors, paint(false)));
    if (failed.length > 0) return EXIT.failed;
    for (const file of checked) {
      const json = `${JSON.stringify(file.family!.body, null, 2)}\n`;
      if (outDir !== undefined) {
        const dir = resolve(terminal.cwd, outDir);
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, `${file.family!.body!.id}.json`), json);
        terminal.err.write(`${file.path} -> ${join(outDir, `${file.family!.body!.id}.json`)}\n`);
      } else if (out !== undefined) {
        writeFileSync(resolve(terminal.cwd, out), json);
      } else {
        terminal.out.write(json);
      }
    }
    return EXIT.ok;
  },
};
