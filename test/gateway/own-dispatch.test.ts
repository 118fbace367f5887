// The gateway's own dispatch of tools/call at its trust boundaries, on transports the test holds:
// hostile host lines answered exactly as the MCP SDK's Server answers them, and hostile upstream
// responses failing one call or dropped, never a crash.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CallToolRequestSchema, type CallToolResult, type JSONRPCMessage, McpError } from "@modelcontextprotocol/sdk/types.js";
import { CallLane, callTool, type HostCall, hostCallFront, type LaneOptions } from "@agent-authority/gateway";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

/** A transport whose incoming messages the test writes and whose outgoing messages it reads. */
class HeldTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  readonly sent: { message: JSONRPCMessage; options: TransportSendOptions | undefined }[] = [];
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.sent.push({ message, options });
  }
  async close(): Promise<void> {
    this.onclose?.();
  }
  deliver(message: unknown): void {
    this.onmessage?.(message as JSONRPCMessage);
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 5));
const RESULT: CallToolResult = { content: [{ type: "text", text: "done" }] };

/** The same line given to an SDK Server directly and to one behind the gateway's dispatch: what each writes back. */
async function bothAnswers(lines: readonly unknown[]): Promise<[unknown[], unknown[]]> {
  const answers: unknown[][] = [];
  for (const own of [false, true]) {
    const server = new Server({ name: "s", version: "1" }, { capabilities: { tools: {} } });
    const answer = async (): Promise<CallToolResult> => {
      await settle();
      return RESULT;
    };
    // Set on the protocol layer, past Server's wrapper, as the gateway's session sets it (session.ts).
    const protocolLayer = Object.getPrototypeOf(Server.prototype) as { setRequestHandler: Server["setRequestHandler"] };
    protocolLayer.setRequestHandler.call(server, CallToolRequestSchema, answer);
    const held = new HeldTransport();
    await server.connect(own ? hostCallFront(held, answer) : held);
    for (const line of lines) held.deliver(JSON.parse(JSON.stringify(line)));
    await settle();
    await settle();
    answers.push(held.sent.map((sent) => sent.message));
    await server.close();
  }
  return [answers[0]!, answers[1]!];
}

const call = (id: unknown, params: unknown) => ({ jsonrpc: "2.0", id, method: "tools/call", params });

describe("the host's tools/call through the gateway's own dispatch", () => {
  it("answers hostile lines exactly as the MCP SDK's Server does: the same errors, the same silences", async () => {
    const hostile = [
      call(1, { name: 5 }),
      { jsonrpc: "2.0", id: 2, method: "tools/call" },
      call(3, { name: "t", arguments: [1, 2] }),
      call(4, { name: "t", _meta: { progressToken: { no: 1 } } }),
      call(5, { name: "t", task: { ttl: 5 } }),
      call(2 ** 60, { name: "t" }),
      call(1.5, { name: "t" }),
      call(null, { name: "t" }),
      call({ id: 1 }, { name: "t" }),
      { ...call(6, { name: "t" }), extra: true },
      call("x".repeat(100_000), { name: "t", arguments: {} }),
      call(7, { name: "t", arguments: { a: 1 } }),
    ];
    for (const line of hostile) {
      const [direct, own] = await bothAnswers([line]);
      expect(own).toEqual(direct);
    }
    const [direct] = await bothAnswers([hostile[0]]);
    expect(direct).toMatchObject([{ id: 1, error: { code: -32603, message: expect.stringContaining("expected string") } }]);
  });

  it("answers duplicate ids in flight and cancellations as the SDK does", async () => {
    const sequences = [
      [call(9, { name: "t" }), call(9, { name: "t" })],
      [call(9, { name: "t" }), call(9, { name: "t" }), { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 9 } }],
      [call("a", { name: "t" }), { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "a", reason: 5 } }],
      [call("a", { name: "t" }), { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "a", reason: "stop" } }],
    ];
    for (const lines of sequences) {
      const [direct, own] = await bothAnswers(lines);
      expect(own).toEqual(direct);
    }
  });

  it("answers random tools/call lines as the SDK does", async () => {
    const json = fc.jsonValue({ maxDepth: 2 });
    const line = fc.record(
      {
        jsonrpc: fc.oneof(fc.constant("2.0"), json),
        id: fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), json),
        method: fc.constant("tools/call"),
        params: fc.oneof(
          fc.record(
            { name: fc.oneof(fc.string({ maxLength: 4 }), json), arguments: fc.oneof(fc.object({ maxDepth: 1 }), json) },
            { requiredKeys: [] },
          ),
          json,
        ),
      },
      { requiredKeys: ["jsonrpc", "id", "method"] },
    );
    await fc.assert(
      fc.asyncProperty(line, async (message) => {
        const [direct, own] = await bothAnswers([message]);
        expect(own).toEqual(direct);
      }),
      { numRuns: 60 },
    );
  });

  it("hands its handler what it needs, writes failures as JSON-RPC errors, relays progress on the call's stream", async () => {
    const held = new HeldTransport();
    const seen: HostCall[] = [];
    const front = hostCallFront(held, async (hostCall, _signal, progress) => {
      seen.push(hostCall);
      if (hostCall.name === "mcp") throw new McpError(-32602, "bad");
      if (hostCall.name === "plain") throw new Error("broke");
      await progress?.report(1, 2, "half");
      return RESULT;
    });
    const toSdk: unknown[] = [];
    front.onmessage = (message) => toSdk.push(message);
    await front.start();
    held.deliver(call(1, { name: "t", arguments: { a: 1 }, _meta: { progressToken: "p" } }));
    held.deliver(call(2, { name: "mcp" }));
    held.deliver(call(3, { name: "plain" }));
    held.deliver({ jsonrpc: "2.0", id: 4, method: "tools/list" });
    await settle();
    expect(seen[0]).toEqual({ id: 1, name: "t", args: { a: 1 }, progressToken: "p" });
    expect(toSdk).toEqual([{ jsonrpc: "2.0", id: 4, method: "tools/list" }]);
    expect(held.sent).toEqual([
      {
        message: {
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: "p", progress: 1, total: 2, message: "half" },
        },
        options: { relatedRequestId: 1 },
      },
      { message: { jsonrpc: "2.0", id: 2, error: { code: -32602, message: "MCP error -32602: bad" } }, options: undefined },
      { message: { jsonrpc: "2.0", id: 3, error: { code: -32603, message: "broke" } }, options: undefined },
      { message: { result: RESULT, jsonrpc: "2.0", id: 1 }, options: undefined },
    ]);
  });

  it("aborts every call in flight when the connection closes, and answers none", async () => {
    const held = new HeldTransport();
    const signals: AbortSignal[] = [];
    const front = hostCallFront(held, async (_call, signal) => {
      signals.push(signal);
      await settle();
      return RESULT;
    });
    await front.start();
    held.deliver(call(1, { name: "t" }));
    await held.close();
    await settle();
    expect(signals[0]!.aborted).toBe(true);
    expect(held.sent).toEqual([]);
  });
});

/** A lane on a held transport, with the messages it leaves to the SDK. */
async function lane(): Promise<{ held: HeldTransport; lane: CallLane; toSdk: unknown[] }> {
  const held = new HeldTransport();
  const calls = new CallLane(held);
  const toSdk: unknown[] = [];
  calls.transport.onmessage = (message) => toSdk.push(message);
  await calls.transport.start();
  return { held, lane: calls, toSdk };
}

const lastId = (held: HeldTransport): string => (held.sent.at(-1)!.message as { id: string }).id;
const options = (extra: Partial<LaneOptions> = {}): LaneOptions => ({ signal: new AbortController().signal, timeoutMs: 5_000, ...extra });
const answerTo = (id: string, rest: Record<string, unknown>) => ({ jsonrpc: "2.0", id, ...rest });
const text = (value: string) => ({ content: [{ type: "text", text: value }] });

describe("tools/call towards the upstream through the gateway's own dispatch", () => {
  it("answers its request by its own id, and leaves every id of the SDK's range and every request to the SDK", async () => {
    const { held, lane: calls, toSdk } = await lane();
    const answer = calls.request("t", { a: 1 }, options());
    expect(held.sent[0]!.message).toEqual({ method: "tools/call", params: { name: "t", arguments: { a: 1 } }, jsonrpc: "2.0", id: "gw-1" });
    const theirs = [
      answerTo("zz", { result: text("forged") }),
      { jsonrpc: "2.0", id: 0, result: text("forged") },
      { jsonrpc: "2.0", id: 1, error: { code: 1, message: "forged" } },
      { jsonrpc: "2.0", id: "gw-1", method: "sampling/createMessage", params: {} },
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 0, progress: 1 } },
    ];
    for (const message of theirs) held.deliver(message);
    held.deliver(answerTo("gw-99", { result: text("to no request of ours") }));
    const result = text("the answer");
    held.deliver(answerTo("gw-1", { result }));
    expect(await answer).toBe(result);
    expect(toSdk).toEqual(theirs);
  });

  it("fails one call at once on a malformed response, and keeps an error's code and message", async () => {
    const { held, lane: calls } = await lane();
    const malformed = [
      { error: { code: "x", message: 5 } },
      { error: { code: 1.5, message: "m" } },
      { error: "boom" },
      { result: 5 },
      { result: [1] },
      { result: {}, error: { code: 1, message: "both" } },
      {},
    ];
    for (const rest of malformed) {
      const answer = calls.request("t", {}, options());
      held.deliver(answerTo(lastId(held), rest));
      await expect(answer).rejects.toThrow(/malformed/);
    }
    const answer = calls.request("t", {}, options());
    held.deliver(answerTo(lastId(held), { error: { code: -32000, message: "boom", data: { x: 1 } } }));
    await expect(answer).rejects.toMatchObject({ code: -32000, message: "MCP error -32000: boom", data: { x: 1 } });
  });

  it("drops an answer that comes after a cancellation or a timeout, having told the upstream", async () => {
    const { held, lane: calls, toSdk } = await lane();
    const host = new AbortController();
    const cancelled = calls.request("t", {}, options({ signal: host.signal }));
    host.abort("the host cancelled");
    await expect(cancelled).rejects.toMatchObject({ code: -32001, message: expect.stringContaining("the host cancelled") });
    const timedOut = calls.request("t", {}, options({ timeoutMs: 30 }));
    await expect(timedOut).rejects.toMatchObject({ code: -32001, message: expect.stringContaining("Request timed out") });
    expect(held.sent.slice(1).map((sent) => sent.message)).toEqual([
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "gw-1", reason: "the host cancelled" } },
      { method: "tools/call", params: { name: "t", arguments: {} }, jsonrpc: "2.0", id: "gw-2" },
      {
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: "gw-2", reason: expect.stringContaining("Request timed out") },
      },
    ]);
    held.deliver(answerTo("gw-1", { result: text("late") }));
    held.deliver(answerTo("gw-2", { error: { code: 1, message: "late" } }));
    expect(toSdk).toEqual([]);
    const aborted = new AbortController();
    aborted.abort("before");
    await expect(calls.request("t", {}, options({ signal: aborted.signal }))).rejects.toBe("before");
    expect(held.sent).toHaveLength(4);
  });

  it("relays the upstream's progress for its own token, drops malformed progress, and restarts the timeout on each", async () => {
    const { held, lane: calls } = await lane();
    const seen: unknown[] = [];
    const answer = calls.request("t", {}, options({ timeoutMs: 120, onProgress: (progress) => seen.push(progress) }));
    expect(held.sent[0]!.message).toMatchObject({ params: { _meta: { progressToken: "gw-1" } } });
    const progress = (params: Record<string, unknown>) =>
      held.deliver({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "gw-1", ...params } });
    progress({ progress: "x" });
    progress({ progress: 1, message: 5 });
    progress({ progress: 1, total: "2" });
    for (let n = 1; n <= 3; n += 1) {
      await new Promise((resolve) => setTimeout(resolve, 80));
      progress({ progress: n, total: 3 });
    }
    held.deliver(answerTo("gw-1", { result: text("done") }));
    expect(await answer).toEqual(text("done"));
    expect(seen).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
      { progress: 3, total: 3 },
    ]);
  });

  it("fails every waiting call when the connection closes, and sends nothing after", async () => {
    const { held, lane: calls } = await lane();
    const waiting = [calls.request("a", {}, options()), calls.request("b", {}, options())];
    await held.close();
    for (const answer of waiting) await expect(answer).rejects.toThrow(/Connection closed/);
    await expect(calls.request("c", {}, options())).rejects.toThrow(/Not connected/);
    expect(held.sent).toHaveLength(2);
  });

  it("checks the result once as CallToolResultSchema does, a task-only tool and the output schema as the SDK's client does", async () => {
    const { held, lane: calls } = await lane();
    const client = (taskOnly: boolean, validator?: (input: unknown) => { valid: boolean; errorMessage?: string }) =>
      ({ isToolTaskRequired: () => taskOnly, getToolOutputValidator: () => validator }) as unknown as Client;
    const through = (answer: Record<string, unknown>, on = client(false)) => {
      const result = callTool(calls, on, "t", {}, options());
      held.deliver(answerTo(lastId(held), answer));
      return result;
    };
    await expect(through({ result: { content: "not a list" } })).rejects.toThrow(/expected array/);
    await expect(through({ result: { content: [], isError: "yes" } })).rejects.toThrow(/expected boolean/);
    await expect(through({ result: { content: [], structuredContent: [1] } })).rejects.toThrow(/expected record/);
    await expect(through({ result: { content: [{ type: "image" }] } })).rejects.toThrow();
    const own = { content: [{ type: "text", text: "x", extra: 1 }], more: true };
    expect(await through({ result: own })).toBe(own);
    expect(await through({ result: { isError: false } })).toEqual({ isError: false, content: [] });
    const sentBefore = held.sent.length;
    await expect(callTool(calls, client(true), "t", {}, options())).rejects.toThrow(/requires task-based execution/);
    expect(held.sent).toHaveLength(sentBefore);
    const schema = client(false, (input) => ({ valid: (input as { n?: unknown }).n === 1, errorMessage: "n must be 1" }));
    await expect(through({ result: { content: [] } }, schema)).rejects.toThrow(/did not return structured content/);
    await expect(through({ result: { content: [], structuredContent: { n: 2 } } }, schema)).rejects.toThrow(/n must be 1/);
    expect(await through({ result: { content: [], structuredContent: { n: 1 } } }, schema)).toMatchObject({ structuredContent: { n: 1 } });
  });
});
