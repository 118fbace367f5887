// The server process: configuration from environment variables, the first admin key handed over
// once (decision 0916), and a graceful stop on SIGTERM, SIGINT, or the death of the npm process
// that launched it. `main.ts` runs it as it ships, `authority serve` through `serveUntilStopped`; the
// crash tests run it with fault hooks from an entry of their own, so the shipped entry reads no test
// variable.

import { ConfigError, loadConfig, type ServerConfig } from "./config.js";
import { revealFirstAdminKey, startFailureLine, type SecretOutlet } from "./first-start.js";
import { jsonLogger, type Logger } from "./log.js";
import { startServer } from "./server.js";
import type { FaultHooks } from "./services/common/index.js";

/** How often a server launched by npm looks whether its launcher still lives. */
export const LAUNCHER_POLL_MS = 500;

export interface ServeOptions {
  readonly logger: Logger;
  /** Where the first admin secret may be shown: only when a terminal is attached (else a file). */
  readonly outlet: SecretOutlet;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly faults?: FaultHooks;
}

/**
 * Starts the server (a failure to start is thrown) and answers the exit code once a stop signal,
 * or the end of the npm process that launched it, has closed it.
 */
export async function serveUntilStopped(config: ServerConfig, options: ServeOptions): Promise<{ stopped: Promise<number> }> {
  const { logger } = options;
  const server = await startServer(config, options.faults === undefined ? { logger } : { logger, faults: options.faults });
  if (server.generatedAdminKey !== null)
    revealFirstAdminKey(server.generatedAdminKey, server.baseUrl, config.dataDir, logger, options.outlet);
  const stopped = new Promise<number>((resolve) => {
    let stopping = false;
    let watch: NodeJS.Timeout | undefined;
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      clearInterval(watch);
      logger.log("info", "shutting down", { signal });
      server.close().then(
        () => resolve(0),
        () => resolve(1),
      );
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
    // `npx` and `npm exec` end on SIGTERM without passing it on: the server would live on under
    // PID 1 with its port held. Launched by npm, the server stops when its launcher is gone.
    if (options.env["npm_command"] !== undefined) {
      const launcher = process.ppid;
      watch = setInterval(() => {
        if (process.ppid !== launcher) stop("launcher-exited");
      }, LAUNCHER_POLL_MS);
      watch.unref();
    }
  });
  return { stopped };
}

/** Runs the server process until a signal stops it; `faults` exist only in the crash tests (decision 0605). */
export async function runServerProcess(faults?: FaultHooks): Promise<void> {
  let config: ServerConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(
        `${JSON.stringify({ time: new Date().toISOString(), level: "error", msg: "invalid configuration", error: error.message })}\n`,
      );
      process.exit(2);
    }
    throw error;
  }
  // Info lines go to stdout, warnings and errors to stderr, through the one logger (log.ts).
  const logger = jsonLogger(config.logLevel);
  const { stopped } = await serveUntilStopped(config, {
    logger,
    outlet: process.stderr,
    env: process.env,
    ...(faults === undefined ? {} : { faults }),
  });
  process.exit(await stopped);
}

/** Ends a process whose server failed to start, with one JSON log line (and a hint when one helps). */
export function failedToStart(error: unknown): never {
  process.stderr.write(startFailureLine(error));
  process.exit(1);
}
