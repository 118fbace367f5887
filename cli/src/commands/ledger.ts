// `authority ledger verify`: recompute every hash chain of the sealed decision ledger, reading the
// configured database with the server's own verifier, or asking a running server.
import { option, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { request, serverTarget } from "../server-client.js";
import { serverConfig } from "../optional-packages.js";
import { paint, type Terminal } from "../terminal.js";

interface Verification {
  readonly ok: boolean;
  readonly trees: number;
  readonly records: number;
  readonly broken: { readonly tree_id: string; readonly seq: number; readonly ledger_id: string; readonly problem: string } | null;
}

/** The database named by the server's configuration, verified in this process; nothing is written or created. */
async function verifyDatabase(terminal: Terminal): Promise<Verification> {
  const { server, config: settings } = await serverConfig("ledger verify", terminal);
  let store: ReturnType<typeof server.openStore>;
  try {
    store = server.openExistingStore(settings.databaseUrl, {
      ...(settings.databaseSchema !== undefined ? { schema: settings.databaseSchema } : {}), engine: settings.databaseEngine,
    });
  } catch (error) {
    if (!(error instanceof server.DatabaseNotFound)) throw error;
    throw new UsageError(`${error.message}: set AUTHORITY_DATA_DIR or AUTHORITY_DATABASE_URL to the server's database, or ask a running server with \`--server URL\``);
  }
  try {
    return await server.verifyLedger(store);
  } finally {
    await store.close();
  }
}

export const ledgerVerifyCommand: Command = {
  name: "ledger verify",
  summary: "check every hash chain of the sealed decision ledger",
  usage: `authority ledger verify [--server URL] [--key KEY] [--format text|json]

Recomputes the hash of every sealed record, chain by chain, and reports the first broken link: a
record changed after sealing, a missing record, a column that differs from what was sealed.

Without --server it reads the configured database directly (AUTHORITY_DATA_DIR,
AUTHORITY_DATABASE_URL, as for \`authority migrate\`) and writes nothing; a SQLite database that
does not exist is an error (exit 2), never created. With --server it asks a
running server (GET /v1/ledger/verify) with an auditor or admin key (--key or AUTHORITY_KEY).

Exit status: 0 every chain verifies, 1 a chain is broken or the ledger could not be read, 2 usage
error.
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { server: "string", key: "string", format: "string" });
    if (args.positionals.length > 0) throw new UsageError("`ledger verify` takes no arguments");
    const format = option(args, "format") ?? "text";
    if (format !== "text" && format !== "json") throw new UsageError("`--format` is `text` or `json`");
    let result: Verification;
    if (option(args, "server") !== undefined) {
      const answer = await request(serverTarget(args, terminal.env, true), "GET", "/ledger/verify");
      if (!answer.ok) {
        terminal.err.write(`authority ledger verify: ${answer.message}\n`);
        return EXIT.failed;
      }
      result = answer.body as Verification;
    } else {
      try {
        result = await verifyDatabase(terminal);
      } catch (error) {
        if (error instanceof UsageError) throw error;
        terminal.err.write(`authority ledger verify: the ledger could not be read: ${error instanceof Error ? error.message : String(error)}\n`);
        return EXIT.failed;
      }
    }
    const p = paint(terminal.color);
    if (format === "json") terminal.out.write(`${JSON.stringify(result, null, 2)}\n`);
    else if (result.broken === null) terminal.out.write(`${p.green("verified")}: ${result.records} records in ${result.trees} chains\n`);
    else {
      const b = result.broken;
      terminal.out.write(`${p.red("broken")}: chain \`${b.tree_id}\`, record ${b.seq} (\`${b.ledger_id}\`): ${b.problem}\n`);
      terminal.out.write(`checked ${result.records} records in ${result.trees} chains up to the break\n`);
    }
    return result.ok ? EXIT.ok : EXIT.failed;
  },
};
