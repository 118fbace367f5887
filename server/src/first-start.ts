// What a starting server tells its operator without leaking into collected logs: the first admin
// secret on a terminal only (else in an owner-only file whose path is logged), and a hint for the
// start-up errors an operator can fix (a port in use names AUTHORITY_PORT). Decision 0916.

import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Logger } from "./log.js";

/** The file the first admin secret is written to when no terminal is attached, in the data folder. */
export const FIRST_ADMIN_KEY_FILE = "first-admin-key";

/** Where a secret may be shown: a stream and whether a terminal is attached to it. */
export interface SecretOutlet {
  readonly isTTY?: boolean | undefined;
  write(text: string): void;
}

/**
 * Hands the generated first admin secret to the operator: on the terminal when one is attached,
 * else in `FIRST_ADMIN_KEY_FILE` under `dataDir`, created readable only by its owner (0600). The
 * log line names where it went, never the secret. Answers the file's path, or null for a terminal.
 */
export function revealFirstAdminKey(secret: string, baseUrl: string, dataDir: string, logger: Logger, outlet: SecretOutlet): string | null {
  if (outlet.isTTY === true) {
    outlet.write(
      `${[
        "",
        "  First start: an admin key was created. It is shown only this once; keep it safe:",
        "",
        `    ${secret}`,
        "",
        "  Use it as a bearer token, for example:",
        `    curl -H "authorization: Bearer ${secret}" ${baseUrl}/keys`,
        "  (or set AUTHORITY_ADMIN_KEY before the first start to choose it yourself)",
        "",
      ].join("\n")}\n`,
    );
    logger.log("info", "first admin key shown on the terminal", { identity: "admin" });
    return null;
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = resolve(join(dataDir, FIRST_ADMIN_KEY_FILE));
  // `mode` applies only when the file is created; chmod covers a file left by an earlier start.
  writeFileSync(path, `${secret}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  logger.log("warn", "first admin key written to a file readable only by its owner; read it, keep it safe, then delete the file", {
    identity: "admin",
    path,
  });
  return path;
}

/** A hint for a start-up error the operator can fix, or undefined. */
export function startupHint(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EADDRINUSE") {
    return "another process holds this port: stop it, or choose another port with AUTHORITY_PORT (`authority serve --port PORT`)";
  }
  if (code === "EACCES") return "this port needs privileges this process lacks: choose a port above 1023 with AUTHORITY_PORT";
  if (code === "EADDRNOTAVAIL") return "this machine has no such address: choose another with AUTHORITY_HOST";
  return undefined;
}

/** The one JSON line of a start that failed, with its hint when there is one. */
export function startFailureLine(error: unknown, now: number = Date.now()): string {
  const hint = startupHint(error);
  return `${JSON.stringify({
    time: new Date(now).toISOString(),
    level: "error",
    msg: "failed to start",
    error: error instanceof Error ? error.message : String(error),
    ...(hint === undefined ? {} : { hint }),
  })}\n`;
}
