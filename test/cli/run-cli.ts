// Runs the built `authority` command as a user does: a spawned process, its exit code and output.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";

export const root = fileURLToPath(new URL("../..", import.meta.url));
export const fixtures = join(root, "test", "cli", "fixtures");
const bin = join(root, "cli", "bin", "authority.js");

/** Builds the CLI and everything it imports (incremental: fast when up to date). */
export function buildCli(): void {
  execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-b", join(root, "cli")], {
    cwd: root,
    stdio: "pipe",
  });
}

/** For a test file: builds the CLI before its tests and gives it a scratch directory removed after them. */
export function cliScratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  beforeAll(() => buildCli(), 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function authority(args: readonly string[], options: { cwd?: string; env?: Record<string, string> } = {}): CliRun {
  const env: Record<string, string | undefined> = { ...process.env };
  delete env["FORCE_COLOR"];
  Object.assign(env, { NO_COLOR: "1" }, options.env);
  const run = spawnSync(process.execPath, [bin, ...args], { cwd: options.cwd ?? root, env, encoding: "utf8", timeout: 60_000 });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The same as `authority`, without blocking: for tests that serve HTTP in this process meanwhile. */
export function authorityAsync(args: readonly string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<CliRun> {
  const env: Record<string, string | undefined> = { ...process.env };
  delete env["FORCE_COLOR"];
  Object.assign(env, { NO_COLOR: "1" }, options.env);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: options.cwd ?? root, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill(), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
