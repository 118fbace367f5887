// `authority signing-keys list|rotate`: the server's public signing keys (a JWKS a counterparty
// saves to verify answers and receipts offline), and their rotation by an admin.
import { choice, option, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { request, serverTarget, type ServerTarget } from "../server-client.js";
import type { Terminal } from "../terminal.js";

interface SigningKeyView {
  readonly kid: string;
  readonly status: string;
  readonly created_at: string;
  readonly retired_at: string | null;
}

function writeKeys(jwks: { keys: readonly SigningKeyView[] }, format: "text" | "json", terminal: Terminal): void {
  if (format === "json") {
    terminal.out.write(`${JSON.stringify(jwks, null, 2)}\n`);
    return;
  }
  for (const key of jwks.keys)
    terminal.out.write(
      `${key.kid}  ${key.status.padEnd(7)}  created ${key.created_at}${key.retired_at === null ? "" : `  retired ${key.retired_at}`}\n`,
    );
}

async function readKeys(target: ServerTarget, command: string, terminal: Terminal): Promise<{ keys: SigningKeyView[] } | undefined> {
  const answer = await request(target, "GET", "/signing-keys");
  if (!answer.ok) {
    terminal.err.write(`authority ${command}: ${answer.message}\n`);
    return undefined;
  }
  return answer.body as { keys: SigningKeyView[] };
}

export const signingKeysListCommand: Command = {
  name: "signing-keys list",
  summary: "list the server's public signing keys (a JWKS with --format json)",
  usage: `authority signing-keys list [--server URL] [--format text|json]

Reads GET /v1/signing-keys, which needs no key: every public key the server signs or signed
with, active or retired. With --format json it prints the JWKS itself, the file that
\`authority receipt verify --keys\`, the SDK and the gateway take (docs/verification.md).

  --server URL     the server (or AUTHORITY_SERVER)
  --format FORMAT  text (default) or json

Exit status: 0 listed, 1 unreachable, 2 usage error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { server: "string", key: "string", format: "string" });
    const format = choice(args, "format", ["text", "json"] as const, "text");
    if (args.positionals.length > 0) throw new UsageError("`signing-keys list` takes no arguments");
    const jwks = await readKeys(serverTarget(args, terminal.env, false), "signing-keys list", terminal);
    if (jwks === undefined) return EXIT.failed;
    writeKeys(jwks, format, terminal);
    return EXIT.ok;
  },
};

export const signingKeysRotateCommand: Command = {
  name: "signing-keys rotate",
  summary: "retire the active signing key and sign with a new one (admin)",
  usage: `authority signing-keys rotate [--reason TEXT]

Reads the active key from GET /v1/signing-keys and retires it with POST /v1/signing-keys/rotate;
the server signs with a new key from then on. The retired key stays listed, so that what it
signed still verifies. If another admin rotated meanwhile, nothing rotates twice (exit 1).
  --server URL     the server (or AUTHORITY_SERVER)
  --key KEY        an admin key (or AUTHORITY_KEY; prefer the variable)
  --reason TEXT    why, for the server's log
  --format FORMAT  text (default) or json

Exit status: 0 rotated, 1 refused or unreachable, 2 usage error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { server: "string", key: "string", format: "string", reason: "string" });
    const format = choice(args, "format", ["text", "json"] as const, "text");
    if (args.positionals.length > 0) throw new UsageError("`signing-keys rotate` takes no arguments");
    const target = serverTarget(args, terminal.env, true);
    const before = await readKeys(target, "signing-keys rotate", terminal);
    if (before === undefined) return EXIT.failed;
    const active = before.keys.find((key) => key.status === "active");
    if (active === undefined) {
      terminal.err.write("authority signing-keys rotate: the server lists no active signing key\n");
      return EXIT.failed;
    }
    const reason = option(args, "reason");
    const answer = await request(target, "POST", "/signing-keys/rotate", {
      retire_kid: active.kid,
      ...(reason === undefined ? {} : { reason }),
    });
    if (!answer.ok) {
      terminal.err.write(`authority signing-keys rotate: ${answer.message}\n`);
      return EXIT.failed;
    }
    const after = answer.body as { keys: SigningKeyView[] };
    if (format === "text")
      terminal.out.write(`retired ${active.kid}; now signing with ${after.keys.find((key) => key.status === "active")?.kid}\n`);
    writeKeys(after, format, terminal);
    return EXIT.ok;
  },
};
