// Several real server processes on one PostgreSQL schema behind a real nginx, configured from
// docs/deploy/nginx.conf with only the replica addresses and the listen line changed. When
// PostgreSQL or nginx is missing, `replicaProblem` says why and the suites are skipped loudly.

import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, chmodSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "vitest";
import { SERVER_BUILT, startServerProcess, type ServerProcess } from "../server/server-processes.js";
import { pgProblem, PG_URL, postgresTarget } from "../server/targets.js";

export const NGINX_RECIPE = fileURLToPath(new URL("../../docs/deploy/nginx.conf", import.meta.url));
export const CLI_MAIN = fileURLToPath(new URL("../../cli/bin/authority.js", import.meta.url));

/** Debian's nginx lives in /usr/sbin, which an unprivileged PATH may lack. */
function findNginx(): string | undefined {
  const dirs = [...(process.env["PATH"] ?? "").split(delimiter), "/usr/sbin", "/usr/local/sbin"];
  for (const dir of dirs) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, "nginx"), constants.X_OK);
      return join(dir, "nginx");
    } catch {
      // Not here.
    }
  }
  return undefined;
}

export const NGINX = findNginx();

function problem(): string | null {
  if (!SERVER_BUILT) return "the server is not built (run `npx tsc -b`)";
  if (pgProblem !== null) return `PostgreSQL is unreachable at ${PG_URL}: ${pgProblem}`;
  if (NGINX === undefined) return "nginx is not installed (`apt-get install nginx`; .ci/run installs it)";
  return null;
}

export const replicaProblem = problem();
if (replicaProblem !== null) {
  console.error(`\n!!!!!!!!\n!!  The multi-replica suite is SKIPPED: ${replicaProblem}\n!!!!!!!!\n`);
}

/** Defines `suite`, or one visible skipped test naming why it cannot run here. */
export function replicaSuite(title: string, suite: () => void): void {
  describe(title, () => {
    if (replicaProblem === null) suite();
    else it.skip(`skipped because ${replicaProblem}`, () => undefined);
  });
}

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released for nginx to take). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * The recipe with its three example replicas replaced by `ports` and its listen line by
 * `listenPort`; everything else stays as documented. Throws when the recipe no longer has the
 * lines it replaces, so that the test and the documented file cannot drift apart unnoticed.
 */
export function siteConfig(recipe: string, ports: readonly number[], listenPort: number): string {
  const servers = [...recipe.matchAll(/^( *)server 127\.0\.0\.1:\d+ (.*);$/gm)];
  if (servers.length !== 3) throw new Error(`the recipe names ${servers.length} replicas, not 3`);
  const indent = servers[0]![1]!;
  const options = servers[0]![2]!;
  const lines = ports.map((port) => `${indent}server 127.0.0.1:${port} ${options};`).join("\n");
  let text = recipe.replace(servers[0]![0], lines);
  for (const line of servers.slice(1)) text = text.replace(`${line[0]}\n`, "");
  if (!/^ *listen 80;$/m.test(text)) throw new Error("the recipe has no `listen 80;` line");
  return text.replace(/^( *)listen 80;$/m, `$1listen 127.0.0.1:${listenPort};`);
}

export interface Nginx {
  readonly baseUrl: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** Starts nginx in the foreground on a directory of its own, in front of `ports`. */
export async function startNginx(ports: readonly number[]): Promise<Nginx> {
  const dir = mkdtempSync(join(tmpdir(), "authority-nginx-"));
  // Worker processes may run as another user (nobody, when the test runs as root).
  chmodSync(dir, 0o755);
  const port = await freePort();
  writeFileSync(join(dir, "site.conf"), siteConfig(readFileSync(NGINX_RECIPE, "utf8"), ports, port));
  writeFileSync(join(dir, "nginx.conf"), [
    "daemon off;", "worker_processes 1;", `pid ${dir}/nginx.pid;`, `error_log ${dir}/error.log warn;`,
    "events { worker_connections 1024; }",
    "http {",
    "  access_log off;",
    ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((kind) => `  ${kind}_temp_path ${dir}/${kind};`),
    `  include ${dir}/site.conf;`,
    "}",
  ].join("\n"));
  const child = spawn(NGINX!, ["-p", dir, "-c", join(dir, "nginx.conf"), "-e", join(dir, "error.log")], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (chunk) => { out += String(chunk); });
  child.stderr!.on("data", (chunk) => { out += String(chunk); });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  await waitForPort(port, child, () => out);
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    async stop() {
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => { socket.end(); resolve(true); });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port}: ${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface Cluster {
  readonly schema: string;
  readonly replicas: ServerProcess[];
  readonly nginx: Nginx;
  /** The first admin key, generated by the one replica that created it. */
  readonly adminKey: string;
  stop(): Promise<void>;
}

/** The environment each replica runs with: no admin key given, nginx on loopback trusted. */
export const REPLICA_ENV = { AUTHORITY_ADMIN_KEY: undefined, AUTHORITY_TRUSTED_PROXIES: "127.0.0.1" } as const;

/** The line main prints on the start that created the first admin key, and the key. */
export const FIRST_KEY = /First start: an admin key was created[^\n]*\n\s*\n\s*(aa_\S+)/;

/** Starts `count` replicas at once on an empty schema, then nginx in front of them. */
export async function startCluster(count = 3): Promise<Cluster> {
  const db = await postgresTarget.create();
  const shared = { url: db.url, schema: db.schema };
  const replicas = await Promise.all(Array.from({ length: count }, () => startServerProcess(shared, REPLICA_ENV)));
  // main prints a generated key just after the listening line; wait for it a moment.
  const printed = (): string[] => replicas.map((r) => FIRST_KEY.exec(r.output())?.[1]).filter((k) => k !== undefined);
  for (let waited = 0; printed().length === 0 && waited < 5_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  const nginx = await startNginx(replicas.map((r) => Number(new URL(r.baseUrl).port)));
  return {
    schema: db.schema!,
    replicas,
    nginx,
    adminKey: printed()[0] ?? "",
    async stop() {
      await nginx.stop();
      for (const replica of replicas) {
        replica.child.kill("SIGKILL");
        await replica.exited;
      }
      await db.dispose();
    },
  };
}
