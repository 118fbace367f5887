// `npm start`: the server from environment variables, stopped gracefully on SIGTERM and SIGINT.

import { ConfigError, loadConfig } from "./config.js";
import { jsonLogger } from "./log.js";
import { startServer } from "./server.js";
import type { FaultHooks } from "./services/context.js";

/** The crash tests' fault hooks (decision 0605), read from variables only tests set; undefined when none is. */
function testFaults(env: NodeJS.ProcessEnv): FaultHooks | undefined {
  const crashBeforeCommitKey = env["AUTHORITY_TEST_CRASH_BEFORE_COMMIT"];
  const crashAfterCommitKey = env["AUTHORITY_TEST_CRASH_AFTER_COMMIT"];
  if (crashBeforeCommitKey === undefined && crashAfterCommitKey === undefined) return undefined;
  return { crashBeforeCommitKey, crashAfterCommitKey };
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`authority: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const faults = testFaults(process.env);
  // Info lines go to stdout, warnings and errors to stderr, through the one logger (log.ts).
  const logger = jsonLogger(config.logLevel);
  const server = await startServer(config, faults === undefined ? { logger } : { logger, faults });
  if (server.generatedAdminKey !== null) {
    process.stderr.write([
      "",
      "  First start: an admin key was created. It is shown only this once; keep it safe:",
      "",
      `    ${server.generatedAdminKey}`,
      "",
      "  Use it as a bearer token, for example:",
      `    curl -H "authorization: Bearer ${server.generatedAdminKey}" ${server.baseUrl}/keys`,
      "  (or set AUTHORITY_ADMIN_KEY before the first start to choose it yourself)",
      "",
    ].join("\n") + "\n");
  }
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.log("info", "shutting down", { signal });
    server.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch((error: unknown) => {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: "error", msg: "failed to start", error: error instanceof Error ? error.message : String(error) })}\n`);
  process.exit(1);
});
