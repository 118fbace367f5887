// A primary and a synchronous standby managed by pg_auto_failover (Debian's
// postgresql-15-auto-failover, `pg_autoctl`): monitor, primary and standby on this machine, each
// with its own port and data directory under a temporary directory. pg_autoctl refuses root, so a
// root test runs it as the `postgres` user.

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { accessSync, chownSync, constants, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { delimiter, join } from "node:path";
import pg from "pg";
import { freePort } from "./nginx.mjs";

function executable(name: string, extra: readonly string[] = []): string | undefined {
  for (const dir of [...(process.env["PATH"] ?? "").split(delimiter), ...extra]) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** PostgreSQL's own programs (pg_ctl, initdb), which Debian keeps off the PATH. */
function postgresBin(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "pg_ctl")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], "bin");
}

const BIN = postgresBin();
export const PG_AUTOCTL = executable("pg_autoctl", BIN === undefined ? [] : [BIN]);

/** Why the failover suite cannot run here, or null. */
export const autoFailoverProblem: string | null =
  PG_AUTOCTL === undefined
    ? "pg_autoctl is not installed (`apt-get install postgresql-15-auto-failover`; .ci/run installs it)"
    : BIN === undefined
      ? "PostgreSQL's programs (pg_ctl) are not under /usr/lib/postgresql"
      : null;

/**
 * The monitor's health checks, shortened from their defaults (5 s period, 20 s before a node is
 * unhealthy, 30 s to wait for a lost primary's demotion) so that the test's failover takes seconds.
 */
const FAST_MONITOR = [
  "pgautofailover.health_check_period = 1000",
  "pgautofailover.health_check_timeout = 1000",
  "pgautofailover.health_check_max_retries = 1",
  "pgautofailover.health_check_retry_delay = 200",
  "pgautofailover.node_considered_unhealthy_timeout = 2000",
  "pgautofailover.primary_demote_timeout = 3000",
];

export interface FailoverNode {
  readonly name: string;
  readonly port: number;
  readonly pgdata: string;
  child: ChildProcess;
}

export interface AutoFailover {
  readonly monitorPort: number;
  readonly nodes: readonly FailoverNode[];
  /** The server's database URL: both nodes, the primary wanted. */
  readonly url: string;
  /** The node the monitor reports as primary, by its port. */
  primaryPort(): Promise<number | undefined>;
  /** kill -9 of a node's postmaster and of its pg_autoctl keeper: the machine it runs on is gone. */
  crash(node: FailoverNode): void;
  /** kill -9 of a node's postmaster alone: its keeper starts it again. */
  killPostmaster(node: FailoverNode): void;
  stop(): Promise<void>;
}

async function query(url: string, sql: string): Promise<pg.QueryResult | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    return await client.query(sql);
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function until(what: string, deadlineMs: number, check: () => Promise<boolean>, log: () => string): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`pg_auto_failover: ${what} did not happen within ${deadlineMs} ms\n${log()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Starts the monitor, then the primary, then the standby, and waits until they are primary and secondary. */
export async function startAutoFailover(): Promise<AutoFailover> {
  if (autoFailoverProblem !== null) throw new Error(autoFailoverProblem);
  const dir = mkdtempSync(join(tmpdir(), "authority-failover-"));
  const root = userInfo().uid === 0;
  if (root) chownSync(dir, Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim()), -1);
  const env = {
    PATH: `${BIN}${delimiter}${process.env["PATH"] ?? ""}`,
    XDG_CONFIG_HOME: join(dir, "config"),
    XDG_DATA_HOME: join(dir, "data"),
  };
  const logs = new Map<string, string>();
  const run = (name: string, args: readonly string[]): ChildProcess => {
    const command = root
      ? ["runuser", "-u", "postgres", "--", "env", ...Object.entries(env).map(([k, v]) => `${k}=${v}`), PG_AUTOCTL!, ...args]
      : [PG_AUTOCTL!, ...args];
    const child = spawn(command[0]!, command.slice(1), {
      cwd: dir,
      env: { ...process.env, ...env },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    logs.set(name, "");
    const add = (chunk: unknown): void => {
      logs.set(name, (logs.get(name) ?? "") + String(chunk));
    };
    child.stdout!.on("data", add);
    child.stderr!.on("data", add);
    return child;
  };
  const log = (): string => [...logs].map(([name, text]) => `--- ${name}\n${text.split("\n").slice(-15).join("\n")}`).join("\n");
  const common = ["--hostname", "127.0.0.1", "--auth", "trust", "--no-ssl", "--run"];
  const monitorPort = await freePort();
  const monitorData = join(dir, "monitor");
  const children: ChildProcess[] = [
    run("monitor", ["create", "monitor", "--pgdata", monitorData, "--pgport", String(monitorPort), ...common]),
  ];
  const monitorUrl = `postgres://postgres@127.0.0.1:${monitorPort}/pg_auto_failover`;
  const nodes: FailoverNode[] = [];
  const stop = async (): Promise<void> => {
    for (const child of children) killGroup(child);
    for (const pgdata of [monitorData, ...nodes.map((n) => n.pgdata)]) killPostmaster(pgdata);
    await new Promise((r) => setTimeout(r, 300));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until("the monitor's start", 60_000, async () => (await query(monitorUrl, "SELECT 1")) !== undefined, log);
    for (const setting of FAST_MONITOR) await query(monitorUrl, `ALTER SYSTEM SET ${setting}`);
    await query(monitorUrl, "SELECT pg_reload_conf()");
    const states = async (): Promise<string> =>
      ((await query(monitorUrl, "SELECT string_agg(reportedstate::text, ',' ORDER BY nodeid) AS s FROM pgautofailover.node"))?.rows[0]?.s as
        | string
        | undefined) ?? "";
    const monitor = `postgres://autoctl_node@127.0.0.1:${monitorPort}/pg_auto_failover?sslmode=disable`;
    for (const [i, wanted] of [
      [1, /^single$/],
      [2, /^primary,secondary$/],
    ] as const) {
      const port = await freePort();
      const pgdata = join(dir, `node${i}`);
      const child = run(`node${i}`, [
        "create",
        "postgres",
        "--pgdata",
        pgdata,
        "--pgport",
        String(port),
        "--monitor",
        monitor,
        "--name",
        `node${i}`,
        ...common,
      ]);
      children.push(child);
      nodes.push({ name: `node${i}`, port, pgdata, child });
      await until(`node${i}'s join`, 90_000, async () => wanted.test(await states()), log);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    monitorPort,
    nodes,
    url: `postgres://postgres@${nodes.map((n) => `127.0.0.1:${n.port}`).join(",")}/postgres?target_session_attrs=read-write`,
    async primaryPort() {
      const row = (
        await query(
          monitorUrl,
          "SELECT nodeport FROM pgautofailover.node WHERE reportedstate IN ('primary', 'wait_primary', 'single') AND goalstate = reportedstate",
        )
      )?.rows[0];
      return row === undefined ? undefined : Number(row.nodeport);
    },
    crash(node) {
      killPostmaster(node.pgdata);
      killGroup(node.child);
    },
    killPostmaster(node) {
      killPostmaster(node.pgdata);
    },
    stop,
  };
}

/** SIGKILL to a process group started detached (runuser, pg_autoctl and what it started). */
function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** SIGKILL to the postmaster named in a data directory's postmaster.pid. */
function killPostmaster(pgdata: string): void {
  try {
    const pid = Number(readFileSync(join(pgdata, "postmaster.pid"), "utf8").split("\n")[0]);
    if (Number.isInteger(pid) && pid > 0) process.kill(pid, "SIGKILL");
  } catch {
    // No postmaster, or already gone.
  }
}
