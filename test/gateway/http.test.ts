// The gateway's streamable HTTP side (`--listen`), driven by the MCP SDK's own HTTP client transport.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { SERVER_BUILT } from "../server/server-processes.js";
import { CLI, connectGateway, decisionsOf, filesUpstream, issueGrant, KEY_ENV, logLine, textOf, useWorld, writeConfig, type World } from "./harness.js";

/** Runs `authority gateway --listen 127.0.0.1:0` and answers its MCP URL once it is ready. */
async function listening(world: World, config: string): Promise<{ url: string; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [CLI, "gateway", "--config", config, "--listen", "127.0.0.1:0"], {
    env: { PATH: process.env["PATH"] ?? "", [KEY_ENV]: world.agent.key }, stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => { stderr += String(chunk); });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const stop = () => {
    child.kill("SIGTERM");
    return exited;
  };
  try {
    return { url: (await logLine(() => stderr, "gateway ready"))["url"], stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

describe.skipIf(!SERVER_BUILT)("MCP gateway over streamable HTTP", () => {
  const world = useWorld("gateway-http");

  it("serves a session at /mcp: the scope-filtered list and an allowed call that reaches the upstream", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["files.write_file", "files.read_text_file"] }, enforcement_mode: "observe" });
    const config = writeConfig(world(), grantId, `upstreams:\n${filesUpstream(world())}`);
    const gateway = await listening(world(), config);
    try {
      expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const client = new Client({ name: "gateway-http-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
      expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(["read_text_file", "write_file"]);
      const path = join(world().files, "over-http.txt");
      const result = await client.callTool({ name: "write_file", arguments: { path, content: "via http" } });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(readFileSync(path, "utf8")).toBe("via http");
      expect((await decisionsOf(world(), grantId)).map((d) => [d.request.tool, d.outcome])).toEqual([["files.write_file", "allow"]]);
      await client.close();
      // A page that rebinds a name to the loopback address sends its own Host header: refused.
      const rebound = await new Promise<number>((resolve, reject) => {
        const url = new URL(gateway.url);
        const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "page", version: "1" } } });
        const sent = request({ host: url.hostname, port: url.port, path: "/mcp", method: "POST", headers: { host: `evil.example:${url.port}`, "content-type": "application/json", accept: "application/json, text/event-stream" } }, (answer) => {
          answer.resume();
          resolve(answer.statusCode ?? 0);
        });
        sent.on("error", reject);
        sent.end(body);
      });
      expect(rebound).toBe(403);
    } finally {
      expect(await gateway.stop()).toBe(0);
    }
  });

  it("reaches an upstream by streamable HTTP URL: a gateway behind a gateway, each deciding", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["files.write_file", "inner.write_file"] }, enforcement_mode: "observe" });
    const inner = await listening(world(), writeConfig(world(), grantId, `upstreams:\n${filesUpstream(world())}`, "inner.yaml"));
    try {
      const outer = await connectGateway(world(), writeConfig(world(), grantId, `upstreams:\n  inner:\n    url: ${inner.url}\n`, "outer.yaml"));
      try {
        expect((await outer.client.listTools()).tools.map((tool) => tool.name)).toEqual(["write_file"]);
        const path = join(world().files, "twice-decided.txt");
        const result = await outer.client.callTool({ name: "write_file", arguments: { path, content: "twice" } });
        expect(result.isError, textOf(result)).toBeFalsy();
        expect(readFileSync(path, "utf8")).toBe("twice");
        expect((await decisionsOf(world(), grantId)).map((d) => d.request.tool)).toEqual(["inner.write_file", "files.write_file"]);
      } finally {
        await outer.close();
      }
    } finally {
      expect(await inner.stop()).toBe(0);
    }
  });
});
