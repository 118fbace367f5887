// `authority serve` and `authority migrate`: the reference server, embedded; loaded only when used.
import { option, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { serverConfig } from "../optional-packages.js";

const CONFIG_HELP = `Configuration comes from the environment, as for \`npm start\` (docs/operations.md):
AUTHORITY_DATA_DIR, AUTHORITY_DATABASE_URL, AUTHORITY_DATABASE_ENGINE, AUTHORITY_ENVIRONMENT,
AUTHORITY_ADMIN_KEY, ...`;

export const serveCommand: Command = {
  name: "serve",
  summary: "run the reference server (as npm start does)",
  usage: `authority serve [--host HOST] [--port PORT]

Opens the database, applies pending migrations, creates the first admin key on an empty database
(printed once on stderr unless AUTHORITY_ADMIN_KEY is set) and serves the v1 API until SIGINT or
SIGTERM. Prints \`listening on URL\` on stdout once it accepts requests.

  --host HOST   overrides AUTHORITY_HOST (default 127.0.0.1)
  --port PORT   overrides AUTHORITY_PORT (default 8080; 0 picks a free port)

${CONFIG_HELP}
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, { host: "string", port: "string" });
    if (args.positionals.length > 0) throw new UsageError("`serve` takes no arguments");
    const overrides: Record<string, string> = {};
    if (option(args, "host") !== undefined) overrides["AUTHORITY_HOST"] = option(args, "host")!;
    if (option(args, "port") !== undefined) overrides["AUTHORITY_PORT"] = option(args, "port")!;
    const { server, config: settings } = await serverConfig("serve", terminal, overrides);
    let running: Awaited<ReturnType<typeof server.startServer>>;
    try {
      running = await server.startServer(settings);
    } catch (error) {
      // Operating errors (a port in use, a database that cannot be opened, a short admin key) are
      // reported as such, not as an internal error of the CLI.
      terminal.err.write(`authority serve: ${error instanceof Error ? error.message : String(error)}\n`);
      return EXIT.failed;
    }
    if (running.generatedAdminKey !== null) {
      terminal.err.write(`\nFirst start: an admin key was created. It is shown only this once; keep it safe:\n\n    ${running.generatedAdminKey}\n\n`);
    }
    terminal.out.write(`listening on ${running.baseUrl}\n`);
    return new Promise<number>((resolve) => {
      let stopping = false;
      const stop = (): void => {
        if (stopping) return;
        stopping = true;
        running.close().then(() => resolve(EXIT.ok), () => resolve(EXIT.failed));
      };
      process.once("SIGTERM", stop);
      process.once("SIGINT", stop);
    });
  },
};

export const migrateCommand: Command = {
  name: "migrate",
  summary: "create or upgrade the database schema",
  usage: `authority migrate

Applies every pending migration to the configured database (SQLite by default, PostgreSQL with a
postgres:// AUTHORITY_DATABASE_URL) and reports the versions applied. Safe to run again.

${CONFIG_HELP}
`,
  available: true,
  async run(argv, terminal) {
    const args = parseArgs(argv, {});
    if (args.positionals.length > 0) throw new UsageError("`migrate` takes no arguments");
    const { server, config: settings } = await serverConfig("migrate", terminal);
    const options = { ...(settings.databaseSchema !== undefined ? { schema: settings.databaseSchema } : {}), engine: settings.databaseEngine };
    const applied = await server.migrateDatabase(settings.databaseUrl, options);
    const where = server.isPostgresUrl(settings.databaseUrl) ? "the PostgreSQL database" : settings.databaseUrl;
    terminal.out.write(
      applied.length > 0 ? `applied migration${applied.length === 1 ? "" : "s"} ${applied.join(", ")} to ${where}\n` : `${where} is up to date (migration ${server.LATEST_MIGRATION})\n`,
    );
    return EXIT.ok;
  },
};
