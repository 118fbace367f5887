// Breakers benchmark (SQLite, the default store): the 90-day counterfactual over 1,000,000 sealed
// decisions of one agent, read over HTTP, and the overhead five breakers add to POST /v1/authorize.
// A benchmark, never a timed test: it prints, and fails only when answers are wrong.
//
//   npm run bench -- breakers                     (or: node test/bench/breakers.mjs)
//   BENCH_DECISIONS=1000000                       decisions of the replayed agent (default 1,000,000)
//   BENCH_SECONDS=5                               seconds per authorize measurement round (default 5, the
//                                                 ledger logger's period, so that each round holds one pass)
//   BENCH_ROUNDS=6                                alternated rounds per side (default 6)
//
// Targets: the counterfactual under 2 s, once the ledger's log has caught up on the history written
// past the server; at most 10% authorize overhead with five breakers.
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { execFile } from "node:child_process";
import { canonicalJson, GENESIS_HASH, linkHash, startServer } from "@agent-authority/server";

const run = promisify(execFile);
const DECISIONS = Number(process.env.BENCH_DECISIONS ?? 1_000_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const CONNECTIONS = 10;
const ADMIN_KEY = "aa_bench-admin-key-0123456789abcdefghijklmnop";
const DAY = 86_400_000;
const CERTIFICATION = {
  basis: "benchmark",
  provenance_version: "model-1",
  manifest_hash: "sha256:aaaa",
  content_hash: "sha256:bbbb",
  checks: ["bench"],
};
const ATTESTATION = { manifest_hash: "sha256:aaaa", content_hash: "sha256:bbbb", provenance_version: "model-1" };

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
/** A well-formed sortable id with a counter in place of randomness, so generation is cheap. */
function id(prefix, time, n) {
  let head = "";
  let t = time;
  for (let i = 0; i < 10; i += 1) {
    head = ALPHABET[t % 32] + head;
    t = Math.floor(t / 32);
  }
  let tail = "";
  let c = n;
  for (let i = 0; i < 16; i += 1) {
    tail = ALPHABET[c % 32] + tail;
    c = Math.floor(c / 32);
  }
  return `${prefix}_${head}${tail}`;
}

function fail(message) {
  process.stdout.write(`bench: wrong answer: ${message}\n`);
  process.exit(1);
}

async function call(base, method, path, key, body) {
  try {
    return await callOnce(base, method, path, key, body);
  } catch {
    // A pooled connection the server closed while the history was being written: retry once.
    return callOnce(base, method, path, key, body);
  }
}

async function callOnce(base, method, path, key, body) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
}

async function certifiedAgent(base, name) {
  const agent = (await call(base, "POST", "/agents", ADMIN_KEY, { name })).body;
  if ((await call(base, "POST", `/agents/${agent.id}/certification`, ADMIN_KEY, CERTIFICATION)).status !== 201) fail("certification");
  const key = (
    await call(base, "POST", "/keys", ADMIN_KEY, { identity: `${name}-key`, kind: "service", roles: ["agent"], agent_id: agent.id })
  ).body.key;
  const grant = (
    await call(base, "POST", "/grants", ADMIN_KEY, {
      agent_id: agent.id,
      principal_type: "human",
      principal_id: "owner@example.com",
      scope: { tool: ["payments.*"] },
      ttl_hours: 72,
    })
  ).body;
  if (grant.status !== "active") fail(`grant not active: ${JSON.stringify(grant)}`);
  return { id: agent.id, key, grant: grant.id };
}

async function breakerOn(base, agentId, contract, action = "notify") {
  const c = await call(base, "POST", `/agents/${agentId}/contracts`, ADMIN_KEY, contract);
  if (c.status !== 201) fail(`contract: ${JSON.stringify(c.body)}`);
  const b = await call(base, "POST", `/agents/${agentId}/breakers`, ADMIN_KEY, { contract_id: c.body.id, action });
  if (b.status !== 201) fail(`breaker: ${JSON.stringify(b.body)}`);
  return b.body.id;
}

/**
 * Writes `count` sealed, hash-linked decisions of one agent over the last 90 days straight into the
 * database, each with its contract signal: bursts of refusals every 50,000 decisions, so that the
 * replay has trips to find. Answers the expected number of trips of a refusal-rate contract
 * (ceiling 0.2, last 100 decisions).
 */
function writeHistory(path, agentId, grantId, now, count) {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const insertLedger = db.prepare(
    "INSERT INTO ledger (id, tree_id, seq, kind, grant_id, agent_id, outcome, record, prev_hash, hash, created_at) VALUES (?, ?, ?, 'decision', ?, ?, ?, ?, ?, ?, ?)",
  );
  const insertSignal = db.prepare("INSERT INTO decision_signals (ledger_id, agent_id, at, signal) VALUES (?, ?, ?, ?)");
  const start = now - 90 * DAY + 60_000;
  const step = (90 * DAY - 120_000) / count;
  let prev = GENESIS_HASH;
  let bursts = 0;
  const write = db.transaction((from, to) => {
    for (let i = from; i < to; i += 1) {
      const at = Math.floor(start + i * step);
      // A burst of 60 refusals at the start of every 50,000 decisions.
      const refused = i % 50_000 < 60;
      if (i % 50_000 === 0) bursts += 1;
      const outcome = refused ? "deny" : "allow";
      const ledgerId = id("led", at, i);
      const record = canonicalJson({
        request: { grant_id: grantId, tool: refused ? "mail.send" : "payments.send" },
        would_outcome: null,
        mode: "enforce",
        reason_code: refused ? "scope.out_of_scope" : "decision.allow",
        ledger_id: ledgerId,
        tree_id: grantId,
        seq: i + 1,
        kind: "decision",
        grant_id: grantId,
        agent_id: agentId,
        outcome,
        created_at: at,
      });
      const hash = linkHash(prev, record);
      insertLedger.run(ledgerId, grantId, i + 1, grantId, agentId, outcome, record, prev, hash, at);
      insertSignal.run(ledgerId, agentId, at, refused ? 2 : 0);
      prev = hash;
    }
  });
  for (let from = 0; from < count; from += 50_000) write(from, Math.min(count, from + 50_000));
  db.close();
  return bursts;
}

/**
 * Waits until the server's ledger logger has given a position to every record in the ledger: the
 * history above is written past the server, so its logger catches up on it in passes of its own
 * (decision 1951). Answers the seconds it took, and the counterfactual's time asked once meanwhile.
 */
async function ledgerLogCaughtUp(path, base, agentId) {
  const db = new Database(path, { readonly: true });
  const started = performance.now();
  try {
    const records = db.prepare("SELECT COUNT(*) AS n FROM ledger").get().n;
    const asked = performance.now();
    await call(base, "GET", `/agents/${agentId}/breakers/counterfactual`, ADMIN_KEY);
    const during = performance.now() - asked;
    const logged = db.prepare("SELECT COALESCE(MAX(position) + 1, 0) AS n FROM ledger_leaves");
    while (logged.get().n < records) await new Promise((resolve) => setTimeout(resolve, 250));
    return { seconds: (performance.now() - started) / 1000, during };
  } finally {
    db.close();
  }
}

/**
 * Answers per second of POST /authorize for `agent` over CONNECTIONS connections for `seconds`,
 * from a load generator in a process of its own (support/authorize-load.mjs): the server is
 * measured without sharing its event loop with the client.
 */
async function measureAuthorize(base, agent, seconds) {
  const body = JSON.stringify({ grant_id: agent.grant, tool: "payments.send", attestation: ATTESTATION });
  const script = fileURLToPath(new URL("./support/authorize-load.mjs", import.meta.url));
  const { stdout } = await run(process.execPath, [script, base, agent.key, body, String(CONNECTIONS), String(seconds)]);
  const result = JSON.parse(stdout);
  if (result.wrong !== undefined) fail(`authorize: ${result.wrong}`);
  return result.rate;
}

const dir = mkdtempSync(join(tmpdir(), "authority-bench-breakers-"));
const dbPath = join(dir, "authority.db");
try {
  // The server reads the real clock, as in production: decisions of one agent mostly fall in
  // distinct milliseconds, and the history ends just before the counterfactual is asked for.
  const server = await startServer({
    host: "127.0.0.1",
    port: 0,
    dataDir: dir,
    databaseUrl: dbPath,
    environment: "bench",
    adminKey: ADMIN_KEY,
    autoApprovalCeilingMinor: 0,
    logLevel: "silent",
  });
  const base = server.baseUrl;
  process.stdout.write(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}\n`,
  );

  // 1. The counterfactual over a large history.
  const replayed = await certifiedAgent(base, "replayed");
  const breakerId = await breakerOn(base, replayed.id, { metric: "refusal_rate", ceiling: 0.2, window_decisions: 100 });
  const generated = performance.now();
  const expected = writeHistory(dbPath, replayed.id, replayed.grant, Date.now(), DECISIONS);
  process.stdout.write(
    `history: ${DECISIONS.toLocaleString("en")} sealed decisions of one agent over 90 days (written in ${((performance.now() - generated) / 1000).toFixed(1)} s)\n`,
  );
  const catchUp = await ledgerLogCaughtUp(dbPath, base, replayed.id);
  process.stdout.write(
    `ledger log: the server's logger gave positions to the history in ${catchUp.seconds.toFixed(1)} s; ` +
      `a counterfactual asked meanwhile took ${(catchUp.during / 1000).toFixed(2)} s\n`,
  );
  const times = [];
  for (let i = 0; i < 3; i += 1) {
    const started = performance.now();
    const reply = await call(base, "GET", `/agents/${replayed.id}/breakers/counterfactual`, ADMIN_KEY);
    times.push(performance.now() - started);
    const row = reply.body.breakers.find((b) => b.breaker_id === breakerId);
    if (reply.status !== 200 || row === undefined || row.trips !== expected)
      fail(`counterfactual ${JSON.stringify(reply.body).slice(0, 300)}, expected ${expected} trips`);
  }
  times.sort((a, b) => a - b);
  process.stdout.write(
    `counterfactual (GET over HTTP, ${DECISIONS.toLocaleString("en")} decisions, 1 breaker): median ${(times[1] / 1000).toFixed(2)} s ` +
      `(best ${(times[0] / 1000).toFixed(2)} s; target under 2 s)\n`,
  );

  // 2. Authorize with and without five breakers on the agent.
  const plain = await certifiedAgent(base, "plain");
  const watched = await certifiedAgent(base, "watched");
  const contracts = [
    { metric: "refusal_rate", ceiling: 0.2, window_decisions: 100 },
    { metric: "deny_rate", ceiling: 0.1, window_decisions: 1_000 },
    { metric: "out_of_scope_rate", ceiling: 0.05, window_decisions: 500 },
    { metric: "gated_rate", ceiling: 0.1, window_hours: 1 },
    { metric: "exhausted_rate", ceiling: 0.1, window_hours: 24 },
  ];
  for (const [i, contract] of contracts.entries()) await breakerOn(base, watched.id, contract, i % 2 === 0 ? "revoke" : "notify");
  await measureAuthorize(base, plain, 1);
  await measureAuthorize(base, watched, 1);
  // Rounds alternate, each pair in both orders by turn, and the overhead is the median of the pairs'
  // ratios: the machine's drift between rounds moves both sides of a pair alike.
  const rates = { plain: [], watched: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = round % 2 === 0 ? ["plain", "watched"] : ["watched", "plain"];
    for (const side of order) rates[side].push(await measureAuthorize(base, side === "plain" ? plain : watched, SECONDS));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const overheads = rates.plain.map((p, i) => (p / rates.watched[i] - 1) * 100);
  process.stdout.write(
    `authorize, ${CONNECTIONS} connections, ${ROUNDS} alternated rounds of ${SECONDS} s from a load generator of its own: ` +
      `no breaker ${median(rates.plain).toFixed(0)}/s, five breakers ${median(rates.watched).toFixed(0)}/s (medians)\n`,
  );
  process.stdout.write(
    `breaker overhead on authorize: ${median(overheads).toFixed(1)}% more time per decision, median of the rounds' ` +
      `${overheads.map((o) => o.toFixed(1)).join(", ")} (target at most 10%)\n`,
  );
  await server.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
