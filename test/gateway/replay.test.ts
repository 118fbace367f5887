// A decision runs its tool at most once: a host's retry under one JSON-RPC id, after the gateway forgot
// the call (a result over the size it keeps, hundreds of calls since, a restart), never runs the tool again.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { PendingDecision, PendingDecisionList } from "@agent-authority/sdk";
import { GATEWAY_LIMITS } from "@agent-authority/gateway";
import { describe, expect, it } from "vitest";
import { SERVER_BUILT } from "../server/server-processes.js";
import {
  ADMIN_KEY,
  ATTESTATION_BLOCK,
  CLI,
  certify,
  connectGateway,
  decisionsOf,
  get,
  issueGrant,
  KEY_ENV,
  post,
  readyField,
  until,
  useWorld,
  writeConfig,
  type World,
} from "./harness.js";

const COUNTING_SERVER = join(import.meta.dirname, "fixtures", "counting-server.mjs");
const TOKEN_ENV = "GATEWAY_TEST_LISTEN_TOKEN";
const TOKEN = "replay-token-0123456789abcdefghijklmnopqrstuvwxyz";

/** A host as these tests drive it: raw JSON-RPC requests with ids of their choosing. */
interface Host {
  call(id: string, name: string, args: Record<string, unknown>): Promise<JSONRPCMessage>;
  close(): Promise<void>;
}

/** Sends tools/call requests with chosen ids on a connected client's transport and collects their answers. */
function rawCalls(client: Client, transport: Transport): Host["call"] {
  const waiting = new Map<string, (message: JSONRPCMessage) => void>();
  const forward = transport.onmessage!;
  transport.onmessage = (message, extra) => {
    const done = "id" in message ? waiting.get(String(message.id)) : undefined;
    if (done === undefined) return forward(message, extra);
    waiting.delete(String((message as { id: string }).id));
    done(message);
  };
  return (id, name, args) =>
    new Promise((resolve, reject) => {
      waiting.set(id, resolve);
      transport.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }).catch(reject);
      void client;
    });
}

async function stdioHost(world: World, config: string): Promise<Host & { manifestHash(): Promise<string> }> {
  const gateway = await connectGateway(world, config);
  return {
    call: rawCalls(gateway.client, gateway.transport),
    close: () => gateway.close(),
    manifestHash: () => readyField(gateway.stderr, "manifest_hash"),
  };
}

async function httpHost(world: World, config: string): Promise<Host & { manifestHash(): Promise<string> }> {
  const child = spawn(process.execPath, [CLI, "gateway", "--config", config, "--listen", "127.0.0.1:0"], {
    env: { PATH: process.env["PATH"] ?? "", [KEY_ENV]: world.agent.key, [TOKEN_ENV]: TOKEN },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const stop = async () => {
    child.kill("SIGTERM");
    await exited;
  };
  try {
    const url = await readyField(() => stderr, "url");
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
    const client = new Client({ name: "replay-test", version: "1.0.0" });
    await client.connect(transport);
    return {
      call: rawCalls(client, transport),
      close: async () => {
        await client.close();
        await stop();
      },
      manifestHash: () => readyField(() => stderr, "manifest_hash"),
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

type Budget = "count" | "amount" | "approval";

const GRANTS: Record<Budget, Record<string, unknown>> = {
  count: { budget_count: 1 },
  amount: { budget_amount_minor: 100, budget_currency: "EUR" },
  approval: { policy: 'tool != "counting.run" || approver != null' },
};

interface Setup {
  readonly grantId: string;
  readonly config: string;
  readonly runs: () => string[];
}

async function setUp(world: World, budget: Budget, name: string): Promise<Setup> {
  const grantId = await issueGrant(world, { enforcement_mode: "enforce", scope: { tool: ["counting.*"] }, ...GRANTS[budget] });
  const countFile = join(world.dir, `${name}.runs`);
  const upstream = `upstreams:\n  counting:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(COUNTING_SERVER)}]\n    env:\n      COUNT_FILE: ${JSON.stringify(countFile)}\n`;
  const amount = budget === "amount" ? "tools:\n  counting.run:\n    amount: 60\n    currency: EUR\n" : "";
  const listen = `http:\n  token_env: ${TOKEN_ENV}\n`;
  const config = writeConfig(
    world,
    grantId,
    `${ATTESTATION_BLOCK}approval:\n  wait_seconds: 2\n  poll_ms: 100\n${listen}${upstream}${amount}`,
    `${name}.yaml`,
  );
  const runs = () => (existsSync(countFile) ? readFileSync(countFile, "utf8").split("\n").filter(Boolean) : []);
  return { grantId, config, runs };
}

/** The first call of `id`: it runs once, approved by a human when the budget is one approval. */
async function firstCall(world: World, host: Host, setup: Setup, budget: Budget, id: string, chars: number): Promise<JSONRPCMessage> {
  const answer = host.call(id, "run", { tag: id, chars });
  if (budget === "approval") {
    const pending = await until(async () =>
      (await get<PendingDecisionList>(world.server.baseUrl, "/decisions/pending", ADMIN_KEY)).decisions.find(
        (d: PendingDecision) => d.grant_id === setup.grantId,
      ),
    );
    expect((await post(world.server.baseUrl, `/decisions/${pending.ledger_id}/approve`, ADMIN_KEY, {})).status).toBe(201);
  }
  const first = await answer;
  expect(JSON.stringify(first)).not.toContain('"isError":true');
  return first;
}

function textOfAnswer(message: JSONRPCMessage): string {
  const result = (message as { result?: { content?: { text?: string }[] } }).result;
  return result?.content?.map((block) => block.text ?? "").join("") ?? JSON.stringify(message);
}

const TRANSPORTS = { stdio: stdioHost, http: httpHost } as const;
const BUDGETS: Budget[] = ["count", "amount", "approval"];

describe.skipIf(!SERVER_BUILT)("a decision runs its tool at most once", () => {
  const world = useWorld("gateway-replay");

  for (const [transport, start] of Object.entries(TRANSPORTS)) {
    describe(`through ${transport}`, () => {
      it.each(BUDGETS)("a retry of a call whose result was over the kept size is refused as already run (%s)", async (budget) => {
        const setup = await setUp(world(), budget, `${transport}-large-${budget}`);
        const host = await start(world(), setup.config);
        try {
          await certify(world(), await host.manifestHash());
          const first = await firstCall(world(), host, setup, budget, "large-1", GATEWAY_LIMITS.rememberedResultCharsMax + 1);
          expect(textOfAnswer(first).length).toBe(GATEWAY_LIMITS.rememberedResultCharsMax + 1);
          for (let retry = 0; retry < 3; retry++) {
            const again = await host.call("large-1", "run", { tag: "large-1", chars: GATEWAY_LIMITS.rememberedResultCharsMax + 1 });
            expect(textOfAnswer(again)).toMatch(/^refused: `run` already ran on decision led_\w+ /);
          }
          expect(setup.runs()).toEqual(["large-1"]);
        } finally {
          await host.close();
        }
      });

      it.each(BUDGETS)("a retry after 300 other calls is answered the stored result or refused, never run again (%s)", async (budget) => {
        const setup = await setUp(world(), budget, `${transport}-evicted-${budget}`);
        const host = await start(world(), setup.config);
        try {
          await certify(world(), await host.manifestHash());
          await firstCall(world(), host, setup, budget, "evicted-1", 10);
          for (let i = 0; i < GATEWAY_LIMITS.rememberedCallsMax + 44; i++) await host.call(`between-${i}`, "echo", { text: `${i}` });
          const again = await host.call("evicted-1", "run", { tag: "evicted-1", chars: 10 });
          expect(textOfAnswer(again)).toMatch(/^refused: `run` already ran on decision led_\w+ /);
          expect(setup.runs()).toEqual(["evicted-1"]);
        } finally {
          await host.close();
        }
      });

      it.each(BUDGETS)("a retry after the gateway restarted does not run the tool again (%s)", async (budget) => {
        const setup = await setUp(world(), budget, `${transport}-restart-${budget}`);
        let host = await start(world(), setup.config);
        try {
          await certify(world(), await host.manifestHash());
          await firstCall(world(), host, setup, budget, "restart-1", 10);
          await host.close();
          host = await start(world(), setup.config);
          const again = await host.call("restart-1", "run", { tag: "restart-1", chars: 10 });
          expect(textOfAnswer(again)).toMatch(/^refused: /);
          expect(setup.runs()).toEqual(["restart-1"]);
          const allowed = (await decisionsOf(world(), setup.grantId)).filter(
            (d) => d.outcome === "allow" && d.request.tool === "counting.run",
          );
          expect(allowed.length).toBe(1);
        } finally {
          await host.close();
        }
      });
    });
  }
});
