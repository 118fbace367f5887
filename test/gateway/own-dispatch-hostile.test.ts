// The gateway's own dispatch of tools/call end to end, between a host writing hostile lines and an upstream
// answering in hostile ways: each gives a clear JSON-RPC error or error result or is dropped, the gateway
// keeps serving, and no call reaches the upstream without its decision.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { type Connected, connectGateway, decisionsOf, issueGrant, textOf, until, useWorld, writeConfig } from "./harness.js";

const HOSTILE_UPSTREAM = join(import.meta.dirname, "fixtures", "hostile-upstream.mjs");

/** Raw lines on a connected client's transport: what the gateway writes back, kept in order. */
function rawLines(gateway: Connected) {
  const seen: JSONRPCMessage[] = [];
  const forward = gateway.transport.onmessage!;
  gateway.transport.onmessage = (message: JSONRPCMessage) => {
    seen.push(message);
    if (!("id" in message) || typeof message.id !== "string" || !message.id.startsWith("h")) forward(message);
  };
  const answers = (id: unknown) =>
    seen.filter((message) => "id" in message && message.id === id) as (JSONRPCMessage & Record<string, never>)[];
  return {
    seen,
    send: (message: unknown) => gateway.transport.send(message as JSONRPCMessage),
    answer: (id: string) => until(async () => answers(id)[0]),
    answers,
    call: (id: string, name: string, args: Record<string, unknown> = {}, meta?: Record<string, unknown>) =>
      gateway.transport.send({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) },
      }),
  };
}

describe("the gateway's own dispatch of tools/call, end to end", () => {
  const world = useWorld("own-dispatch-agent");

  it("answers hostile host lines and hostile upstream answers clearly, keeps serving, forwards nothing undecided", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["hostile.*"] }, enforcement_mode: "observe" });
    const runsFile = join(world().dir, "hostile-runs.txt");
    writeFileSync(runsFile, "");
    const upstream = `upstreams:\n  hostile:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(HOSTILE_UPSTREAM)}]\n    timeout_ms: 1000\n    env:\n      RUNS_FILE: ${JSON.stringify(runsFile)}\n`;
    const gateway = await connectGateway(world(), writeConfig(world(), grantId, upstream, "hostile.yaml"));
    const host = rawLines(gateway);
    const runs = () => readFileSync(runsFile, "utf8").split("\n").filter(Boolean);
    const resultText = async (id: string) => textOf(((await host.answer(id)) as { result?: unknown }).result);
    try {
      // The host's hostile lines: the MCP SDK's schema errors, as before; ids it cannot take are not answered.
      await host.send({ jsonrpc: "2.0", id: "h1", method: "tools/call", params: { name: 5 } });
      await host.send({ jsonrpc: "2.0", id: "h2", method: "tools/call" });
      await host.send({ jsonrpc: "2.0", id: "h3", method: "tools/call", params: { name: "ok", arguments: [1] } });
      await host.send({ jsonrpc: "2.0", id: 2 ** 60, method: "tools/call", params: { name: "ok" } });
      await host.send({ jsonrpc: "2.0", id: "h4", method: "tools/call", params: { name: "ok" }, extra: 1 });
      for (const id of ["h1", "h2", "h3"]) expect((await host.answer(id)) as unknown).toMatchObject({ error: { code: -32603 } });
      const huge = `h${"9".repeat(50_000)}`;
      await host.call(huge, "ok", { n: 1 });
      expect(await resultText(huge)).toBe('ok {"n":1}');

      // The upstream's hostile answers: forged ids dropped, a bad result or error fails its one call.
      await host.call("h5", "forged_ids");
      expect(await resultText("h5")).toBe("the real answer");
      await host.call("h6", "wrong_shape");
      expect(await resultText("h6")).toMatch(/^`wrong_shape` failed in the upstream `hostile`: .*expected array/s);
      await host.call("h7", "bad_error");
      await host.call("h8", "neither");
      for (const id of ["h7", "h8"]) expect(await resultText(id)).toMatch(/response to `tools\/call` is malformed/);
      await host.call("h9", "good_error");
      expect(await resultText("h9")).toMatch(/MCP error -32000: boom/);

      // Progress: the host's own token, the upstream's malformed and foreign progress dropped.
      await host.call("h10", "progress", {}, { progressToken: "tok" });
      expect(await resultText("h10")).toBe("done");
      const progress = host.seen.filter((message) => "method" in message && message.method === "notifications/progress");
      expect(progress.map((message) => (message as { params: unknown }).params)).toEqual([{ progressToken: "tok", progress: 1, total: 2 }]);

      // Timed out upstream, then cancelled by the host: the upstream is told, its late answers dropped.
      await host.call("h11", "hang");
      expect(await resultText("h11")).toMatch(/failed in the upstream `hostile`: MCP error -32001: Request timed out/);
      await host.call("h12", "hang");
      await until(async () => runs().filter((line) => line === "hang").length === 2);
      await host.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "h12", reason: "enough" } });
      await until(async () => runs().filter((line) => line.startsWith("cancelled")).length === 2);

      // One id twice in flight: one run, both answered; the same id asking something else is refused.
      await host.call("h13", "ok", { n: 2 });
      await host.call("h13", "ok", { n: 2 });
      await until(async () => host.answers("h13").length === 2);
      await host.call("h13", "ok", { n: 3 });
      await until(async () => host.answers("h13").length === 3);
      expect(host.answers("h13").map((answer) => textOf((answer as { result: unknown }).result))).toEqual([
        'ok {"n":2}',
        'ok {"n":2}',
        expect.stringMatching(/already used for another call/),
      ]);

      await host.call("h14", "ok", { n: 4 });
      expect(await resultText("h14")).toBe('ok {"n":4}');
      expect(host.answers("h4")).toEqual([]);
      expect(host.answers("h12")).toEqual([]);
      expect(host.answers(2 ** 60)).toEqual([]);

      // Every run of the upstream had its decision first (observe: each decided `allow` and sealed).
      const decided = (await decisionsOf(world(), grantId)).map((record) => record.request.tool);
      const ran = runs().filter((line) => !line.startsWith("cancelled"));
      expect(ran.filter((name) => name === "ok")).toHaveLength(3);
      for (const name of new Set(ran))
        expect(ran.filter((n) => n === name).length).toBeLessThanOrEqual(decided.filter((tool) => tool === `hostile.${name}`).length);
      expect(gateway.transport.pid).not.toBeNull();
    } finally {
      await gateway.close();
    }
  });
});
