// The reference server package, loaded only by the commands that run it or open its database.
// It is an optional peer dependency: authoring (lint, fmt, compile, preview, test) never loads it.
import { UsageError } from "./args.js";
import type { Terminal } from "./terminal.js";

export type ServerPackage = typeof import("@agent-authority/server");

/** The install command a user without the server package is told to run. */
export const SERVER_INSTALL = "npm install @agent-authority/server";

/** Imports the server package, or fails with a usage error that says how to install it. */
export async function serverPackage(command: string): Promise<ServerPackage> {
  try {
    return await import("@agent-authority/server");
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    // Only the package itself missing; a dependency of an installed server that is missing is its own error.
    if (code !== "ERR_MODULE_NOT_FOUND" || !String((error as Error).message).includes("package '@agent-authority/server' ")) throw error;
    throw new UsageError(`\`${command}\` needs the server package, which is not installed: run \`${SERVER_INSTALL}\``);
  }
}

/** The server's configuration read from the environment; a bad setting is a usage error naming it. */
export async function serverConfig(command: string, terminal: Terminal, overrides: Record<string, string> = {}) {
  const server = await serverPackage(command);
  try {
    return { server, config: server.loadConfig({ ...terminal.env, ...overrides }, terminal.cwd) };
  } catch (error) {
    if (error instanceof server.ConfigError) throw new UsageError(error.message);
    throw error;
  }
}
