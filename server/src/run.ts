// The server process: configuration from environment variables, the first admin key shown once,
// and a graceful stop on SIGTERM and SIGINT. `main.ts` runs it as it ships; the crash tests run it
// with fault hooks from an entry of their own, so the shipped entry reads no test variable.

import { ConfigError, loadConfig } from "./config.js";
import { jsonLogger } from "./log.js";
import { startServer } from "./server.js";
import type { FaultHooks } from "./services/context.js";

/** Runs the server process until a signal stops it; `faults` exist only in the crash tests (decision 0605). */
export async function runServerProcess(faults?: FaultHooks): Promise<void> {
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

/** Ends a process whose server failed to start, with one JSON log line. */
export function failedToStart(error: unknown): never {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: "error", msg: "failed to start", error: error instanceof Error ? error.message : String(error) })}\n`);
  process.exit(1);
}
