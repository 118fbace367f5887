// `authority keys create|list|revoke`: manage API keys over HTTP, as an admin does with the API, and
// create an admin key offline in the database itself when every admin key is lost.
import { resolve } from "node:path";
import { choice, flag, option, options, parseArgs, type ParsedArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { request, serverTarget } from "../server-client.js";
import { serverPackage } from "../optional-packages.js";
import type { Terminal } from "../terminal.js";

const CONNECTION = { server: "string", key: "string", format: "string" } as const;
const CONNECTION_HELP = `  --server URL     the server (or AUTHORITY_SERVER)
  --key KEY        an admin key (or AUTHORITY_KEY; prefer the variable)
  --format FORMAT  text (default) or json`;

/** The most pages `keys list` follows; a larger key table is cut and said to be. */
const LIST_PAGES_MAX = 100;

interface KeyView {
  readonly id: string;
  readonly identity: string;
  readonly kind: string;
  readonly roles: readonly string[];
  readonly agent_id?: string | null;
  readonly status: string;
  readonly created_at: string;
}

export const keysCreateCommand: Command = {
  name: "keys create",
  summary: "create an API key on a server; the secret is shown once",
  usage: `authority keys create --identity ID --kind human|service --role ROLE... [--agent-id AGENT] [--email EMAIL]
authority keys create --admin --database URL [--schema NAME] [--identity ID] [--email EMAIL]

Creates a key with POST /v1/keys. The secret is printed once on stdout (last line in text) and
never again: store it where it is needed.

With --admin it works offline, on the database itself, with no server running: the recovery when
every admin key is lost. It creates a human key with the \`admin\` role alone (identity \`admin\`
unless --identity says otherwise) after applying any pending migration, as a start would. A SQLite
file that does not exist is refused (nothing is created).

  --admin          create an admin key directly in the database given by --database
  --database URL   a SQLite file path, or a postgres:// URL (with --admin)
  --schema NAME    PostgreSQL only: the schema the server uses (AUTHORITY_DATABASE_SCHEMA)
                   (the engine behind a postgres:// URL is read from AUTHORITY_DATABASE_ENGINE)

  --identity ID    an email for a human, a service name for a service
  --kind KIND      human or service
  --role ROLE      admin, issuer, approver, certifier, auditor, agent or enforcer (repeat for several)
  --agent-id ID    the agent an \`agent\` key acts as; for an \`enforcer\` key (an enforcement
                   point asking through AuthZEN), each agent it may ask for (repeat for several)
  --email EMAIL    a contact email
${CONNECTION_HELP}

Exit status: 0 created, 1 refused or unreachable, 2 usage error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, {
      ...CONNECTION,
      identity: "string",
      kind: "string",
      role: "string",
      "agent-id": "string",
      email: "string",
      admin: "boolean",
      database: "string",
      schema: "string",
    });
    const format = choice(args, "format", ["text", "json"] as const, "text");
    if (flag(args, "admin")) return createAdminOffline(args, format, terminal);
    for (const name of ["database", "schema"])
      if (option(args, name) !== undefined) throw new UsageError(`\`--${name}\` goes with \`--admin\``);
    const identity = option(args, "identity");
    const kind = choice(args, "kind", ["human", "service"] as const, "human");
    const roles = options(args, "role");
    if (identity === undefined) throw new UsageError("give the key's identity with `--identity`");
    if (option(args, "kind") === undefined) throw new UsageError("give the key's kind with `--kind human` or `--kind service`");
    if (roles.length === 0) throw new UsageError("give at least one `--role`");
    const body = {
      identity,
      kind,
      roles,
      ...agentsOf(roles, options(args, "agent-id")),
      ...(option(args, "email") !== undefined ? { email: option(args, "email") } : {}),
    };
    const answer = await request(serverTarget(args, terminal.env, true), "POST", "/keys", body);
    if (!answer.ok) {
      terminal.err.write(`authority keys create: ${answer.message}\n`);
      return EXIT.failed;
    }
    writeCreated(answer.body as KeyView & { key: string }, format, terminal);
    return EXIT.ok;
  },
};

/** The agent of an `agent` key, or the list of an `enforcer` key's agents, as the request body names them. */
function agentsOf(roles: readonly string[], agentIds: readonly string[]): { agent_id?: string; agent_ids?: readonly string[] } {
  if (agentIds.length === 0) return {};
  if (roles.includes("enforcer")) return { agent_ids: agentIds };
  if (agentIds.length > 1) throw new UsageError("an `agent` key acts as one agent: give `--agent-id` once");
  return { agent_id: agentIds[0]! };
}

function writeCreated(created: KeyView & { key: string }, format: "text" | "json", terminal: Terminal): void {
  if (format === "json") terminal.out.write(`${JSON.stringify(created, null, 2)}\n`);
  else
    terminal.out.write(
      `created ${created.id} for ${created.identity} (${created.kind}; ${created.roles.join(", ")}); its secret, shown only now:\n${created.key}\n`,
    );
}

/** `keys create --admin --database URL`: a human admin key written into the database directly. */
async function createAdminOffline(args: ParsedArgs, format: "text" | "json", terminal: Terminal): Promise<number> {
  const database = option(args, "database");
  if (database === undefined) throw new UsageError("give the database with `--database PATH` or `--database postgres://…`");
  for (const name of ["server", "key", "role", "kind", "agent-id"]) {
    if (option(args, name) !== undefined)
      throw new UsageError(`\`--${name}\` does not go with \`--admin\` (an offline admin key is a human key with the \`admin\` role)`);
  }
  if (args.positionals.length > 0) throw new UsageError("`keys create` takes no arguments");
  const server = await serverPackage("keys create --admin");
  // The rule of POST /v1/keys, checked before the database is opened: a refused identity writes nothing.
  const identityFault = server.keyIdentityFault(option(args, "identity") ?? "admin", option(args, "email"));
  if (identityFault !== undefined)
    throw new UsageError(identityFault.replace("`identity`", "`--identity`").replace("`email`", "`--email`"));
  const url = server.isPostgresUrl(database) ? database : resolve(terminal.cwd, database);
  const schema = option(args, "schema") ?? terminal.env["AUTHORITY_DATABASE_SCHEMA"];
  const engine = terminal.env["AUTHORITY_DATABASE_ENGINE"] || "postgresql";
  if (!(server.DATABASE_ENGINES as readonly string[]).includes(engine)) {
    const names = server.DATABASE_ENGINES;
    throw new UsageError(
      `AUTHORITY_DATABASE_ENGINE must be ${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}, got \`${engine}\``,
    );
  }
  let store: ReturnType<typeof server.openStore>;
  try {
    store = server.openExistingStore(url, {
      ...(schema !== undefined && schema !== "" ? { schema } : {}),
      engine: engine as (typeof server.DATABASE_ENGINES)[number],
    });
  } catch (error) {
    if (error instanceof server.DatabaseNotFound) throw new UsageError(`${error.message}; name the server's database file`);
    if (error instanceof server.EngineNeedsPostgresUrl) throw new UsageError(error.message);
    throw error;
  }
  try {
    const now = Date.now();
    await store.migrate(now);
    const email = option(args, "email");
    const { record, secret } = await server.createKey(
      store,
      { identity: option(args, "identity") ?? "admin", kind: "human", roles: ["admin"], email },
      "authority keys create --admin",
      now,
    );
    writeCreated({ ...server.keyView(record), key: secret }, format, terminal);
    return EXIT.ok;
  } catch (error) {
    terminal.err.write(`authority keys create: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT.failed;
  } finally {
    await store.close();
  }
}

export const keysListCommand: Command = {
  name: "keys list",
  summary: "list the API keys of a server (never their secrets)",
  usage: `authority keys list

Lists every key with GET /v1/keys, following the pages.
${CONNECTION_HELP}

Exit status: 0 listed, 1 refused or unreachable, 2 usage error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, CONNECTION);
    const format = choice(args, "format", ["text", "json"] as const, "text");
    if (args.positionals.length > 0) throw new UsageError("`keys list` takes no arguments");
    const target = serverTarget(args, terminal.env, true);
    const keys: KeyView[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const answer = await request(target, "GET", `/keys${after !== null ? `?after=${encodeURIComponent(after)}` : ""}`);
      if (!answer.ok) {
        terminal.err.write(`authority keys list: ${answer.message}\n`);
        return EXIT.failed;
      }
      const page = answer.body as { keys: KeyView[]; next_after?: string | null };
      keys.push(...page.keys);
      after = page.next_after ?? null;
      pages += 1;
    } while (after !== null && pages < LIST_PAGES_MAX);
    if (format === "json") {
      terminal.out.write(`${JSON.stringify({ keys }, null, 2)}\n`);
      return EXIT.ok;
    }
    const rows = keys.map((k) => [
      k.id,
      k.identity,
      k.kind,
      k.roles.join(",") + (k.agent_id ? `(${k.agent_id})` : ""),
      k.status,
      k.created_at,
    ]);
    const header = ["ID", "IDENTITY", "KIND", "ROLES", "STATUS", "CREATED"];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    for (const row of [header, ...rows])
      terminal.out.write(
        `${row
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join("  ")
          .trimEnd()}\n`,
      );
    if (after !== null) terminal.out.write(`(more than ${keys.length} keys; the list stops here)\n`);
    return EXIT.ok;
  },
};

export const keysRevokeCommand: Command = {
  name: "keys revoke",
  summary: "revoke an API key on a server",
  usage: `authority keys revoke KEY_ID [--reason TEXT]

Revokes a key with POST /v1/keys/{id}/revoke; every later request with it is refused.
${CONNECTION_HELP}

Exit status: 0 revoked, 1 refused or unreachable, 2 usage error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { ...CONNECTION, reason: "string" });
    const format = choice(args, "format", ["text", "json"] as const, "text");
    if (args.positionals.length !== 1) throw new UsageError("name one key id to revoke");
    const id = args.positionals[0]!;
    const reason = option(args, "reason");
    const answer = await request(
      serverTarget(args, terminal.env, true),
      "POST",
      `/keys/${encodeURIComponent(id)}/revoke`,
      reason !== undefined ? { reason } : {},
    );
    if (!answer.ok) {
      terminal.err.write(`authority keys revoke: ${answer.message}\n`);
      return EXIT.failed;
    }
    const key = answer.body as KeyView;
    terminal.out.write(format === "json" ? `${JSON.stringify(key, null, 2)}\n` : `revoked ${key.id} (${key.identity})\n`);
    return EXIT.ok;
  },
};
