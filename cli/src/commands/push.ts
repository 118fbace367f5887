// `authority push`: compile families and send each to a server's `POST /v1/grant-families`.
import { flag, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { collectInputs } from "../files.js";
import { checkFile } from "../load.js";
import { formatText } from "../report.js";
import { request, serverTarget } from "../server-client.js";
import { paint } from "../terminal.js";

export const pushCommand: Command = {
  name: "push",
  summary: "compile families and send them to a server (POST /v1/grant-families)",
  usage: `authority push PATH... [--server URL] [--key KEY] [--dry-run]

Compiles every family under the paths; if any has an error, nothing is sent. Then sends each body
to URL/v1/grant-families with the key as a bearer token and an Idempotency-Key made of the family's
id, version and content hash, so a retried push is safe.

  --server URL   the server, e.g. http://127.0.0.1:8080 (or AUTHORITY_SERVER)
  --key KEY      an API key with the issuer or admin role (or AUTHORITY_KEY; prefer the variable,
                 since arguments are visible to other users of the machine)
  --dry-run      compile and show what would be sent; send nothing

Exit status: 0 every family accepted, 1 a family has errors, the server refused one or could not
be reached, 2 usage error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { server: "string", key: "string", "dry-run": "boolean" });
    if (args.positionals.length === 0) throw new UsageError("name the families to push");
    const dryRun = flag(args, "dry-run");
    const target = serverTarget(args, terminal.env, !dryRun);
    const checked = collectInputs(terminal.cwd, args.positionals, ["family"]).map(checkFile);
    const broken = checked.filter((c) => !c.family?.ok);
    if (broken.length > 0) {
      terminal.err.write(formatText(broken, paint(false)));
      terminal.err.write(`nothing was pushed: ${broken.length} famil${broken.length === 1 ? "y has" : "ies have"} errors\n`);
      return EXIT.failed;
    }
    const endpoint = `${target.base}/grant-families`;
    const p = paint(terminal.color);
    let failures = 0;
    for (const file of checked) {
      const body = file.family!.body!;
      const label = `${body.id} v${body.version} (${body.content_hash.slice(0, 19)}…)`;
      if (dryRun) {
        terminal.out.write(`would push ${label} from ${file.path} to ${endpoint}\n`);
        continue;
      }
      const answer = await request(target, "POST", "/grant-families", body, {
        "idempotency-key": `family:${body.id}:${body.version}:${body.content_hash}`,
      });
      if (answer.ok) {
        terminal.out.write(
          `${p.green("pushed")} ${label} from ${file.path}${storedAs(answer.replayed === true ? 200 : answer.status, answer.body)}\n`,
        );
      } else {
        failures += 1;
        terminal.out.write(`${p.red("not pushed")} ${label} from ${file.path}: ${answer.message}\n`);
      }
    }
    if (!dryRun) terminal.out.write(`${checked.length - failures} pushed, ${failures} not pushed\n`);
    return failures > 0 ? EXIT.failed : EXIT.ok;
  },
};

/**
 * What the server made of a push: the family's server id and version, and whether this push made
 * that version (201) or found the same content already there (200, the version it has).
 */
function storedAs(status: number, body: unknown): string {
  const record = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
  if (typeof record["id"] !== "string" || typeof record["version"] !== "number") return "";
  const made = record["created"] === false || status === 200 ? "unchanged, already" : "new";
  return `: ${made} version ${record["version"]} of \`${record["id"]}\``;
}
