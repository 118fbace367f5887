// PgBouncer in transaction mode in front of PostgreSQL, configured from docs/deploy/pgbouncer.ini
// with only the addresses, the authentication and the files changed: the replica suite's pooler.

import { spawn } from "node:child_process";
import { accessSync, chmodSync, chownSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./nginx.mjs";

export const PGBOUNCER_RECIPE = fileURLToPath(new URL("../../docs/deploy/pgbouncer.ini", import.meta.url));

function findPgbouncer(): string | undefined {
  const dirs = [...(process.env["PATH"] ?? "").split(delimiter), "/usr/sbin", "/usr/local/sbin"];
  for (const dir of dirs.filter((d) => d !== "")) {
    try {
      accessSync(join(dir, "pgbouncer"), constants.X_OK);
      return join(dir, "pgbouncer");
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** The pgbouncer executable, or undefined when it is not installed. */
export const PGBOUNCER = findPgbouncer();

/** Where PgBouncer forwards to: the real PostgreSQL, and the database and role it serves. */
export interface PoolerTarget {
  readonly host: string;
  readonly port: number;
  readonly dbname: string;
  readonly role: string;
}

/** Replaces the line matching `pattern` (which must be there) by `line`. */
function replaced(text: string, pattern: RegExp, line: string): string {
  if (!pattern.test(text)) throw new Error(`the PgBouncer recipe has no line ${pattern}`);
  return text.replace(pattern, line);
}

/**
 * The recipe with its database line, listen port, authentication and files replaced; every pool
 * setting stays as documented. Throws when the recipe lost a line it replaces.
 */
export function poolerConfig(recipe: string, target: PoolerTarget, listenPort: number, dir: string): string {
  let text = replaced(recipe, /^authority = host=.*$/m, `authority = host=${target.host} port=${target.port} dbname=${target.dbname}`);
  text = replaced(text, /^listen_port = \d+$/m, `listen_port = ${listenPort}`);
  text = replaced(text, /^auth_type = .*$/m, "auth_type = trust");
  text = replaced(text, /^auth_file = .*$/m, `auth_file = ${join(dir, "userlist.txt")}`);
  text = replaced(text, /^logfile = .*$/m, `logfile = ${join(dir, "pgbouncer.log")}`);
  text = replaced(text, /^pidfile = .*$/m, `pidfile = ${join(dir, "pgbouncer.pid")}`);
  if (!/^pool_mode = transaction$/m.test(text)) throw new Error("the PgBouncer recipe is not in transaction mode");
  return text;
}

export interface Pooler {
  /** The URL a replica connects to: the pooler's database `authority` as the target's role. */
  readonly url: string;
  readonly port: number;
  log(): string;
  stop(): Promise<void>;
}

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.end();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Starts PgBouncer in the foreground in a directory of its own. PgBouncer refuses to run as root:
 * started by root, it drops to the `postgres` user (`-u`), which then owns the directory.
 */
export async function startPooler(target: PoolerTarget): Promise<Pooler> {
  if (PGBOUNCER === undefined) throw new Error("pgbouncer is not installed");
  const dir = mkdtempSync(join(tmpdir(), "authority-pgbouncer-"));
  const port = await freePort();
  writeFileSync(join(dir, "pgbouncer.ini"), poolerConfig(readFileSync(PGBOUNCER_RECIPE, "utf8"), target, port, dir));
  writeFileSync(join(dir, "userlist.txt"), `"${target.role}" ""\n`);
  const root = userInfo().uid === 0;
  if (root) {
    const postgres = Number(/^postgres:[^:]*:(\d+):/m.exec(readFileSync("/etc/passwd", "utf8"))?.[1] ?? Number.NaN);
    if (Number.isNaN(postgres)) throw new Error("PgBouncer refuses root and there is no `postgres` user to run it as");
    for (const file of ["", "pgbouncer.ini", "userlist.txt"]) chownSync(join(dir, file), postgres, -1);
    chmodSync(dir, 0o700);
  }
  const child = spawn(PGBOUNCER, [...(root ? ["-u", "postgres"] : []), join(dir, "pgbouncer.ini")], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (chunk) => {
    out += String(chunk);
  });
  child.stderr.on("data", (chunk) => {
    out += String(chunk);
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const log = (): string => {
    try {
      return out + readFileSync(join(dir, "pgbouncer.log"), "utf8");
    } catch {
      return out;
    }
  };
  for (const deadline = Date.now() + 10_000; !(await listening(port)); await new Promise((r) => setTimeout(r, 50))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      const text = log();
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`pgbouncer did not listen on ${port}: ${text}`);
    }
  }
  return {
    url: `postgres://${target.role}@127.0.0.1:${port}/authority`,
    port,
    log,
    async stop() {
      child.kill("SIGINT");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
