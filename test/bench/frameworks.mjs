// Framework adapters benchmark: one tool call through each adapter against the same tool called
// inside `guard()` directly, in the same run, call by call in alternation. Both sides make the same
// two requests (authorize with an amount, then settle); the difference is the adapter's own work.
// Two measures:
//   1. the adapter's own work alone: both sides against a client that answers at once, so nothing
//      but the code around the two requests is timed (many calls, medians of paired differences);
//   2. the whole call against a reference server process on SQLite over loopback, for scale.
// A benchmark, never a timed test: it prints, and fails only when a call is refused.
//
//   npm run bench -- frameworks        (or: node test/bench/frameworks.mjs)
//   BENCH_CALLS=400                    calls per side against the server (default 400)
//   BENCH_LOCAL_CALLS=20000            calls per side for the adapter's own work (default 20000)
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AuthorityClient } from "@agent-authority/sdk";
import { governTools as governAi } from "@agent-authority/ai-sdk";
import { governTools as governAgents } from "@agent-authority/openai-agents";
import { governTools as governLangChain } from "@agent-authority/langchain";
import { tool as aiTool } from "ai";
import { RunContext, tool as agentTool } from "@openai/agents";
import { tool as langchainTool } from "@langchain/core/tools";
import { z } from "zod";

const root = fileURLToPath(new URL("../../", import.meta.url));
const ADMIN_KEY = "aa_bench-admin-key-0123456789abcdefghijklmnop";
const CALLS = Number(process.env.BENCH_CALLS ?? 400);
const LOCAL_CALLS = Number(process.env.BENCH_LOCAL_CALLS ?? 20_000);
const WARMUP = 100;

async function startServer(dir) {
  const child = spawn(process.execPath, [join(root, "server", "dist", "main.js")], {
    env: {
      PATH: process.env.PATH ?? "",
      AUTHORITY_PORT: "0",
      AUTHORITY_DATABASE_URL: join(dir, "authority.db"),
      AUTHORITY_ADMIN_KEY: ADMIN_KEY,
      AUTHORITY_ENVIRONMENT: "bench",
      AUTHORITY_LOG_LEVEL: "info",
      AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "100000000",
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
      child.stdout.removeAllListeners("data").resume();
      child.stderr.removeAllListeners("data").resume();
      return { child, baseUrl: `http://127.0.0.1:${match[1]}/v1` };
    }
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the server did not start: ${out}`);
}

const schema = z.object({ order: z.string(), amount_minor: z.number().int() });
const args = { order: "o-1", amount_minor: 1 };
const refund = async ({ order, amount_minor }) => ({ order, refunded_minor: amount_minor });
const mapping = {
  amount: (a) => ({ amount_minor: a.amount_minor, currency: "EUR" }),
  args: (a) => ({ order: a.order }),
  cost: (r) => r.refunded_minor,
};

/** For each framework: its tool called inside guard() directly, and the same tool through the adapter. */
function sides(authority, grant) {
  const options = { grant, namespace: "shop", tools: { refund: mapping } };
  const direct = (run) => async () => {
    const result = await authority.guard(
      grant,
      "shop.refund",
      async () => {
        const value = await run();
        return { value, spent_minor: value.refunded_minor };
      },
      { amount_minor: args.amount_minor, currency: "EUR", args: { order: args.order } },
    );
    if (!result.ran) throw new Error(`refused: ${result.decision.reason}`);
  };
  const checked = (value) => {
    if (value?.refused === true || (typeof value === "string" && value.includes('"refused":true')))
      throw new Error(`refused: ${JSON.stringify(value)}`);
  };
  const ai = aiTool({ description: "refund", inputSchema: schema, execute: refund });
  const governedAi = governAi(authority, options, { refund: ai }).refund;
  const callOptions = { toolCallId: "call-1", messages: [] };
  const agents = agentTool({ name: "refund", description: "refund", parameters: schema, execute: refund });
  const [governedAgents] = governAgents(authority, options, [agents]);
  const context = new RunContext();
  const input = JSON.stringify(args);
  const lc = langchainTool(refund, { name: "refund", description: "refund", schema });
  const [governedLc] = governLangChain(authority, options, [lc]);
  return [
    ["Vercel AI SDK", direct(() => ai.execute(args, callOptions)), async () => checked(await governedAi.execute(args, callOptions))],
    ["OpenAI Agents SDK", direct(() => agents.invoke(context, input)), async () => checked(await governedAgents.invoke(context, input))],
    ["LangChain.js", direct(() => lc.invoke(args)), async () => checked(await governedLc.invoke(args))],
  ];
}

/** Calls both sides in alternation; answers the per-call wall times of each (ms). */
async function paired(direct, adapter, count) {
  const times = { direct: [], adapter: [] };
  for (let i = 0; i < count; i += 1) {
    for (const [name, call] of i % 2 === 0
      ? [
          ["direct", direct],
          ["adapter", adapter],
        ]
      : [
          ["adapter", adapter],
          ["direct", direct],
        ]) {
      const started = process.hrtime.bigint();
      await call();
      times[name].push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }
  return times;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** A client whose fetch answers in-process at once (allow, then the settlement): what is left to time is the code around the requests. */
function instantClient() {
  const decision = JSON.stringify({
    ledger_id: "led_01bench0000000000000000000",
    outcome: "allow",
    enforcement_mode: "enforce",
    decided_by: null,
    reason_code: "allow",
    reason: "every gate passed",
    gates: [],
    approver: null,
    decided_at: "2026-01-01T00:00:00.000Z",
  });
  const settlement = JSON.stringify({
    ledger_id: "led_01bench0000000000000000001",
    decision_ledger_id: "led_01bench0000000000000000000",
    amount_minor: 1,
    held_minor: 1,
    released_minor: 0,
    currency: "EUR",
    settled_at: "2026-01-01T00:00:00.000Z",
  });
  const fetch = async (url) =>
    new Response(String(url).endsWith("/authorize") ? decision : settlement, {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  return new AuthorityClient({ baseUrl: "http://127.0.0.1:9/v1", apiKey: "aa_bench_instant", fetch });
}

function report(label, framework, times) {
  const [d, a] = [median(times.direct), median(times.adapter)];
  process.stdout.write(
    `  ${framework.padEnd(18)} guard() directly p50 ${(d * 1000).toFixed(1)} µs   through the adapter p50 ${(a * 1000).toFixed(1)} µs   added ${((a - d) * 1000).toFixed(1)} µs (${label})\n`,
  );
}

const dir = mkdtempSync(join(tmpdir(), "authority-bench-frameworks-"));
const server = await startServer(dir);
try {
  const admin = new AuthorityClient({ baseUrl: server.baseUrl, apiKey: ADMIN_KEY });
  const agent = await admin.agents.register({ name: "bench-frameworks" });
  const key = await admin.keys.create({ identity: "bench-frameworks", kind: "service", roles: ["agent"], agent_id: agent.id });
  const grant = await admin.grants.issue({
    agent_id: agent.id,
    principal_type: "service",
    principal_id: "bench",
    scope: { tool: ["shop.*"] },
    enforcement_mode: "observe",
    budget_amount_minor: 10_000_000,
    budget_currency: "EUR",
    ttl_hours: 1,
  });
  const authority = new AuthorityClient({ baseUrl: server.baseUrl, apiKey: key.key });
  process.stdout.write(
    `the adapter's own work: ${LOCAL_CALLS} calls per side with an amount (authorize, run, settle) against a client that answers at once\n`,
  );
  for (const [framework, direct, adapter] of sides(instantClient(), grant.id)) {
    await paired(direct, adapter, WARMUP * 10);
    report("target: within 200 µs", framework, await paired(direct, adapter, LOCAL_CALLS));
  }
  process.stdout.write(`the whole call against the server: ${CALLS} calls per side, SQLite on loopback, in alternation\n`);
  for (const [framework, direct, adapter] of sides(authority, grant.id)) {
    await paired(direct, adapter, WARMUP);
    report("noise of a shared machine included", framework, await paired(direct, adapter, CALLS));
  }
  process.stdout.write(`  load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores\n`);
} finally {
  server.child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
}
