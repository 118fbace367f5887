// `authority serve` and `authority migrate`: the reference server, embedded; loaded only when used.
import { docPath } from "../docs-path.js";
import { option, parseArgs, UsageError } from "../args.js";
import { type Command, EXIT } from "../command.js";
import { serverConfig } from "../optional-packages.js";

const CONFIG_HELP = `Configuration comes from the environment, as for \`npm start\` (${docPath("operations.md")}):
AUTHORITY_DATA_DIR, AUTHORITY_DATABASE_URL, AUTHORITY_DATABASE_ENGINE, AUTHORITY_ENVIRONMENT,
AUTHORITY_ADMIN_KEY, ...`;

export const serveCommand: Command = {
  name: "serve",
  summary: "run the reference server (as npm start does)",
  usage: `authority serve [--host HOST] [--port PORT]

Opens the database, applies pending migrations, creates the first admin key on an empty database
(unless AUTHORITY_ADMIN_KEY is set: shown once on the terminal when one is attached, else written to
DATA_DIR/first-admin-key, readable only by its owner, whose path is logged) and serves the v1 API
until SIGINT or SIGTERM (or, under npx, until npx ends). stdout and stderr carry JSON log lines
only; the line with \`"msg":"listening"\` gives the URL once it accepts requests.

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
    // Every line on stdout and stderr is a JSON log line (decision 0916): a start that fails says
    // so in one, with a hint when the operator can fix it.
    const logger = server.jsonLogger(settings.logLevel);
    let running: Awaited<ReturnType<typeof server.serveUntilStopped>>;
    try {
      running = await server.serveUntilStopped(settings, { logger, outlet: process.stderr, env: terminal.env });
    } catch (error) {
      terminal.err.write(server.startFailureLine(error));
      return EXIT.failed;
    }
    return running.stopped;
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
    const options = {
      ...(settings.databaseSchema !== undefined ? { schema: settings.databaseSchema } : {}),
      engine: settings.databaseEngine,
    };
    const applied = await server.migrateDatabase(settings.databaseUrl, options);
    const where = server.isPostgresUrl(settings.databaseUrl) ? "the PostgreSQL database" : settings.databaseUrl;
    terminal.out.write(
      applied.length > 0
        ? `applied migration${applied.length === 1 ? "" : "s"} ${applied.join(", ")} to ${where}\n`
        : `${where} is up to date (migration ${server.LATEST_MIGRATION})\n`,
    );
    return EXIT.ok;
  },
};
