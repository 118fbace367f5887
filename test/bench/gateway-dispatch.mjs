// The gateway's dispatch of one tools/call alone, in one process, on transports held in memory (no
// pipes, no server, no decision): the MCP SDK's protocol layer against the gateway's own dispatch
// (docs/decisions/1950-own-tools-call-dispatch.md), alternating round by round, as CPU per call.
//
//   npm run bench -- gateway-dispatch   (or: node test/bench/gateway-dispatch.mjs)
//   BENCH_CALLS=2000                    calls per side and round (default 2000)
//   BENCH_ROUNDS=10                     rounds (default 10)
//
// Host side: a parsed tools/call line given to an SDK `Server` with the handler set on its protocol
// layer (as the gateway did before 1950), or to the same `Server` behind the gateway's dispatch;
// timed until the answer is written. Upstream side: `Client.callTool` with a result schema that
// checks with `CallToolResultSchema` and answers the upstream's object (as before 1950), or the
// gateway's `callTool` on its lane; timed from the call until its result, the upstream's answer
// given as a parsed line at once.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { CallLane, callTool, hostCallFront } from "@agent-authority/gateway";

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const RESULT_LINE = JSON.stringify({ content: [{ type: "text", text: "Allowed directories:\n/tmp/files" }] });
const CALL_LINE = (id) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "list_allowed_directories", arguments: {} } });

/** A transport held in memory: what is sent is handed to `onsend`. */
class Held {
  onsend = () => undefined;
  async start() {}
  async send(message, options) {
    this.onsend(message, options);
  }
  async close() {
    this.onclose?.();
  }
  deliver(message) {
    this.onmessage?.(message);
  }
}

async function hostSide(own) {
  const server = new Server({ name: "s", version: "1" }, { capabilities: { tools: {} } });
  const answer = async () => JSON.parse(RESULT_LINE);
  Object.getPrototypeOf(Server.prototype).setRequestHandler.call(server, CallToolRequestSchema, answer);
  const held = new Held();
  await server.connect(own ? hostCallFront(held, answer) : held);
  let id = 0;
  return () =>
    new Promise((resolve) => {
      held.onsend = resolve;
      held.deliver(JSON.parse(CALL_LINE((id += 1))));
    });
}

/** The result check the gateway handed to `Client.callTool` before 1950. */
const CHECKED_IN_PLACE = {
  safeParse(data) {
    const checked = CallToolResultSchema.safeParse(data);
    if (!checked.success) return checked;
    return { success: true, data: Array.isArray(data.content) ? data : checked.data };
  },
};

async function upstreamSide(own) {
  const held = new Held();
  const lane = new CallLane(held);
  held.onsend = (message) => {
    if (message.method === "initialize")
      queueMicrotask(() =>
        held.deliver({
          jsonrpc: "2.0",
          id: message.id,
          result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "u", version: "1" } },
        }),
      );
    if (message.method === "tools/call")
      queueMicrotask(() => held.deliver(JSON.parse(`{"result":${RESULT_LINE},"jsonrpc":"2.0","id":${JSON.stringify(message.id)}}`)));
  };
  const client = new Client({ name: "g", version: "1" }, { capabilities: {} });
  await client.connect(lane.transport);
  // Each call has a signal of its own, as each host request has in the gateway.
  const args = {};
  if (own)
    return () => callTool(lane, client, "list_allowed_directories", args, { signal: new AbortController().signal, timeoutMs: 60_000 });
  return () =>
    client.callTool({ name: "list_allowed_directories", arguments: args }, CHECKED_IN_PLACE, {
      signal: new AbortController().signal,
      timeout: 60_000,
    });
}

async function cpuOf(run) {
  const before = process.cpuUsage();
  for (let n = 0; n < CALLS; n += 1) await run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

for (const [side, make] of [
  ["host side (a tools/call line in, its answer out)", hostSide],
  ["upstream side (a call sent, its result checked)", upstreamSide],
]) {
  const sdk = await make(false);
  const own = await make(true);
  for (let n = 0; n < 500; n += 1) await Promise.all([sdk(), own()]);
  const totals = { sdk: 0, own: 0 };
  for (let round = 0; round < ROUNDS; round += 1) {
    totals.sdk += await cpuOf(sdk);
    totals.own += await cpuOf(own);
  }
  const perCall = (ms) => `${((1000 * ms) / (CALLS * ROUNDS)).toFixed(1)} µs`;
  process.stdout.write(
    `${side}: the MCP SDK's protocol layer ${perCall(totals.sdk)}, the gateway's own dispatch ${perCall(totals.own)} per call (${(totals.own / totals.sdk).toFixed(2)}×)\n`,
  );
}
process.exit(0);
