// AuthZEN benchmark: POST /access/v1/evaluation beside POST /v1/authorize, the same decision (one
// agent, one grant, no amount) on one SQLite server, measured in alternating turns with autocannon
// and printed as requests per second and the ratio of the two. A benchmark, never a timed test: it
// prints, and fails only when an answer is wrong.
//
//   npm run bench -- authzen        (or: node test/bench/authzen.mjs)
//   BENCH_SECONDS=2                 seconds per measurement (default 3)
//   BENCH_TURNS=2                   turns of each (default 2)
//   BENCH_CONNECTIONS=10            connections (default 10)
//
// The load generator runs in this process beside the server, so both rows pay for it alike.
import autocannon from "autocannon";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "@agent-authority/server";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const TURNS = Number(process.env.BENCH_TURNS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ADMIN = "aa_bench-admin-key-0123456789abcdefghijklmnop";
const CERT = {
  basis: "bench",
  provenance_version: "p1",
  manifest_hash: "sha256:1",
  content_hash: "sha256:2",
  market_profile: "EU",
  checks: ["bench"],
};
const ATTESTATION = { manifest_hash: CERT.manifest_hash, content_hash: CERT.content_hash, provenance_version: CERT.provenance_version };

async function call(base, path, key, body) {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (response.status >= 300) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

async function setUp(base) {
  const agent = await call(base, "/v1/agents", ADMIN, { name: "bench-agent" });
  await call(base, `/v1/agents/${agent.id}/certification`, ADMIN, CERT);
  const key = await call(base, "/v1/keys", ADMIN, { identity: "bench-agent-key", kind: "service", roles: ["agent"], agent_id: agent.id });
  const grant = await call(base, "/v1/grants", ADMIN, {
    agent_id: agent.id,
    principal_type: "human",
    principal_id: "bench@example.com",
    scope: { tool: ["bench.*"] },
  });
  return { agent: agent.id, key: key.key, grant: grant.id };
}

function measure(url, key, body) {
  return new Promise((resolve, reject) => {
    let wrong = 0;
    const instance = autocannon(
      {
        url,
        method: "POST",
        connections: CONNECTIONS,
        duration: SECONDS,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      },
      (error, result) => (error ? reject(error) : wrong > 0 ? reject(new Error(`${wrong} wrong answers from ${url}`)) : resolve(result)),
    );
    instance.on("response", (_client, status) => {
      if (status !== 200) wrong++;
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), "authority-bench-authzen-"));
const server = await startServer({
  host: "127.0.0.1",
  port: 0,
  dataDir: dir,
  databaseUrl: join(dir, "authority.db"),
  environment: "bench",
  adminKey: ADMIN,
  autoApprovalCeilingMinor: 10_000,
  logLevel: "silent",
});
try {
  const base = new URL(server.baseUrl).origin;
  const { agent, key, grant } = await setUp(base);
  const authorizeBody = { grant_id: grant, tool: "bench.read", attestation: ATTESTATION };
  const evaluationBody = {
    subject: { type: "agent", id: agent, properties: { attestation: ATTESTATION } },
    action: { name: "bench.read" },
    resource: { type: "grant", id: grant },
  };
  const first = await call(base, "/access/v1/evaluation", key, evaluationBody);
  if (first.decision !== true) throw new Error(`the bench evaluation is not permitted: ${JSON.stringify(first)}`);
  const rows = { authorize: [], evaluation: [] };
  for (let turn = 0; turn < TURNS; turn++) {
    rows.authorize.push((await measure(`${base}/v1/authorize`, key, authorizeBody)).requests.average);
    rows.evaluation.push((await measure(`${base}/access/v1/evaluation`, key, evaluationBody)).requests.average);
  }
  const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;
  const a = mean(rows.authorize);
  const e = mean(rows.evaluation);
  process.stdout.write(`SQLite, ${CONNECTIONS} connections, ${TURNS} turns of ${SECONDS} s\n`);
  process.stdout.write(`  POST /v1/authorize            ${a.toFixed(0)} req/s\n`);
  process.stdout.write(`  POST /access/v1/evaluation    ${e.toFixed(0)} req/s\n`);
  process.stdout.write(`  evaluation ÷ authorize        ${(e / a).toFixed(2)}\n`);
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
