// A decision runs its call once (decision 1309): a host that sends a JSON-RPC id again after the
// gateway forgot its result, after hundreds of other calls, or to a restarted gateway, never gets
// the tool run a second time on one decision. Through stdio and through the HTTP listener.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { GATEWAY_LIMITS } from "@agent-authority/gateway";
import { describe, expect, it } from "vitest";
import { SERVER_BUILT } from "../server/server-processes.js";
import {
  ADMIN_KEY,
  ATTESTATION_BLOCK,
  certify,
  connectGateway,
  decisionsOf,
  get,
  grantNow,
  issueGrant,
  post,
  readyField,
  until,
  useWorld,
  writeConfig,
  type World,
} from "./harness.js";
import { HTTP_BLOCK, listening, withToken } from "./listening.js";

const COUNTING_SERVER = join(import.meta.dirname, "fixtures", "counting-server.mjs");

/** The counting upstream, writing each run's label to a file of the world's directory. */
function countingUpstream(world: World, file: string): string {
  return `upstreams:\n  counting:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(COUNTING_SERVER)}]\n    env:\n      COUNT_FILE: ${JSON.stringify(join(world.dir, file))}\n`;
}

/** How many times the tool really ran with `label`. */
function runs(world: World, file: string, label: string): number {
  const path = join(world.dir, file);
  return existsSync(path)
    ? readFileSync(path, "utf8")
        .split("\n")
        .filter((line) => line === label).length
    : 0;
}

/** A transport already connected through a Client, with calls sent under ids of the test's choosing. */
interface Raw {
  call(id: string, label: string, pad?: number, name?: string): Promise<{ isError: boolean; text: string }>;
  close(): Promise<void>;
}

/** Takes over a connected transport's incoming messages for the ids this test sends itself. */
function raw(transport: Transport, close: () => Promise<void>): Raw {
  const waiting = new Map<string, (message: JSONRPCMessage) => void>();
  const forward = transport.onmessage!;
  transport.onmessage = (message, extra) => {
    const id = "id" in message ? String(message.id) : undefined;
    const resolve = id === undefined ? undefined : waiting.get(id);
    if (resolve === undefined) return forward(message, extra);
    waiting.delete(id!);
    resolve(message);
  };
  return {
    async call(id, label, pad = 0, name = "run") {
      const answered = new Promise<JSONRPCMessage>((resolve) => waiting.set(id, resolve));
      await transport.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: { label, pad } } });
      const message = (await answered) as { result?: { isError?: boolean; content?: { text?: string }[] } };
      return { isError: message.result?.isError === true, text: message.result?.content?.map((c) => c.text ?? "").join("\n") ?? "" };
    },
    close,
  };
}

type Start = (world: World, config: string) => Promise<Raw>;

const overStdio: Start = async (world, config) => {
  const gateway = await connectGateway(world, config);
  return raw(gateway.transport, () => gateway.close());
};

const overHttp: Start = async (world, config) => {
  const gateway = await listening(world, config);
  const client = new Client({ name: "one-run", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(gateway.url), withToken);
  await client.connect(transport);
  return raw(transport, async () => {
    await client.close();
    await gateway.stop();
  });
};

/** Issues an enforced grant, certifies the counting upstream's manifest, and answers a config path. */
async function enforcedConfig(
  world: World,
  grant: Record<string, unknown>,
  rest: string,
  extra = "",
): Promise<{ grantId: string; config: string }> {
  const grantId = await issueGrant(world, { enforcement_mode: "enforce", scope: { tool: ["counting.*"] }, ...grant });
  const config = writeConfig(world, grantId, `${ATTESTATION_BLOCK}${extra}${rest}`, `${grantId}.yaml`);
  const probe = await connectGateway(world, config);
  await certify(world, await readyField(probe.stderr, "manifest_hash"));
  await probe.close();
  return { grantId, config };
}

/** Sends `n` other calls (to `name`), each remembered by the session, so the first call's memory is pushed out. */
async function pushOut(gateway: Raw, n: number, prefix: string, name = "run"): Promise<void> {
  for (let i = 0; i < n; i += 1) await gateway.call(`${prefix}-${i}`, `${prefix}-${i}`, 0, name);
}

for (const [transport, start, extra] of [
  ["stdio", overStdio, ""],
  ["http", overHttp, HTTP_BLOCK],
] as const) {
  describe.skipIf(!SERVER_BUILT)(`one run per decision over ${transport}`, () => {
    const world = useWorld(`one-run-${transport}`);

    it("a count budget of 1: a retry after 300 calls and a large result, then after a restart, never runs it again", async () => {
      const file = `count-${transport}.log`;
      const { grantId, config } = await enforcedConfig(world(), { budget_count: 1 }, countingUpstream(world(), file), extra);
      const gateway = await start(world(), config);
      const pad = GATEWAY_LIMITS.rememberedResultCharsMax + 1;
      try {
        const first = await gateway.call("call-1", "first", pad);
        expect(first.isError, first.text).toBe(false);
        // The large result is forgotten as soon as it is sent: the retry is refused as already run.
        const retried = await gateway.call("call-1", "first", pad);
        expect(retried.isError).toBe(true);
        expect(retried.text).toMatch(/already ran under this request id on decision led_\w+/);
        await pushOut(gateway, GATEWAY_LIMITS.rememberedCallsMax + 44, `other-${transport}`);
        const late = await gateway.call("call-1", "first", pad);
        expect(late.isError).toBe(true);
        expect(late.text).toContain("already ran");
      } finally {
        await gateway.close();
      }
      // A restarted gateway is a new session: the same id is a new decision, which the spent budget refuses.
      const restarted = await start(world(), config);
      try {
        const again = await restarted.call("call-1", "first", pad);
        expect(again.isError).toBe(true);
        expect(again.text).not.toContain("already ran");
      } finally {
        await restarted.close();
      }
      expect(runs(world(), file, "first")).toBe(1);
      expect(await grantNow(world(), grantId)).toMatchObject({ uses: 1 });
      const allowed = (await decisionsOf(world(), grantId)).filter((d) => d.outcome === "allow");
      expect(allowed.length).toBe(1);
    });

    it("an amount budget of 100 at 60 a call: one run and 60 settled, however often the id comes back", async () => {
      const file = `amount-${transport}.log`;
      const tools = "tools:\n  counting.run:\n    amount: 60\n    currency: EUR\n";
      const { grantId, config } = await enforcedConfig(
        world(),
        { budget_amount_minor: 100, budget_currency: "EUR" },
        `${countingUpstream(world(), file)}${tools}`,
        extra,
      );
      const gateway = await start(world(), config);
      try {
        expect((await gateway.call("pay-1", "pay")).isError).toBe(false);
        await pushOut(gateway, GATEWAY_LIMITS.rememberedCallsMax + 44, `spend-${transport}`);
        const retried = await gateway.call("pay-1", "pay");
        expect(retried.isError).toBe(true);
        expect(retried.text).toContain("already ran");
      } finally {
        await gateway.close();
      }
      const restarted = await start(world(), config);
      try {
        expect((await restarted.call("pay-1", "pay")).isError).toBe(true);
      } finally {
        await restarted.close();
      }
      expect(runs(world(), file, "pay")).toBe(1);
      expect(await grantNow(world(), grantId)).toMatchObject({ settled_minor: 60, held_minor: 0 });
    });

    it("one human approval lets the call run once, not once per retry", async () => {
      const file = `approval-${transport}.log`;
      const { grantId, config } = await enforcedConfig(
        world(),
        { policy: "approver != null" },
        countingUpstream(world(), file),
        `${extra}approval:\n  wait_seconds: 30\n  poll_ms: 100\n`,
      );
      const gateway = await start(world(), config);
      try {
        const call = gateway.call("gated-1", "gated");
        const pending = await until(async () =>
          (
            await get<{ decisions: { grant_id: string; ledger_id: string }[] }>(world().server.baseUrl, "/decisions/pending", ADMIN_KEY)
          ).decisions.find((d) => d.grant_id === grantId),
        );
        expect((await post(world().server.baseUrl, `/decisions/${pending.ledger_id}/approve`, ADMIN_KEY, {})).status).toBe(201);
        expect((await call).isError).toBe(false);
        // Calls to a tool the gateway does not have are refused at once, and remembered like any.
        await pushOut(gateway, GATEWAY_LIMITS.rememberedCallsMax + 44, `gated-other-${transport}`, "missing");
        for (let retry = 0; retry < 3; retry += 1) {
          const again = await gateway.call("gated-1", "gated");
          expect(again.isError).toBe(true);
          expect(again.text).toContain("already ran");
        }
      } finally {
        await gateway.close();
      }
      expect(runs(world(), file, "gated")).toBe(1);
    });
  });
}
