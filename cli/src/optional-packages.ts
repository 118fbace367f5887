// The packages the CLI loads only for the commands that need them: the reference server (native
// SQLite, Express, pg) and the MCP gateway. Both are optional peer dependencies, so authoring
// (lint, fmt, compile, preview, test, manifest) never loads or installs them.
import { UsageError } from "./args.js";
import type { Terminal } from "./terminal.js";
import { CLI_VERSION } from "./version.js";

export type ServerPackage = typeof import("@agent-authority/server");
export type GatewayPackage = typeof import("@agent-authority/gateway");

/** The install command a user without the package is told to run: its tarball from the release folder, beside the CLI's. */
function installCommand(name: string): string {
  return `npm install RELEASE/${name.slice(1).replace("/", "-")}-${CLI_VERSION}.tgz`;
}

/** Whether `error` says that the package `name` itself is missing (a missing dependency of an installed package is its own error). */
function isMissing(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ERR_MODULE_NOT_FOUND" && String((error as Error).message).includes(`package '${name}' `);
}

/** Rethrows a missing package as a usage error that says how to install it. */
function missingPackage(error: unknown, name: string, command: string): never {
  if (!isMissing(error, name)) throw error;
  throw new UsageError(
    `\`${command}\` needs the package \`${name}\`, which is not installed: run \`${installCommand(name)}\` with RELEASE the folder \`npm run release\` made (see the README)`,
  );
}

/** Imports the server package, or fails with a usage error that says how to install it. */
export async function serverPackage(command: string): Promise<ServerPackage> {
  return import("@agent-authority/server").catch((error: unknown) => missingPackage(error, "@agent-authority/server", command));
}

/** Imports the gateway package, or fails with a usage error that says how to install it. */
export async function gatewayPackage(command: string): Promise<GatewayPackage> {
  return import("@agent-authority/gateway").catch((error: unknown) => missingPackage(error, "@agent-authority/gateway", command));
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
