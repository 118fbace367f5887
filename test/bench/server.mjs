// Server benchmark: durable POST /v1/authorize (SQLite, synchronous=FULL, group commit) with
// autocannon at 1, 10 and 50 connections, printed as a ratio to a no-op Express 5 route with
// express.json() and to a bare node:http handler measured in the same run; then the same against a
// large database. A benchmark, never a timed test: it prints, and fails only when answers are wrong.
//
//   npm run bench -- server                       (or: node test/bench/server.mjs)
//   BENCH_SECONDS=3                               seconds per measurement (default 4)
//   BENCH_TURNS=2                                 turns per connection count (default 4)
//   AUTHORITY_BENCH_DATABASE_URL=postgres://…    PostgreSQL for the PostgreSQL rows (default
//                                                 AUTHORITY_TEST_DATABASE_URL, then the local test
//                                                 database); each run uses a fresh schema and drops it
//   BENCH_ONLY=hostile                            only the hostile requests of issue 33 (policies up to
//                                                 4 KiB, args up to 64 KiB, chains of 32 and 64 links),
//                                                 which every run measures last on SQLite
//   BENCH_ONLY=sqlite|postgres|postgres-one|postgres-large
//                                                 only those rows (default every row; postgres-one:
//                                                 the one-replica PostgreSQL row alone; postgres-large:
//                                                 the one-replica PostgreSQL rows on the empty and the
//                                                 large database)
//   AUTHORITY_DATABASE_NAMED_STATEMENTS=off      PostgreSQL servers send every statement unnamed (decision 0313)
//   BENCH_CONNECTIONS=10,50                       the connection counts (default 1,10,50)
//   BENCH_BREAKERS=N                              the bench agents have N observing breakers (default 0)
//   BENCH_LARGE_GRANTS=N BENCH_LARGE_DECISIONS=N  the large databases, SQLite's and PostgreSQL's
//                                                 (default 1,000,000 grants and 10,000,000 decisions;
//                                                 SQLite: 3 to 5 minutes to generate and several GB in
//                                                 the temporary directory; PostgreSQL: a schema of
//                                                 its own, about as long and as large; 0 skips both;
//                                                 run directly, --grants=N --decisions=N do the same)
//
// Each row is the mean of several measurements taken in turns with the other servers' (see run());
// its p50 and p99 are those of every answer of those turns. Beside each authorize row: the server's
// CPU per request on its main thread and its worker, and its main thread's pauses for garbage
// collection (milliseconds per second of load, and the longest).
//
// PostgreSQL rows, when PostgreSQL answers: one replica, one replica on the large database (written
// into a schema migrated by the server's migrations, the same rows as SQLite's large database), and
// three replicas behind nginx configured from docs/deploy/nginx.conf (when nginx is installed), their
// requests spread over PG_GRANTS grants of one agent (the one grant of the SQLite rows would
// serialise every decision on one row lock across replicas). The three replicas share this
// machine's cores with nginx.
//
// The SQLite rows include one with five webhooks subscribed to every event type, delivering a
// backlog of events to a receiver that answers each after two seconds, so that every webhook holds
// its whole concurrency in flight throughout: printed as "with 5 webhooks ÷ without".
//
// Every server runs in a child process of its own, so autocannon never shares its event loop.
import autocannon from "autocannon";
import Database from "better-sqlite3";
import pg from "pg";
import express from "express";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
} from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { generateKeyPairSync, hash, randomBytes, sign } from "node:crypto";
import {
  canonicalJson,
  decisionStatement,
  GENESIS_HASH,
  linkHash,
  migrateDatabase,
  openStore,
  Signer,
  startServer,
} from "@agent-authority/server";
import { NGINX, startNginx } from "../replicas/nginx.mjs";
import { dropSchema, postgresProblem } from "../server/postgres-schemas.mjs";

/** A positive whole number from the environment, or the default; anything else stops the bench with the variable's name. */
function positive(name, fallback) {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number of at least 1, got \`${process.env[name]}\``);
  return value;
}
const BREAKERS = Number(process.env.BENCH_BREAKERS ?? 0);
const SECONDS = positive("BENCH_SECONDS", 4);
const TURNS = positive("BENCH_TURNS", 4);
/**
 * Which rows run: every row, SQLite's, PostgreSQL's, the one PostgreSQL replica's alone, or the one
 * PostgreSQL replica's on the empty and on the large database.
 */
const ONLY = process.env.BENCH_ONLY ?? "all";
if (!["all", "sqlite", "postgres", "postgres-one", "postgres-large", "hostile"].includes(ONLY)) {
  throw new Error(`BENCH_ONLY must be sqlite, postgres, postgres-one, postgres-large or hostile, got \`${ONLY}\``);
}
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? "1,10,50").split(",").map((text) => {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`BENCH_CONNECTIONS must list whole numbers of at least 1, got \`${process.env.BENCH_CONNECTIONS}\``);
  return value;
});
/** `--grants=N` and `--decisions=N` when run directly; the environment when run through the dispatcher. */
const flag = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const LARGE_GRANTS = Number(flag("grants") ?? process.env.BENCH_LARGE_GRANTS ?? 1_000_000);
const LARGE_DECISIONS = Number(flag("decisions") ?? process.env.BENCH_LARGE_DECISIONS ?? 10_000_000);
/** Whether the large databases are asked for (BENCH_LARGE_GRANTS and BENCH_LARGE_DECISIONS not 0). */
const LARGE = LARGE_GRANTS > 0 && LARGE_DECISIONS > 0;
const ADMIN_KEY = "aa_bench-admin-key-0123456789abcdefghijklmnop";
const ENVIRONMENT = "bench";
/**
 * One server key for every server of the run: the replicas of one schema must share it. Each
 * server runs in a child process of this script, which takes the parent's key from its environment.
 */
const SERVER_KEY = process.env.BENCH_SERVER_KEY ?? randomBytes(32).toString("base64url");
const CERTIFICATION = {
  basis: "benchmark",
  provenance_version: "model-1",
  manifest_hash: "sha256:aaaa",
  content_hash: "sha256:bbbb",
  checks: ["bench"],
};
const ATTESTATION = { manifest_hash: "sha256:aaaa", content_hash: "sha256:bbbb", provenance_version: "model-1" };
const PG_URL =
  process.env.AUTHORITY_BENCH_DATABASE_URL ?? process.env.AUTHORITY_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
/** Grants of one agent the PostgreSQL rows spread their requests over. */
const PG_GRANTS = 20;

// ---------------------------------------------------------------------------------------------
// Child mode: serve one kind of server and print its port.

async function serve(kind, dbPath, schema) {
  let port;
  if (kind === "bare") {
    const server = createServer((req, res) => {
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        JSON.parse(Buffer.concat(chunks).toString("utf8"));
        const body = '{"ok":true}';
        res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
        res.end(body);
      });
    });
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    port = server.address().port;
  } else if (kind === "express") {
    const app = express();
    app.use(express.json());
    app.post("/v1/noop", (req, res) => res.json({ ok: true, tool: req.body.tool }));
    const server = createServer(app);
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    port = server.address().port;
  } else {
    const server = await startServer({
      host: "127.0.0.1",
      port: 0,
      dataDir: "unused",
      databaseUrl: dbPath,
      databaseSchema: schema || undefined,
      environment: ENVIRONMENT,
      adminKey: ADMIN_KEY,
      serverKey: SERVER_KEY,
      autoApprovalCeilingMinor: Number.MAX_SAFE_INTEGER,
      logLevel: "warn",
      // The webhooks row subscribes a receiver on this machine.
      ...(kind === "authority-webhooks" ? { webhookAllowPrivate: true } : {}),
      // As the server reads it: `off` measures PostgreSQL without named statements (decision 0313).
      databaseNamedStatements: process.env.AUTHORITY_DATABASE_NAMED_STATEMENTS !== "off",
    });
    port = Number(new URL(server.baseUrl).port);
  }
  // The main thread's garbage collections, told on SIGUSR2: how many, their pauses in all, and the
  // longest since the last report. A pause of the main thread holds every request in flight.
  const gc = { count: 0, pauseMs: 0, longestMs: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.count += 1;
      gc.pauseMs += entry.duration;
      gc.longestMs = Math.max(gc.longestMs, entry.duration);
    }
  }).observe({ entryTypes: ["gc"] });
  process.on("SIGUSR2", () => {
    process.stdout.write(`GC ${gc.count} ${gc.pauseMs} ${gc.longestMs}\n`);
    gc.longestMs = 0;
  });
  // A clean exit on SIGTERM, so that `node --cpu-prof` can write its profile.
  process.on("SIGTERM", () => process.exit(0));
  process.stdout.write(`PORT ${port}\n`);
}

// ---------------------------------------------------------------------------------------------
// Parent mode.

/** A server in a child process: its base URL, and `gc()`, its main thread's collections so far (see serve()). */
function startChild(kind, dbPath = "", schema = "") {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--serve", kind, dbPath, schema], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, BENCH_SERVER_KEY: SERVER_KEY },
  });
  const reports = [];
  const gc = () =>
    new Promise((resolve) => {
      reports.push(resolve);
      child.kill("SIGUSR2");
    });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += String(chunk);
      for (let end = out.indexOf("\n"); end !== -1; end = out.indexOf("\n")) {
        const line = out.slice(0, end);
        out = out.slice(end + 1);
        const port = /^PORT (\d+)$/.exec(line);
        if (port) resolve({ child, base: `http://127.0.0.1:${port[1]}`, gc });
        const collected = /^GC (\S+) (\S+) (\S+)$/.exec(line);
        if (collected) reports.shift()?.({ count: Number(collected[1]), pauseMs: Number(collected[2]), longestMs: Number(collected[3]) });
      }
    });
    child.on("exit", (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
}

async function stop(server) {
  server.child.removeAllListeners("exit");
  server.child.kill("SIGKILL");
  await new Promise((r) => server.child.once("exit", r));
}

async function call(base, path, key, body) {
  const response = await fetch(`${base}/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await response.json();
  if (response.status >= 300) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** An agent with a key and `grants` grants it may use without limit; answers the authorize requests, one per grant. */
async function prepare(base, grants = 1) {
  const agent = await call(base, "/agents", ADMIN_KEY, { name: `bench-${Date.now()}` });
  await call(base, `/agents/${agent.id}/certification`, ADMIN_KEY, CERTIFICATION);
  const key = await call(base, "/keys", ADMIN_KEY, {
    identity: `bench-agent-${agent.id}`,
    kind: "service",
    roles: ["agent"],
    agent_id: agent.id,
  });
  // With BENCH_BREAKERS=N the agent has N observing breakers, on one contract whose window is
  // moved on, and whose breakers are evaluated, after every decision (decision 0321).
  if (BREAKERS > 0) {
    const contract = await call(base, `/agents/${agent.id}/contracts`, ADMIN_KEY, {
      metric: "out_of_scope_rate",
      ceiling: 0.5,
      window_decisions: 1_000,
    });
    for (let i = 0; i < BREAKERS; i += 1)
      await call(base, `/agents/${agent.id}/breakers`, ADMIN_KEY, { contract_id: contract.id, action: i % 2 === 0 ? "notify" : "revoke" });
  }
  const bodies = [];
  for (let i = 0; i < grants; i += 1) {
    const grant = await call(base, "/grants", ADMIN_KEY, {
      agent_id: agent.id,
      principal_type: "service",
      principal_id: "bench",
      scope: { tool: ["payments.*"] },
      ttl_hours: 24,
      policy: "amount_minor <= 100000",
    });
    const body = { grant_id: grant.id, tool: "payments.send", attestation: ATTESTATION, args: { invoice: "INV-1" } };
    const first = await call(base, "/authorize", key.key, body);
    if (first.outcome !== "allow") throw new Error(`the bench grant does not allow: ${JSON.stringify(first)}`);
    bodies.push(body);
  }
  return { key: key.key, body: bodies[0], bodies };
}

/**
 * CPU time (µs) each thread of process `pid` has used, by thread id, from /proc; empty where /proc
 * is not there. The server's main thread has the process's id; its worker is the busiest other one.
 */
function threadCpu(pid) {
  const perThread = new Map();
  if (pid === undefined || !existsSync(`/proc/${pid}/task`)) return perThread;
  const tick = 1e6 / 100; // USER_HZ is 100 on Linux
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      perThread.set(Number(tid), (Number(fields[11]) + Number(fields[12])) * tick);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return perThread;
}

/**
 * The PostgreSQL backends serving the server process `pid` (the driver names its connections
 * `agent-authority pid N`), when PostgreSQL runs on this machine; empty otherwise.
 */
async function databaseBackends(pid) {
  if (pid === undefined) return [];
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [`agent-authority pid ${pid}`]);
    return rows.map((row) => row.pid).filter((backend) => existsSync(`/proc/${backend}/stat`));
  } finally {
    await client.end();
  }
}

/** CPU time (µs) each process used so far, by process id, from /proc. */
function processCpu(pids) {
  const used = new Map();
  for (const pid of pids) {
    const cpu = threadCpu(pid).get(pid);
    if (cpu !== undefined) used.set(pid, cpu);
  }
  return used;
}

/**
 * The load at `connections`; with `server`, also the server's CPU per request on its main thread
 * and its busiest other thread, its main thread's pauses for garbage collection, and, on a local
 * PostgreSQL, the CPU its database backends spent per request.
 */
async function measure(url, connections, headers, body, server, bodies = [body]) {
  const pid = server?.child?.pid;
  const batchesBefore = server === undefined ? undefined : await groupCommits(url);
  const gcBefore = await server?.gc?.();
  const postgres = server?.postgres === true;
  const backendsBefore = postgres ? processCpu(await databaseBackends(pid)) : new Map();
  const before = threadCpu(pid);
  // Several bodies are sent in turn, each request the next one.
  const texts = bodies.map((b) => JSON.stringify(b));
  let next = 0;
  const spread =
    texts.length > 1 ? { requests: [{ setupRequest: (request) => ({ ...request, body: texts[next++ % texts.length] }) }] } : {};
  const load = autocannon({
    url,
    method: "POST",
    connections,
    duration: SECONDS,
    headers: { "content-type": "application/json", ...headers },
    body: texts[0],
    ...spread,
  });
  // Every answer's time, so that a row's percentiles are those of all the answers of its turns.
  const times = [];
  load.on("response", (_client, _status, _bytes, ms) => times.push(ms));
  const result = await load;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers and ${result.errors} errors`);
  const used = [...threadCpu(pid)].map(([tid, cpu]) => [tid, (cpu - (before.get(tid) ?? 0)) / result.requests.total]);
  const main = used.find(([tid]) => tid === pid)?.[1];
  const other = used.filter(([tid]) => tid !== pid).sort((a, b) => b[1] - a[1])[0]?.[1];
  // Backends that connected during the load count from zero; one that left did no work meanwhile.
  const backendsAfter = postgres ? processCpu(await databaseBackends(pid)) : new Map();
  const databaseCpu =
    postgres && backendsAfter.size > 0
      ? [...backendsAfter].reduce((sum, [backend, cpu]) => sum + cpu - (backendsBefore.get(backend) ?? 0), 0) / result.requests.total
      : undefined;
  const gcAfter = await server?.gc?.();
  const gc =
    gcBefore === undefined || gcAfter === undefined
      ? undefined
      : { msPerSecond: (gcAfter.pauseMs - gcBefore.pauseMs) / SECONDS, longestMs: gcAfter.longestMs };
  const batchesAfter = server === undefined ? undefined : await groupCommits(url);
  const batches = batchesAfter === undefined || batchesBefore === undefined ? 0 : batchesAfter.count - batchesBefore.count;
  // The transactions one group commit took together: the decisions signed with one signature.
  const batchSize = batches > 0 ? (batchesAfter.sum - batchesBefore.sum) / batches : undefined;
  return { rps: result.requests.average, times, mainCpu: main, workerCpu: other, databaseCpu, gc, batchSize };
}

/** The server's group-commit batches so far (GET /v1/metrics): how many, and the transactions they held; undefined when unread. */
async function groupCommits(url) {
  try {
    const text = await (await fetch(new URL("/v1/metrics", url))).text();
    const read = (name) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN);
    const counted = { sum: read("authority_group_commit_batch_size_sum"), count: read("authority_group_commit_batch_size_count") };
    return Number.isFinite(counted.sum) && Number.isFinite(counted.count) ? counted : undefined;
  } catch {
    return undefined;
  }
}

const cpu = (us) => (us === undefined ? "n/a" : us.toFixed(0));

function table(title, rows) {
  process.stdout.write(`\n${title}\n`);
  process.stdout.write(
    "conn | bare node:http req/s | express no-op req/s | authorize req/s | p50 ms | p99 ms | ÷ express | ÷ bare | CPU µs/req: main, worker, database | main GC: ms/s, longest ms\n",
  );
  for (const r of rows) {
    process.stdout.write(
      `${String(r.connections).padStart(4)} | ${r.bare.rps.toFixed(0).padStart(19)} | ${r.express.rps.toFixed(0).padStart(19)} | ` +
        `${r.authorize.rps.toFixed(0).padStart(15)} | ${r.authorize.p50.toFixed(1).padStart(6)} | ${r.authorize.p99.toFixed(1).padStart(6)} | ` +
        `${(r.authorize.rps / r.express.rps).toFixed(2).padStart(8)}× | ${(r.authorize.rps / r.bare.rps).toFixed(2).padStart(5)}× | ` +
        `${cpu(r.authorize.mainCpu)}, ${cpu(r.authorize.workerCpu)}, ${cpu(r.authorize.databaseCpu)} | ` +
        `${r.authorize.gcMsPerSecond === undefined ? "n/a" : `${r.authorize.gcMsPerSecond.toFixed(1)}, ${r.authorize.gcLongestMs.toFixed(1)}`}\n`,
    );
  }
  const range = (ratios) => `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×`;
  process.stdout.write(
    `÷ express turn by turn (${TURNS} turns of ${SECONDS} s): ${rows.map((r) => `${r.connections} conn ${range(r.authorize.turnRatios)}`).join(", ")}\n`,
  );
}

/** The one agent of the large database's grants. */
const BULK_AGENT = "agt_0000000000bu1kbu1kbu1kbu1k";
/**
 * The values of a generated grant, as SQL text shared by both databases: an unlimited root grant
 * of BULK_AGENT, given its id (twice: it is its own root), agent, issue and expiry as SQL
 * expressions (placeholders on SQLite, columns of the rows sent on PostgreSQL).
 */
const BULK_GRANT_COLUMNS = `id, root_id, parent_id, depth, agent_id, principal_type, principal_id, scope,
    budget_amount_minor, budget_currency, budget_count, ttl_hours, conditions, policy, delegation_policy, delegation_depth_max, audience,
    enforcement_mode, status, approval_required, issued_at, expires_at, issued_by, approved_by, approved_at, family_id, family_version,
    revoked_at, revoked_by, revocation_reason`;
const bulkGrantValues = (
  id,
  agent,
  issuedAt,
  expiresAt,
) => `${id}, ${id}, NULL, 0, ${agent}, 'service', 'bulk', '{"tool":["payments.*"]}', 100000, 'EUR', NULL, 24,
    '{"clean_context":false}', NULL, 'none', NULL, NULL, 'observe', 'active', 0, ${issuedAt}, ${expiresAt}, 'bench', NULL, NULL, NULL, NULL, NULL, NULL, NULL`;

/**
 * The large database's grants in order, each with its sealed decisions (hash chain intact, from
 * the genesis hash): `grants` grants sharing `decisions` decisions, as many per grant as divide
 * evenly (at least one), so that the last grants may have none. Every decision is an allow without
 * an amount, so, as on the server, it places no hold and writes no charge; its breaker signal is 0.
 * Both databases' generators write exactly these rows.
 */
function* bulkGrants(grants, decisions, now) {
  const perGrant = Math.max(1, Math.floor(decisions / grants));
  const id = (prefix, n) => `${prefix}_${n.toString(32).padStart(26, "0")}`;
  const decidedAt = now - 1_000;
  let written = 0;
  for (let g = 0; g < grants; g += 1) {
    const grantId = id("grt", g);
    const sealed = [];
    let prev = GENESIS_HASH;
    for (let seq = 1; seq <= perGrant && written < decisions; seq += 1) {
      const ledgerId = id("led", written);
      const record = canonicalJson({
        ledger_id: ledgerId,
        tree_id: grantId,
        seq,
        kind: "decision",
        grant_id: grantId,
        agent_id: BULK_AGENT,
        outcome: "allow",
        created_at: decidedAt,
        request: { grant_id: grantId, tool: "payments.send" },
        reason_code: "decision.allow",
        mode: "observe",
      });
      const hash = linkHash(prev, record);
      sealed.push({ id: ledgerId, seq, record, prev_hash: prev, hash, created_at: decidedAt });
      prev = hash;
      written += 1;
    }
    yield { id: grantId, issued_at: now - 3_600_000, expires_at: now + 86_400_000, decisions: sealed };
  }
}

/**
 * Writes the large database (bulkGrants) into a migrated SQLite file: grants, sealed decisions,
 * each decision's breaker signal, and each grant's uses counted as the server counts them.
 * Answers the decisions written.
 */
function generate(dbPath, grants, decisions) {
  const db = new Database(dbPath);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const now = Date.now();
  db.prepare("INSERT INTO agents (id, name, description, created_at, created_by) VALUES (?, ?, NULL, ?, 'bench')").run(
    BULK_AGENT,
    "bulk-agent",
    now,
  );
  const insertGrant = db.prepare(`INSERT INTO grants (${BULK_GRANT_COLUMNS}) VALUES (${bulkGrantValues("?", "?", "?", "?")})`);
  const insertLedger = db.prepare(
    "INSERT INTO ledger (id, tree_id, seq, kind, grant_id, agent_id, outcome, record, prev_hash, hash, created_at) VALUES (?, ?, ?, 'decision', ?, ?, 'allow', ?, ?, ?, ?)",
  );
  // Each decision's breaker signal (0: allow), as the server writes it in the decision's transaction.
  const insertSignal = db.prepare("INSERT INTO decision_signals (ledger_id, agent_id, at, signal) VALUES (?, ?, ?, 0)");
  const insertTotals = db.prepare("INSERT INTO grant_totals (grant_id, uses, settled_minor) VALUES (?, ?, 0)");
  let written = 0;
  const batch = db.transaction((rows) => {
    for (const grant of rows) {
      insertGrant.run(grant.id, grant.id, BULK_AGENT, grant.issued_at, grant.expires_at);
      for (const d of grant.decisions) {
        insertLedger.run(d.id, grant.id, d.seq, grant.id, BULK_AGENT, d.record, d.prev_hash, d.hash, d.created_at);
        insertSignal.run(d.id, BULK_AGENT, d.created_at);
      }
      insertTotals.run(grant.id, grant.decisions.length);
      written += grant.decisions.length;
    }
  });
  let rows = [];
  for (const grant of bulkGrants(grants, decisions, now)) {
    rows.push(grant);
    if (rows.length === 10_000) {
      batch(rows);
      rows = [];
    }
  }
  if (rows.length > 0) batch(rows);
  db.close();
  return written;
}

/** Decisions sent to PostgreSQL per statement of the generator (with their grants). */
const PG_BULK_DECISIONS = 10_000;

/**
 * Writes the large database (bulkGrants) into a migrated PostgreSQL schema, the same rows as
 * generate() writes into SQLite. One statement per batch of about PG_BULK_DECISIONS decisions,
 * inserting into the four tables by data-modifying CTEs, on one connection; the next batch is
 * hashed while PostgreSQL writes the one before. Each column of a batch is sent as one text of its
 * values separated by line breaks and split by `string_to_array`: none of the values holds one (a
 * record is canonical JSON, which escapes them), and it is parsed several times faster at both
 * ends than a text array of the same JSON records. Answers the decisions written and the bytes
 * the schema's tables and indexes take after loading.
 */
async function generatePostgres(schema, grants, decisions) {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`SET search_path TO ${schema}`);
    // This session alone: its commits do not wait for the WAL flush (a crash of the database
    // while generating loses a bench schema, nothing else), and, as in generate() (SQLite checks
    // no foreign key without `PRAGMA foreign_keys`), the rows are not checked against their
    // foreign keys: the generator writes the rows they refer to itself. A check from every
    // signal would also lock, and so rewrite, every ledger row it refers to.
    await client.query("SET synchronous_commit = off");
    // Only a superuser may: without it, the foreign keys are checked (slower, same rows).
    await client.query("SET session_replication_role = replica").catch(() => undefined);
    const now = Date.now();
    await client.query("INSERT INTO agents (id, name, description, created_at, created_by) VALUES ($1, 'bulk-agent', NULL, $2, 'bench')", [
      BULK_AGENT,
      now,
    ]);
    const column = (n, type = "text") => `string_to_array($${n}, E'\\n')${type === "text" ? "" : `::${type}[]`}`;
    // Grants: $1 ids, $2 issue, $3 expiry, $4 uses. Decisions: $5 ids, $6 trees, $7 seqs, $8
    // records, $9 previous hashes, $10 hashes, $11 times. $12 the agent.
    const statement = `WITH g AS (
        INSERT INTO grants (${BULK_GRANT_COLUMNS})
          SELECT ${bulkGrantValues("u.id", "$12", "u.issued_at", "u.expires_at")}
            FROM unnest(${column(1)}, ${column(2, "bigint")}, ${column(3, "bigint")}) AS u(id, issued_at, expires_at)
      ), t AS (
        INSERT INTO grant_totals (grant_id, uses, settled_minor) SELECT u.id, u.uses, 0 FROM unnest(${column(1)}, ${column(4, "bigint")}) AS u(id, uses)
      ), l AS (
        INSERT INTO ledger (id, tree_id, seq, kind, grant_id, agent_id, outcome, record, prev_hash, hash, created_at)
          SELECT u.id, u.tree_id, u.seq, 'decision', u.tree_id, $12, 'allow', u.record, u.prev_hash, u.hash, u.created_at
            FROM unnest(${column(5)}, ${column(6)}, ${column(7, "bigint")}, ${column(8)}, ${column(9)}, ${column(10)}, ${column(11, "bigint")})
              AS u(id, tree_id, seq, record, prev_hash, hash, created_at)
      )
      -- Each decision's breaker signal (0: allow), in the order the decisions were sealed.
      INSERT INTO decision_signals (ledger_id, agent_id, at, signal)
        SELECT u.id, $12, u.at, 0 FROM unnest(${column(5)}, ${column(11, "bigint")}) WITH ORDINALITY AS u(id, at, n) ORDER BY u.n`;
    let written = 0;
    let sending = Promise.resolve();
    let batch = [];
    const send = (rows) => {
      const sealed = rows.flatMap((grant) => grant.decisions.map((d) => ({ ...d, tree_id: grant.id })));
      written += sealed.length;
      const lines = (list, name) => list.map((row) => row[name]).join("\n");
      return client.query(statement, [
        lines(rows, "id"),
        lines(rows, "issued_at"),
        lines(rows, "expires_at"),
        rows.map((grant) => grant.decisions.length).join("\n"),
        lines(sealed, "id"),
        lines(sealed, "tree_id"),
        lines(sealed, "seq"),
        lines(sealed, "record"),
        lines(sealed, "prev_hash"),
        lines(sealed, "hash"),
        lines(sealed, "created_at"),
        BULK_AGENT,
      ]);
    };
    let decisionsInBatch = 0;
    for (const grant of bulkGrants(grants, decisions, now)) {
      // A turn of the event loop now and then, so that the batch in flight is written out to
      // PostgreSQL while the next one is hashed.
      if (batch.length % 200 === 199) await new Promise((resolve) => setImmediate(resolve));
      batch.push(grant);
      decisionsInBatch += Math.max(1, grant.decisions.length);
      if (decisionsInBatch >= PG_BULK_DECISIONS) {
        await sending;
        sending = send(batch);
        batch = [];
        decisionsInBatch = 0;
      }
    }
    await sending;
    if (batch.length > 0) await send(batch);
    // A freshly loaded table has no statistics until autovacuum's ANALYZE comes round, and the
    // planner would guess the decision path's plans from nothing. VACUUM besides: ten million
    // inserted rows would otherwise start autovacuum's pass over the tables in the middle of the
    // measurements; after it every page is marked all-visible, as in a database that has run.
    await client.query("VACUUM (ANALYZE)");
    // Written without waiting for flushes, gigabytes of WAL and dirty pages are still to be
    // written; a checkpoint puts them on disk before anything is measured (as the fsync of the
    // SQLite file does). Only a superuser or pg_checkpoint may; without it the measurements may
    // meet the writes.
    await client.query("CHECKPOINT").catch(() => undefined);
    const size = await client.query(
      `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind = 'r'`,
      [schema],
    );
    return { written, bytes: Number(size.rows[0].bytes) };
  } finally {
    await client.end();
  }
}

/** The `q` quantile (0 to 1) of sorted numbers, by the nearest rank. */
function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** The mean of measurements of the same row: rates and CPU averaged, latency over every answer of them. */
function mean(turns) {
  const avg = (pick) => (turns.some((t) => pick(t) === undefined) ? undefined : turns.reduce((sum, t) => sum + pick(t), 0) / turns.length);
  const times = Float64Array.from(turns.flatMap((t) => t.times)).sort();
  return {
    rps: avg((t) => t.rps),
    p50: quantile(times, 0.5),
    p99: quantile(times, 0.99),
    mainCpu: avg((t) => t.mainCpu),
    workerCpu: avg((t) => t.workerCpu),
    databaseCpu: avg((t) => t.databaseCpu),
    batchSize: avg((t) => t.batchSize),
    gcMsPerSecond: avg((t) => t.gc?.msPerSecond),
    gcLongestMs: turns.some((t) => t.gc === undefined) ? undefined : Math.max(...turns.map((t) => t.gc.longestMs)),
    // Each turn's ratio to the Express route measured in the same turn: how far one turn can stray.
    turnRatios: turns.map((t) => t.turnRatio).filter((r) => r !== undefined),
  };
}

/**
 * Measures the baselines and every authority server at each connection count, in turns (TURNS
 * of them): bare, Express, then the authority servers, in one order and then the other (empty,
 * large, then large, empty, …), so that a slower minute of the machine or the disk weighs on all
 * of them alike: every ratio compares measurements of the same moments.
 */
async function run(databases) {
  const bare = await startChild("bare");
  const exp = await startChild("express");
  const servers = [];
  try {
    for (const database of databases) {
      const server =
        database.start === undefined
          ? await startChild(database.webhooks === undefined ? "authority" : "authority-webhooks", database.path)
          : await database.start();
      servers.push({ title: database.title, server });
    }
    const requests = [];
    for (const [i, { server }] of servers.entries()) {
      requests.push(await prepare(server.base, databases[i].grants ?? 1));
      if (databases[i].webhooks !== undefined) await subscribeSlowly(server.base, databases[i].webhooks);
    }
    const rows = servers.map(() => []);
    for (const connections of CONNECTIONS) {
      const bareTurns = [];
      const expressTurns = [];
      const turns = servers.map(() => []);
      for (let round = 0; round < TURNS; round += 1) {
        bareTurns.push(await measure(`${bare.base}/v1/noop`, connections, {}, requests[0].body));
        const express = await measure(`${exp.base}/v1/noop`, connections, {}, requests[0].body);
        expressTurns.push(express);
        // A B, then B A: neither database is always measured first.
        const order = round % 2 === 0 ? [...servers.keys()] : [...servers.keys()].reverse();
        for (const i of order) {
          const { server } = servers[i];
          const { key, body, bodies } = requests[i];
          const measured = await measure(
            `${server.base}/v1/authorize`,
            connections,
            { authorization: `Bearer ${key}` },
            body,
            server,
            bodies,
          );
          turns[i].push({ ...measured, turnRatio: measured.rps / express.rps });
        }
      }
      const bareRow = mean(bareTurns);
      const expressRow = mean(expressTurns);
      for (const [i, measured] of turns.entries())
        rows[i].push({ connections, bare: bareRow, express: expressRow, authorize: mean(measured) });
    }
    for (const [i, { title }] of servers.entries()) table(title, rows[i]);
    return rows;
  } finally {
    await Promise.all([stop(bare), stop(exp), ...servers.map(({ server }) => (server.stop === undefined ? stop(server) : server.stop()))]);
  }
}

/**
 * The disk's latency for one durable append (4 KiB, then fdatasync), median and 99th percentile
 * of 1,000, in the bench's own directory: the floor under every durable answer. A client with one
 * request in flight pays a whole commit (several pages, and the sync) for each decision, on top of
 * the request's path; and an answer that waits for one or two syncs has the disk's tail in its own.
 */
function syncLatencyMs(dir) {
  const file = join(dir, "sync-probe");
  const fd = openSync(file, "w");
  const block = Buffer.alloc(4096, 1);
  const times = [];
  try {
    for (let i = 0; i < 1_000; i += 1) {
      writeSync(fd, block);
      const start = performance.now();
      fdatasyncSync(fd);
      times.push(performance.now() - start);
    }
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  times.sort((a, b) => a - b);
  return { p50: times[times.length >> 1], p99: times[Math.floor(times.length * 0.99)] };
}

/** Webhooks in the webhooks row, and what keeps them busy while authorize is measured. */
const WEBHOOKS = 5;
const WEBHOOK_BACKLOG_GRANTS = 300;
const SLOW_RECEIVER_DELAY_MS = 2_000;

/** A receiver that answers every delivery after SLOW_RECEIVER_DELAY_MS: deliveries are in flight the whole time. */
async function startSlowReceiver() {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => setTimeout(() => res.writeHead(204).end(), SLOW_RECEIVER_DELAY_MS));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * WEBHOOKS webhooks subscribed to every event type at the slow receiver, and a backlog of events
 * for them (grants issued), so that every webhook holds its whole concurrency in flight at the
 * slow receiver throughout the measurements.
 */
async function subscribeSlowly(base, receiverUrl) {
  const types = [
    "grant.issued",
    "grant.approved",
    "grant.delegated",
    "grant.revoked",
    "grant.enforcement_changed",
    "decision.gated",
    "decision.approved",
    "certificate.issued",
    "certificate.revoked",
    "contract.breached",
    "breaker.tripped",
    "breaker.armed",
    "finding.raised",
  ];
  for (let i = 0; i < WEBHOOKS; i += 1) await call(base, "/webhooks", ADMIN_KEY, { url: `${receiverUrl}/${i}`, event_types: types });
  const agent = await call(base, "/agents", ADMIN_KEY, { name: `bench-backlog-${Date.now()}` });
  for (let i = 0; i < WEBHOOK_BACKLOG_GRANTS; i += 1) {
    await call(base, "/grants", ADMIN_KEY, {
      agent_id: agent.id,
      principal_type: "service",
      principal_id: "bench",
      scope: { tool: ["x.*"] },
      enforcement_mode: "observe",
    });
  }
}

/** Three replicas on one schema behind nginx: a server as run() measures it, without CPU or GC figures. */
async function startReplicas(schema) {
  // Migrated first, so that the replicas start on a current schema (starting together is tested elsewhere).
  await migrateDatabase(PG_URL, { schema });
  const replicas = [];
  try {
    for (let i = 0; i < 3; i += 1) replicas.push(await startChild("authority", PG_URL, schema));
    const nginx = await startNginx(replicas.map((r) => Number(new URL(r.base).port)));
    return {
      base: nginx.baseUrl.replace(/\/v1$/, ""),
      async stop() {
        await nginx.stop();
        await Promise.all(replicas.map(stop));
      },
    };
  } catch (error) {
    await Promise.all(replicas.map(stop));
    throw error;
  }
}

/**
 * The PostgreSQL rows that can run here, each on a fresh schema (`schemas` collects them for
 * dropping, each before anything is written to it): one replica on an empty schema, one on the
 * large database, three replicas behind nginx. Each is named for main(): `pg-one`, `pg-large`, `pg-three`.
 */
async function postgresDatabases(schemas) {
  const problem = await postgresProblem(PG_URL);
  if (problem !== null) {
    process.stdout.write(`PostgreSQL rows SKIPPED: PostgreSQL is unreachable at ${PG_URL}: ${problem}\n`);
    return [];
  }
  const fresh = () => {
    const schema = `authority_bench_${randomBytes(6).toString("hex")}`;
    schemas.push(schema);
    return schema;
  };
  const one = fresh();
  /** A server on a PostgreSQL schema, whose database backends' CPU the measurements read. */
  const onPostgres = async (schema) => ({ ...(await startChild("authority", PG_URL, schema)), postgres: true });
  const databases = [
    { name: "pg-one", title: `PostgreSQL, one replica (${PG_GRANTS} grants)`, grants: PG_GRANTS, start: () => onPostgres(one) },
  ];
  if (ONLY === "postgres-one") return databases;
  if (LARGE) {
    const large = fresh();
    // The server's own migrations, then the rows; the replica starts on a current schema.
    await migrateDatabase(PG_URL, { schema: large });
    const started = performance.now();
    const { written, bytes } = await generatePostgres(large, LARGE_GRANTS, LARGE_DECISIONS);
    process.stdout.write(
      `PostgreSQL large database: ${LARGE_GRANTS.toLocaleString("en")} grants, ${written.toLocaleString("en")} decisions ` +
        `(generated, vacuumed, analysed and checkpointed in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
        `tables and indexes ${(bytes / 2 ** 30).toFixed(2)} GiB)\n`,
    );
    databases.push({
      name: "pg-large",
      title: `PostgreSQL, one replica, large database (${PG_GRANTS} grants of a new agent)`,
      grants: PG_GRANTS,
      start: () => onPostgres(large),
    });
  }
  if (ONLY === "postgres-large") return databases;
  if (NGINX === undefined) process.stdout.write("PostgreSQL three-replica rows SKIPPED: nginx is not installed\n");
  else {
    const three = fresh();
    databases.push({
      name: "pg-three",
      title: `PostgreSQL, three replicas behind nginx (${PG_GRANTS} grants; CPU and GC of the replicas not shown)`,
      grants: PG_GRANTS,
      start: () => startReplicas(three),
    });
  }
  return databases;
}

/**
 * What signing adds to one decision, measured alone in this process: the statement (with the hash
 * of the args' canonical JSON), the signature and its member of the answer's text, as the
 * authorize path does them. `batch` decisions are signed together (decision 1901): their leaves,
 * the tree, one Ed25519 signature and each answer's member; `batch` 0 is the first form, one
 * Ed25519 signature per decision. Answers microseconds of CPU per decision (the median of five
 * runs), CPU time like the server's figures beside it, so that a loaded machine's waits are not counted.
 */
async function signingCostUs(batch) {
  const store = openStore(":memory:");
  await store.migrate(Date.now());
  const signer = new Signer(randomBytes(32));
  await signer.load(store, Date.now());
  await store.close();
  const body = {
    grant_id: "grt_01jz0000000000000000000000",
    tool: "payments.send",
    amount_minor: 1200,
    currency: "EUR",
    args: { to: "ACME", memo: "invoice 42" },
    nonce: "Zm9vYmFyYmF6cXV4cXV1eA",
  };
  // The args' canonical text is the sealed record's, written for the request whether signed or not (decision 1948).
  const argsText = canonicalJson(body.args);
  const statement = () =>
    decisionStatement("led_01jz0000000000000000000000", "allow", "agt_01jz0000000000000000000000", body, Date.now(), argsText);
  const size = Math.max(1, batch);
  const decisions = Math.ceil(2_000 / size) * size;
  const runs = [];
  for (let run = 0; run < 5; run += 1) {
    const started = process.cpuUsage();
    for (let i = 0; i < decisions; i += size) {
      if (batch === 0) JSON.stringify(signer.sign(statement()));
      else signer.signAnswerTexts(Array.from({ length: size }, statement));
    }
    const used = process.cpuUsage(started);
    runs.push((used.user + used.system) / decisions);
  }
  return runs.sort((a, b) => a - b)[2];
}

/**
 * The part of signing per answer that the answer format fixes (decision 1946), each part measured
 * alone in this process: the hash of the args' canonical text, the statement's text, its leaf hash,
 * its share of the tree's interior hashes and of the batch's one Ed25519 signature. Answers
 * microseconds of CPU per answer at batches of `batch`, the median of five runs.
 */
function signingFloorUs(batch) {
  const { privateKey } = generateKeyPairSync("ed25519");
  const body = { tool: "payments.send", amount_minor: 1200, currency: "EUR", args: { to: "ACME", memo: "invoice 42" } };
  const statement = decisionStatement(
    "led_01jz0000000000000000000000",
    "allow",
    "agt_01jz0000000000000000000000",
    { grant_id: "grt_01jz0000000000000000000000", ...body },
    Date.now(),
  );
  const argsText = canonicalJson(body.args);
  const node = Buffer.alloc(65, 1);
  const signed = Buffer.from(`agent-authority answer batch v2\n${batch}\n${"A".repeat(43)}\n`);
  const perCall = (n, fn) => {
    const started = process.cpuUsage();
    for (let i = 0; i < n; i += 1) fn();
    const used = process.cpuUsage(started);
    return (used.user + used.system) / n;
  };
  const runs = [];
  for (let run = 0; run < 5; run += 1) {
    const text = perCall(20_000, () => JSON.stringify(statement));
    const leaf = perCall(20_000, () => hash("sha256", `\0${JSON.stringify(statement)}`, "buffer")) - text;
    const args = perCall(20_000, () => hash("sha256", argsText, "hex"));
    const interior = (perCall(20_000, () => hash("sha256", node, "buffer")) * (batch - 1)) / batch;
    const signature = perCall(500, () => sign(null, signed, privateKey)) / batch;
    runs.push(text + leaf + args + interior + signature);
  }
  return runs.sort((a, b) => a - b)[2];
}

/** Signing's share of the server's CPU per authorize at each connection count of `rows`: the first form's and the batch's, at the batches measured. */
async function signingShares(rows) {
  const single = await signingCostUs(0);
  const parts = [];
  for (const r of rows) {
    const perDecision = (r.authorize.mainCpu ?? 0) + (r.authorize.workerCpu ?? 0);
    if (perDecision <= 0) {
      parts.push(`${r.connections} conn n/a`);
      continue;
    }
    const size = r.authorize.batchSize ?? 1;
    const batched = await signingCostUs(Math.max(1, Math.round(size)));
    const floor = signingFloorUs(Math.max(1, Math.round(size)));
    parts.push(
      `${r.connections} conn (batches of ${size.toFixed(1)}): ${batched.toFixed(1)} µs, ${((100 * batched) / perDecision).toFixed(1)}% ` +
        `(one signature per decision: ${((100 * single) / perDecision).toFixed(1)}%; the format's floor: ${floor.toFixed(1)} µs, ` +
        `${((100 * floor) / perDecision).toFixed(1)}%) of ${perDecision.toFixed(0)} µs`,
    );
  }
  return { single, text: parts.join("; ") };
}

/** `numerator ÷ denominator` authorize throughput at each connection count, for one printed line. */
function ratios(numerator, denominator) {
  return numerator.map((r, i) => `${r.connections} conn ${(r.authorize.rps / denominator[i].authorize.rps).toFixed(2)}×`).join(", ");
}

let closeReceiver;

async function main() {
  process.stdout.write(
    `server benchmark: ${TURNS} turns of ${SECONDS} s per measurement, ${availableParallelism()} cores, load ${loadavg()[0].toFixed(2)}\n`,
  );
  process.stdout.write("authorize: SQLite, synchronous=FULL, group commit, each answer after its commit; hot path in front of Express\n");
  process.stdout.write(
    "PostgreSQL: group commit (decision 0311), synchronous_commit as the server is configured, each answer after its commit\n",
  );
  const dir = mkdtempSync(join(tmpdir(), "authority-bench-"));
  const schemas = [];
  const sync = syncLatencyMs(dir);
  process.stdout.write(
    `disk: one 4 KiB append + fdatasync takes ${sync.p50.toFixed(2)} ms (median), ${sync.p99.toFixed(2)} ms (p99); every durable answer waits for at least one\n`,
  );
  try {
    const sqlite = ONLY === "all" || ONLY === "sqlite";
    const databases = sqlite ? [{ name: "sqlite-empty", title: "empty database", path: join(dir, "empty.db") }] : [];
    const receiver = sqlite ? await startSlowReceiver() : undefined;
    closeReceiver = receiver?.close;
    if (receiver !== undefined) {
      databases.push({
        name: "sqlite-webhooks",
        title: `empty database, ${WEBHOOKS} webhooks delivering to a receiver that answers after ${SLOW_RECEIVER_DELAY_MS} ms`,
        path: join(dir, "webhooks.db"),
        webhooks: receiver.url,
      });
    }
    if (sqlite && LARGE) {
      const largePath = join(dir, "large.db");
      await migrateDatabase(largePath);
      const started = performance.now();
      const written = generate(largePath, LARGE_GRANTS, LARGE_DECISIONS);
      const generated = performance.now();
      // Generated without syncs, the file leaves gigabytes for the kernel to write back; the first
      // measurements would wait behind them at every sync. They are on disk before anything is measured.
      const file = openSync(largePath, "r");
      try {
        fsyncSync(file);
      } finally {
        closeSync(file);
      }
      process.stdout.write(
        `large database: ${LARGE_GRANTS.toLocaleString("en")} grants, ${written.toLocaleString("en")} decisions ` +
          `(generated in ${((generated - started) / 1000).toFixed(1)} s, on disk ${((performance.now() - generated) / 1000).toFixed(1)} s later)\n`,
      );
      databases.push({ name: "sqlite-large", title: "large database", path: largePath });
    }
    const postgres = ONLY === "sqlite" ? [] : await postgresDatabases(schemas);
    const all = [...databases, ...postgres];
    const measured = await run(all);
    const rows = new Map(all.map((database, i) => [database.name, measured[i]]));
    // With one request in flight nothing can be grouped: each durable answer costs at least a bare
    // node:http answer and one sync of the disk, whatever the server does besides.
    const one = rows.get("sqlite-empty")?.find((r) => r.connections === 1);
    if (one !== undefined) {
      const bound = 1 / (1 / one.bare.rps + sync.p50 / 1000);
      process.stdout.write(
        `\nat 1 conn no server that answers after a sync of its own can exceed about ${bound.toFixed(0)} req/s here ` +
          `(a bare node:http answer plus one median sync): ${(bound / one.express.rps).toFixed(2)}× the express no-op route\n`,
      );
    }
    if (rows.has("sqlite-webhooks")) {
      process.stdout.write(
        `\nwith ${WEBHOOKS} webhooks at a slow receiver ÷ without, authorize throughput: ${ratios(rows.get("sqlite-webhooks"), rows.get("sqlite-empty"))}\n`,
      );
    }
    // Signing runs where the decision is sealed (the authorize thread on SQLite); its share is of
    // the CPU one decision costs the server process in all (main thread and worker; not PostgreSQL's
    // backends), at the batch sizes the group commit made in that row.
    for (const [name, title] of [
      ["sqlite-empty", "SQLite"],
      ["pg-one", "PostgreSQL, one replica"],
    ]) {
      if (!rows.has(name)) continue;
      const shares = await signingShares(rows.get(name));
      process.stdout.write(
        `\nsigning on ${title} (statements, args hashes, Ed25519, their JSON; one signature per decision: ${shares.single.toFixed(1)} µs of CPU each), per decision and share of the server's CPU per authorize: ${shares.text}\n`,
      );
    }
    if (rows.has("sqlite-large"))
      process.stdout.write(`\nlarge ÷ empty authorize throughput: ${ratios(rows.get("sqlite-large"), rows.get("sqlite-empty"))}\n`);
    if (rows.has("pg-large")) process.stdout.write(`\nPostgreSQL large ÷ empty: ${ratios(rows.get("pg-large"), rows.get("pg-one"))}\n`);
    const pgOne = rows.get("pg-one");
    if (pgOne?.every((r) => r.authorize.databaseCpu !== undefined && r.authorize.mainCpu !== undefined)) {
      // The server and PostgreSQL share this machine's cores: the CPU both spend on one decision
      // bounds the rate whatever either does while waiting for the other.
      const cores = availableParallelism();
      process.stdout.write(
        `\nPostgreSQL, one replica: the CPU of one decision (server + its database backends) caps it on these ${cores} cores at ` +
          pgOne
            .map((r) => {
              const perDecision = r.authorize.mainCpu + (r.authorize.workerCpu ?? 0) + r.authorize.databaseCpu;
              const cap = (cores * 1e6) / perDecision;
              return `${r.connections} conn ${cap.toFixed(0)} req/s (${(cap / r.express.rps).toFixed(2)}× express; database ${r.authorize.databaseCpu.toFixed(0)} µs of ${perDecision.toFixed(0)})`;
            })
            .join(", ") +
          ", before the load generator's own share\n",
      );
    }
    if (rows.has("pg-three")) {
      process.stdout.write(
        `\nPostgreSQL three replicas ÷ one replica (all on this machine's cores): ${ratios(rows.get("pg-three"), rows.get("pg-one"))}\n`,
      );
    }
  } finally {
    closeReceiver?.();
    rmSync(dir, { recursive: true, force: true });
    for (const schema of schemas) await dropSchema(PG_URL, schema).catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// Hostile requests (issue 33): the work of one authorize grows with the whole request, bounded by
// the cost budget. One request at a time, so each latency is one decision's own.

/** Posts without throwing: the status and the answer. */
async function post(base, path, key, body) {
  const response = await fetch(`${base}/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

/** The median and p99 latency (ms) of `count` requests of `body`, one at a time, and the last answer. */
async function latencies(base, key, body, count = 60) {
  const times = [];
  let last;
  for (let i = 0; i < count + 5; i += 1) {
    const started = performance.now();
    last = await post(base, "/authorize", key, body);
    if (i >= 5) times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)], p99: times[Math.floor(times.length * 0.99)], last };
}

/** A chain of `links` grants (root first), each with `policy(i)`, the last held by the bench agent. */
async function chainOf(base, agentId, links, policy) {
  let grant = await call(base, "/grants", ADMIN_KEY, {
    agent_id: agentId,
    principal_type: "service",
    principal_id: "bench",
    scope: { tool: ["payments.*"] },
    ttl_hours: 24,
    delegation_policy: "attenuating",
    delegation_depth_max: 64,
    policy: policy(0),
  });
  for (let i = 1; i < links; i += 1) {
    grant = await call(base, `/grants/${grant.id}/delegate`, ADMIN_KEY, {
      agent_id: agentId,
      policy: policy(i),
      delegation_policy: "attenuating",
    });
  }
  return grant;
}

async function hostileRows() {
  const dir = mkdtempSync(join(tmpdir(), "authority-bench-hostile-"));
  const server = await startChild("authority", join(dir, "hostile.db"));
  try {
    const agent = (await call(server.base, "/agents", ADMIN_KEY, { name: `bench-hostile-${Date.now()}` })).id;
    await call(server.base, `/agents/${agent}/certification`, ADMIN_KEY, CERTIFICATION);
    const agentKey = (
      await call(server.base, "/keys", ADMIN_KEY, {
        identity: `bench-hostile-${agent}`,
        kind: "service",
        roles: ["agent"],
        agent_id: agent,
      })
    ).key;
    const large = Array.from({ length: 1024 }, () => Array.from({ length: 27 }, () => 0));
    const addresses = Array.from({ length: 1024 }, (_, i) => `user${i}@example.com`);
    const repeatWithin = (part, sep) => Array.from({ length: Math.floor(4000 / (part.length + sep.length)) }, () => part).join(sep);
    const shapes = [
      { name: "baseline: `amount_minor <= 100000`, small args", policy: () => "amount_minor <= 100000", args: { invoice: "INV-1" } },
      {
        name: "`args.l == args.m`, two lists of 28 KB",
        policy: () => "args.l == args.m",
        args: { l: large.slice(0, 512), m: large.slice(0, 512) },
      },
      { name: "`approver in args.l`, 1,024 addresses (gated)", policy: () => "approver in args.l", args: { l: addresses } },
      { name: "`args.l == args.l && …` 3.8 KB, 56 KB args", policy: () => repeatWithin("args.l == args.l", " && "), args: { l: large } },
      {
        name: "32 links of `approver in args.l && args.k != …`",
        links: 32,
        policy: (i) => `approver in args.l && args.k != "v${i}"`,
        args: { l: addresses, k: "v" },
      },
      {
        name: "64 links of `approver in args.l && args.k != …`",
        links: 64,
        policy: (i) => `approver in args.l && args.k != "v${i}"`,
        args: { l: addresses, k: "v" },
      },
      {
        name: "64 links of `args.l == args.m`, two lists of 28 KB",
        links: 64,
        policy: () => "args.l == args.m",
        args: { l: large.slice(0, 512), m: large.slice(0, 512) },
      },
    ];
    process.stdout.write("\nhostile requests (issue 33), SQLite, one request at a time: latency of POST /v1/authorize\n");
    process.stdout.write(`  ${"shape".padEnd(56)} ${"body".padEnd(9)} ${"p50".padEnd(10)} ${"p99".padEnd(10)} answer\n`);
    let baseline;
    for (const shape of shapes) {
      let grant;
      try {
        grant =
          shape.links === undefined
            ? await call(server.base, "/grants", ADMIN_KEY, {
                agent_id: agent,
                principal_type: "service",
                principal_id: "bench",
                scope: { tool: ["payments.*"] },
                ttl_hours: 24,
                policy: shape.policy(0),
              })
            : await chainOf(server.base, agent, shape.links, shape.policy);
      } catch (error) {
        process.stdout.write(
          `  ${shape.name.padEnd(56)} refused when written: ${
            String(error.message)
              .match(/"code":"([^"]+)"/g)
              ?.slice(-1)[0] ?? error.message
          }\n`,
        );
        continue;
      }
      const body = { grant_id: grant.id, tool: "payments.send", attestation: ATTESTATION, args: shape.args };
      const bytes = Buffer.byteLength(JSON.stringify(body));
      const { p50, p99, last } = await latencies(server.base, agentKey, body, shape.links === undefined ? 60 : 30);
      baseline ??= p50;
      const answer = last.status === 200 ? `${last.json.outcome} (${last.json.reason_code})` : `${last.status} ${last.json.code}`;
      process.stdout.write(
        `  ${shape.name.padEnd(56)} ${`${(bytes / 1024).toFixed(1)} KiB`.padEnd(9)} ${`${p50.toFixed(2)} ms`.padEnd(10)} ${`${p99.toFixed(2)} ms`.padEnd(10)} ${answer}; ${(p50 / baseline).toFixed(1)}x baseline\n`,
      );
    }
  } finally {
    await stop(server);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--serve") await serve(process.argv[3], process.argv[4], process.argv[5]);
else if (ONLY === "hostile") await hostileRows();
else {
  await main();
  if (ONLY === "all" || ONLY === "sqlite") await hostileRows();
}
