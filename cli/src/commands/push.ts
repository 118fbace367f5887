// `authority push`: compile families and send each to a server's `POST /v1/grant-families`.
import { flag, option, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { collectInputs } from "../files.js";
import { checkFile } from "../load.js";
import { formatText } from "../report.js";
import { paint } from "../terminal.js";

/** How long one request may take before the push gives up on it. */
export const PUSH_REQUEST_TIMEOUT_MS = 30_000;

/** The endpoint for a server given as `http://host:port`, `…/v1` or `…/v1/`. */
export function familiesEndpoint(server: string): string {
  const base = server.replace(/\/+$/, "");
  return /\/v1$/.test(base) ? `${base}/grant-families` : `${base}/v1/grant-families`;
}

/** A problem-details body in one line: its code, title and detail where present. */
function problemLine(status: number, text: string): string {
  try {
    const problem = JSON.parse(text) as Record<string, unknown>;
    const parts = [problem["code"], problem["title"], problem["detail"]].filter((p): p is string => typeof p === "string" && p.length > 0);
    if (parts.length > 0) return `HTTP ${status}: ${parts.join(": ")}`;
  } catch {
    // Not JSON: fall through to the status alone, never to a body that may hold internals.
  }
  return `HTTP ${status}`;
}

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
    const server = option(args, "server") ?? terminal.env["AUTHORITY_SERVER"];
    const key = option(args, "key") ?? terminal.env["AUTHORITY_KEY"];
    const dryRun = flag(args, "dry-run");
    if (server === undefined || server === "") throw new UsageError("give the server with `--server URL` or `AUTHORITY_SERVER`");
    if (!/^https?:\/\//.test(server)) throw new UsageError(`\`--server\` must be an http or https URL, not \`${server}\``);
    if (!dryRun && (key === undefined || key === "")) throw new UsageError("give an API key with `AUTHORITY_KEY` or `--key KEY`");
    const checked = collectInputs(terminal.cwd, args.positionals, ["family"]).map(checkFile);
    const broken = checked.filter((c) => !c.family?.ok);
    if (broken.length > 0) {
      terminal.err.write(formatText(broken, paint(false)));
      terminal.err.write(`nothing was pushed: ${broken.length} famil${broken.length === 1 ? "y has" : "ies have"} errors\n`);
      return EXIT.failed;
    }
    const endpoint = familiesEndpoint(server);
    const p = paint(terminal.color);
    let failures = 0;
    for (const file of checked) {
      const body = file.family!.body!;
      const label = `${body.id} v${body.version} (${body.content_hash.slice(0, 19)}…)`;
      if (dryRun) {
        terminal.out.write(`would push ${label} from ${file.path} to ${endpoint}\n`);
        continue;
      }
      try {
        const response = await fetch(endpoint, {
          method: "POST",
          headers: {
            authorization: `Bearer ${key}`,
            "content-type": "application/json",
            "idempotency-key": `family:${body.id}:${body.version}:${body.content_hash}`,
          },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(PUSH_REQUEST_TIMEOUT_MS),
        });
        const text = await response.text();
        if (response.ok) {
          terminal.out.write(`${p.green("pushed")} ${label} from ${file.path}\n`);
        } else {
          failures += 1;
          terminal.out.write(`${p.red("refused")} ${label} from ${file.path}: ${problemLine(response.status, text)}\n`);
        }
      } catch (error) {
        failures += 1;
        const reason = error instanceof Error && error.name === "TimeoutError" ? "no answer in time" : "the server could not be reached";
        terminal.out.write(`${p.red("failed")} ${label} from ${file.path}: ${reason} (${endpoint})\n`);
      }
    }
    if (!dryRun) terminal.out.write(`${checked.length - failures} pushed, ${failures} not pushed\n`);
    return failures > 0 ? EXIT.failed : EXIT.ok;
  },
};
