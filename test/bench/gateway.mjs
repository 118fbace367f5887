// Gateway benchmark: p50 and p99 of one trivial MCP tool call (the filesystem server's
// `list_allowed_directories`), made directly and through `authority gateway`, in the same run,
// alternating call by call. The gateway decides each call with a reference server on SQLite over loopback
// (an enforce-mode grant, certified for the attested manifest hash). A benchmark, never a timed
// test: it prints, and fails only when a call is refused or fails.
//
//   npm run bench -- gateway            (or: node test/bench/gateway.mjs)
//   BENCH_CALLS=1000                    measured calls per side and turn (default 1000)
//   BENCH_TURNS=3                       turns (default 3)
//   BENCH_GATEWAY_PROFILE=DIR           write a CPU profile of the gateway process into DIR
//   BENCH_GATEWAY_BASELINE=DIR          also time the gateway of another build (a directory holding its
//                                       cli/bin/authority.js, built), alternating with this one
//   BENCH_GATEWAY_FLAGS="--flag …"      more flags for this build's gateway node (e.g. --perf-basic-prof for perf)
//   BENCH_SERVER_PROFILE=DIR            write CPU profiles of the server's threads into DIR
//   BENCH_SERVER_FLAGS="--flag …"       more flags for the server's node (e.g. --perf-basic-prof for perf)
//
// Beside the gateway it times a floor relay (support/gateway-floor-relay.mjs): a process that passes
// the messages through as bytes and holds each call until one durable authorize has answered. No
// gateway that decides each call on the server can add less than it; the gateway's own part is what
// it adds above the relay. With BENCH_GATEWAY_PROFILE it prints where the gateway's busy time went.
//
// Beside the latencies it prints the gateway process's own CPU time per call and the server's per
// authorize, read from /proc, which a loaded machine does not inflate the way it inflates wall time.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { manifestHash, toolDefinition } from "@agent-authority/sdk";
import { send } from "../../packages/sdk/dist/http1.js";
import { profileShares } from "./support/cpu-profile.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const FILESYSTEM = join(root, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");
const CLI = join(root, "cli", "bin", "authority.js");
const RELAY = join(root, "test", "bench", "support", "gateway-floor-relay.mjs");
const ADMIN_KEY = "aa_bench-admin-key-0123456789abcdefghijklmnop";
const CALLS = Number(process.env.BENCH_CALLS ?? 1000);
const TURNS = Number(process.env.BENCH_TURNS ?? 3);
const WARMUP = 200;
const BASELINE = process.env.BENCH_GATEWAY_BASELINE;

async function startServer(dir) {
  const profile = process.env.BENCH_SERVER_PROFILE;
  const flags = [
    ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : []),
    ...(process.env.BENCH_SERVER_FLAGS ?? "").split(" ").filter(Boolean),
  ];
  const child = spawn(process.execPath, [...flags, join(root, "server", "dist", "main.js")], {
    env: {
      PATH: process.env.PATH ?? "",
      AUTHORITY_PORT: "0",
      AUTHORITY_DATABASE_URL: join(dir, "authority.db"),
      AUTHORITY_ADMIN_KEY: ADMIN_KEY,
      AUTHORITY_ENVIRONMENT: "bench",
      AUTHORITY_LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (chunk) => {
    out += chunk;
  });
  child.stderr.on("data", (chunk) => {
    out += chunk;
  });
  for (let i = 0; i < 800; i += 1) {
    const match = /http:\/\/127\.0\.0\.1:(\d+)\/v1/.exec(out);
    if (match) {
      // The request log is read and dropped from here on: the pipes must drain, nothing is kept.
      child.stdout.removeAllListeners("data").resume();
      child.stderr.removeAllListeners("data").resume();
      return { child, baseUrl: `http://127.0.0.1:${match[1]}/v1` };
    }
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the server did not start: ${out}`);
}

async function api(baseUrl, path, body) {
  const response = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (response.status >= 300) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(answer)}`);
  return answer;
}

async function connect(command, args, env = {}) {
  const client = new Client({ name: "bench", version: "1.0.0" });
  const transport = new StdioClientTransport({ command, args, env: { PATH: process.env.PATH ?? "", ...env }, stderr: "ignore" });
  await client.connect(transport);
  return { client, pid: transport.pid };
}

/** CPU time (user and system, ms) a process has used, from /proc: a measure the machine's load does not inflate. */
function cpuMs(pid) {
  if (pid === undefined) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8")
      .replace(/^.*\) /, "")
      .split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

async function timeCalls(client, count, into) {
  for (let i = 0; i < count; i += 1) {
    const started = process.hrtime.bigint();
    const result = await client.callTool({ name: "list_allowed_directories", arguments: {} });
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    if (result.isError) throw new Error(`the call failed: ${JSON.stringify(result.content)}`);
    into?.push(elapsed);
  }
}

let authorized = 0;

/**
 * POSTs JSON with the SDK's own HTTP/1.1 client on a kept-alive connection, the client the SDK (and
 * so the gateway) sends with by default, and answers the parsed body.
 */
async function postJson(url, headers, payload) {
  const response = await send({
    method: "POST",
    url: new URL(url),
    headers,
    body: payload,
    signal: new AbortController().signal,
    maxBytes: 1 << 20,
  });
  return JSON.parse(response.body.toString("utf8"));
}

/** The authorize round trip alone, as the gateway makes it: what the decision itself costs. */
async function timeAuthorize(baseUrl, key, body, count, into) {
  for (let i = 0; i < count; i += 1) {
    const started = process.hrtime.bigint();
    const decision = await postJson(
      `${baseUrl}/authorize`,
      {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "idempotency-key": `bench-${process.pid}-${(authorized += 1)}`,
      },
      JSON.stringify(body),
    );
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    if (decision.outcome !== "allow") throw new Error(`authorize answered ${JSON.stringify(decision)}`);
    into?.push(elapsed);
  }
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function row(name, values) {
  const sorted = [...values].sort((a, b) => a - b);
  return { name, calls: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

function report(samples, cpu, calls) {
  const [direct, through, relay, alone] = [
    row("direct", samples.direct),
    row("through gateway", samples.gateway),
    row("floor relay", samples.relay),
    row("authorize alone", samples.authorize),
  ];
  const baseline = samples.baseline.length > 0 ? row("through baseline", samples.baseline) : undefined;
  const write = (line) => process.stdout.write(`${line}\n`);
  write(
    `trivial tool call (list_allowed_directories), ${TURNS} turns of ${CALLS} sequential calls per side, alternating call by call, SQLite on loopback`,
  );
  for (const r of [direct, through, ...(baseline === undefined ? [] : [baseline]), relay, alone])
    write(`  ${r.name.padEnd(16)} calls ${String(r.calls).padStart(6)}   p50 ${r.p50.toFixed(3)} ms   p99 ${r.p99.toFixed(3)} ms`);
  const added = (r) => `p50 ${(r.p50 - direct.p50).toFixed(3)} ms, p99 ${(r.p99 - direct.p99).toFixed(3)} ms`;
  write(`  added by the gateway: ${added(through)} (target: at most 1.5 ms at p50, 5 ms at p99)`);
  if (baseline !== undefined) write(`  added by the baseline's gateway: ${added(baseline)}`);
  write(`  added by the floor relay (one more process and one durable authorize, nothing parsed or checked): ${added(relay)}`);
  write(
    `  the gateway's own part, above the relay: p50 ${(through.p50 - relay.p50).toFixed(3)} ms, p99 ${(through.p99 - relay.p99).toFixed(3)} ms`,
  );
  const perCall = (ms) => `${(ms / calls).toFixed(3)} ms`;
  write(`  the upstream process's own CPU per direct call: ${perCall(cpu.upstream)}`);
  write(
    `  the gateway process's own CPU per call: ${perCall(cpu.gateway)} (load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores)`,
  );
  if (baseline !== undefined) {
    write(`  the baseline's gateway process's own CPU per call: ${perCall(cpu.baseline)}`);
    // Issue 49's target is against the build before 1902 (ae7057e): given as the baseline, the ratio is the target's.
    write(
      `  own CPU per call against the baseline's: gateway ${(cpu.gateway / cpu.baseline).toFixed(2)}x, floor relay ${(cpu.relay / cpu.baseline).toFixed(2)}x (target with ae7057e as the baseline: at most 0.5x)`,
    );
  }
  write(`  the floor relay process's own CPU per call (its upstream's not counted): ${perCall(cpu.relay)}`);
  write(`  of which the durable decision (authorize alone, sealed in SQLite, the SDK's HTTP client): p50 ${alone.p50.toFixed(3)} ms`);
  const authorizes = calls * (baseline === undefined ? 3 : 4);
  write(
    `  the server process's CPU per authorize (one per gateway call, one per relay call, one per authorize alone): ${(cpu.server / authorizes).toFixed(3)} ms`,
  );
}

/** What the gateway's profile holds, by kind of work: a script's URL names its kind. */
const GATEWAY_CATEGORIES = [
  [(frame) => frame.url.includes("/packages/gateway/") || frame.url.includes("/packages/sdk/"), "the gateway's and the SDK's own code"],
  [(frame) => frame.url === "node:internal/crypto/sig", "Ed25519 verification (once per call)"],
  [(frame) => frame.url.startsWith("node:internal/crypto/"), "hashing"],
  [(frame) => frame.url.includes("@modelcontextprotocol") || frame.url.includes("/zod/"), "the MCP SDK and zod"],
  [(frame) => /^node:(_http|http|internal\/http|internal\/url|url)/.test(frame.url), "Node's HTTP client"],
  [
    (frame) =>
      /^node:(events|net|stream|timers|internal\/(streams|events|event_target|timers|stream_base|process\/task_queues|abort))/.test(
        frame.url,
      ),
    "Node's streams, events and timers",
  ],
  [
    (frame) => /^node:internal\/(modules|bootstrap|vm)|node:internal\/main|node_modules\/.*\.js$/.test(frame.url),
    "start-up and other modules",
  ],
];

/** Prints the shares of the gateway's busy samples by kind of work, from the profile it wrote into `dir` when it exited. */
async function reportProfile(dir) {
  for (let i = 0; i < 200 && !readdirSync(dir).some((name) => name.endsWith(".cpuprofile")); i += 1)
    await new Promise((resolve) => setTimeout(resolve, 25));
  const file = readdirSync(dir).find((name) => name.endsWith(".cpuprofile"));
  if (file === undefined) {
    process.stdout.write(`  no profile was written into ${dir}\n`);
    return;
  }
  const { busyMs, shares } = profileShares(join(dir, file), GATEWAY_CATEGORIES);
  process.stdout.write(`  where the gateway's busy time went (${join(dir, file)}, start-up included; ${busyMs.toFixed(0)} ms busy):\n`);
  for (const { category, ms } of shares) process.stdout.write(`    ${((100 * ms) / busyMs).toFixed(1).padStart(5)}%  ${category}\n`);
}

const dir = mkdtempSync(join(tmpdir(), "authority-bench-gateway-"));
const files = join(dir, "files");
mkdirSync(files);
const server = await startServer(dir);
try {
  const direct = await connect(process.execPath, [FILESYSTEM, files]);
  const { tools } = await direct.client.listTools();
  const hash = manifestHash(tools.map((tool) => ({ name: `files.${tool.name}`, kind: "mcp", definition: toolDefinition(tool) })));
  const agent = await api(server.baseUrl, "/agents", { name: "bench-agent" });
  const certification = {
    basis: "bench",
    provenance_version: "model-bench",
    manifest_hash: hash,
    content_hash: "sha256:bench",
    market_profile: "EU",
    checks: ["bench"],
  };
  await api(server.baseUrl, `/agents/${agent.id}/certification`, certification);
  const key = await api(server.baseUrl, "/keys", { identity: "bench-agent-key", kind: "service", roles: ["agent"], agent_id: agent.id });
  const grant = await api(server.baseUrl, "/grants", {
    agent_id: agent.id,
    principal_type: "service",
    principal_id: "bench",
    scope: { tool: ["files.list_allowed_directories"] },
    enforcement_mode: "enforce",
    ttl_hours: 1,
  });
  const config = join(dir, "gateway.yaml");
  writeFileSync(
    config,
    [
      "authority:",
      `  url: ${server.baseUrl}`,
      "  key_env: BENCH_AGENT_KEY",
      `  grant_id: ${grant.id}`,
      "attestation:",
      "  content_hash: sha256:bench",
      "  provenance_version: model-bench",
      "upstreams:",
      "  files:",
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(FILESYSTEM)}, ${JSON.stringify(files)}]`,
      "",
    ].join("\n"),
  );
  // Flags for this build's gateway only (the baseline's runs plain): a CPU profile, or e.g. --perf-basic-prof.
  const gatewayFlags = (profile) =>
    profile === null
      ? []
      : [
          ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : []),
          ...(process.env.BENCH_GATEWAY_FLAGS ?? "").split(" ").filter(Boolean),
        ];
  const gatewayOf = (cli, profile) =>
    connect(process.execPath, [...gatewayFlags(profile), cli, "gateway", "--config", config], {
      BENCH_AGENT_KEY: key.key,
    });
  const gateway = await gatewayOf(CLI, process.env.BENCH_GATEWAY_PROFILE);
  // Another build's gateway, timed in the same alternation: a before and after from one run.
  const baseline = BASELINE === undefined ? undefined : await gatewayOf(join(BASELINE, "cli", "bin", "authority.js"), null);
  await timeCalls(direct.client, WARMUP);
  await timeCalls(gateway.client, WARMUP);
  if (baseline !== undefined) await timeCalls(baseline.client, WARMUP);
  const body = {
    grant_id: grant.id,
    tool: "files.list_allowed_directories",
    attestation: { manifest_hash: hash, content_hash: "sha256:bench", provenance_version: "model-bench" },
  };
  await timeAuthorize(server.baseUrl, key.key, body, WARMUP);
  const relay = await connect(process.execPath, [RELAY, process.execPath, FILESYSTEM, files], {
    RELAY_AUTHORIZE_URL: `${server.baseUrl}/authorize`,
    RELAY_AUTHORIZE_KEY: key.key,
    RELAY_AUTHORIZE_BODY: JSON.stringify(body),
  });
  await timeCalls(relay.client, WARMUP);
  const samples = { direct: [], gateway: [], baseline: [], relay: [], authorize: [] };
  const cpu = { upstream: 0, gateway: 0, baseline: 0, relay: 0, server: 0 };
  for (let turn = 0; turn < TURNS; turn += 1) {
    const before = {
      upstream: cpuMs(direct.pid),
      gateway: cpuMs(gateway.pid),
      baseline: cpuMs(baseline?.pid),
      relay: cpuMs(relay.pid),
      server: cpuMs(server.child.pid),
    };
    // One call of each kind in turn, so that whatever load the machine has falls on all of them alike.
    for (let i = 0; i < CALLS; i += 1) {
      await timeCalls(direct.client, 1, samples.direct);
      await timeCalls(gateway.client, 1, samples.gateway);
      if (baseline !== undefined) await timeCalls(baseline.client, 1, samples.baseline);
      await timeCalls(relay.client, 1, samples.relay);
      await timeAuthorize(server.baseUrl, key.key, body, 1, samples.authorize);
    }
    cpu.upstream += cpuMs(direct.pid) - before.upstream;
    cpu.gateway += cpuMs(gateway.pid) - before.gateway;
    cpu.baseline += cpuMs(baseline?.pid) - before.baseline;
    cpu.relay += cpuMs(relay.pid) - before.relay;
    cpu.server += cpuMs(server.child.pid) - before.server;
  }
  report(samples, cpu, TURNS * CALLS);
  await baseline?.client.close();
  await gateway.client.close();
  await relay.client.close();
  await direct.client.close();
  if (process.env.BENCH_GATEWAY_PROFILE) await reportProfile(process.env.BENCH_GATEWAY_PROFILE);
} finally {
  server.child.kill(process.env.BENCH_SERVER_PROFILE ? "SIGINT" : "SIGKILL");
  if (process.env.BENCH_SERVER_PROFILE) await new Promise((resolve) => server.child.once("exit", resolve));
  rmSync(dir, { recursive: true, force: true });
}
