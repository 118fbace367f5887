// The gateway's streamable HTTP side (`--listen`), driven by the MCP SDK's own HTTP client transport.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { GATEWAY_LIMITS } from "@agent-authority/gateway";
import { describe, expect, it } from "vitest";
import { SERVER_BUILT } from "../server/server-processes.js";
import {
  CLI,
  connectGateway,
  decisionsOf,
  filesUpstream,
  issueGrant,
  KEY_ENV,
  textOf,
  useWorld,
  writeConfig,
  type World,
  readyField,
} from "./harness.js";

/** The listener's bearer token in these tests, and the configuration block that names its variable. */
const TOKEN_ENV = "GATEWAY_TEST_LISTEN_TOKEN";
const TOKEN = "listen-token-0123456789abcdefghijklmnopqrstuvwxyz";
const HTTP_BLOCK = `http:\n  token_env: ${TOKEN_ENV}\n`;
const withToken = { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } };

/** Runs `authority gateway --listen 127.0.0.1:0` and answers its MCP URL once it is ready. */
async function listening(world: World, config: string): Promise<{ url: string; stderr(): string; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [CLI, "gateway", "--config", config, "--listen", "127.0.0.1:0"], {
    env: { PATH: process.env["PATH"] ?? "", [KEY_ENV]: world.agent.key, [TOKEN_ENV]: TOKEN },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const stop = () => {
    child.kill("SIGTERM");
    return exited;
  };
  try {
    return { url: await readyField(() => stderr, "url"), stderr: () => stderr, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

describe.skipIf(!SERVER_BUILT)("MCP gateway over streamable HTTP", () => {
  const world = useWorld("gateway-http");

  it("serves a session at /mcp: the scope-filtered list and an allowed call that reaches the upstream", async () => {
    const grantId = await issueGrant(world(), {
      scope: { tool: ["files.write_file", "files.read_text_file"] },
      enforcement_mode: "observe",
    });
    const config = writeConfig(world(), grantId, `${HTTP_BLOCK}upstreams:\n${filesUpstream(world())}`);
    const gateway = await listening(world(), config);
    try {
      expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const client = new Client({ name: "gateway-http-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url), withToken));
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
        const body = JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "page", version: "1" } },
        });
        const sent = request(
          {
            host: url.hostname,
            port: url.port,
            path: "/mcp",
            method: "POST",
            headers: {
              host: `evil.example:${url.port}`,
              authorization: `Bearer ${TOKEN}`,
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
            },
          },
          (answer) => {
            answer.resume();
            resolve(answer.statusCode ?? 0);
          },
        );
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
    const inner = await listening(
      world(),
      writeConfig(world(), grantId, `${HTTP_BLOCK}upstreams:\n${filesUpstream(world())}`, "inner.yaml"),
    );
    try {
      const outer = await connectGateway(
        world(),
        writeConfig(world(), grantId, `upstreams:\n  inner:\n    url: ${inner.url}\n    token_env: ${TOKEN_ENV}\n`, "outer.yaml"),
        world().agent.key,
        { [TOKEN_ENV]: TOKEN },
      );
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

/** A raw POST to the listener; answers the status and the session id it gave. */
function post(
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; session: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const sent = request(
      {
        host: target.hostname,
        port: target.port,
        path: "/mcp",
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      },
      (answer) => {
        let text = "";
        answer.on("data", (chunk) => {
          text += String(chunk);
        });
        answer.on("end", () =>
          resolve({ status: answer.statusCode ?? 0, session: answer.headers["mcp-session-id"] as string | undefined, text }),
        );
      },
    );
    sent.on("error", reject);
    sent.end(JSON.stringify(body));
  });
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "idle", version: "1" } },
};

describe.skipIf(!SERVER_BUILT)("the streamable HTTP listener's token and sessions", () => {
  const world = useWorld("gateway-http-sessions");

  it("refuses to listen without a token, and answers 401 to a request without the token or with another", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["files.*"] }, enforcement_mode: "observe" });
    const bare = spawn(
      process.execPath,
      [
        CLI,
        "gateway",
        "--config",
        writeConfig(world(), grantId, `upstreams:\n${filesUpstream(world())}`, "bare.yaml"),
        "--listen",
        "127.0.0.1:0",
      ],
      {
        env: { PATH: process.env["PATH"] ?? "", [KEY_ENV]: world().agent.key },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let bareErr = "";
    bare.stderr.on("data", (chunk) => {
      bareErr += String(chunk);
    });
    expect(await new Promise((resolve) => bare.on("exit", resolve))).toBe(2);
    expect(bareErr).toContain("`--listen` needs a bearer token");
    const gateway = await listening(
      world(),
      writeConfig(world(), grantId, `${HTTP_BLOCK}upstreams:\n${filesUpstream(world())}`, "token.yaml"),
    );
    try {
      for (const headers of [
        {} as Record<string, string>,
        { authorization: "Bearer wrong-token-0123456789abcdefghijklmnopqrstuv" },
        { authorization: `Basic ${TOKEN}` },
        { authorization: `Bearer ${TOKEN}x` },
      ]) {
        const refused = await post(gateway.url, initialize, headers);
        expect(refused.status).toBe(401);
        expect(refused.session).toBeUndefined();
      }
      const client = new Client({ name: "no-token", version: "1.0.0" });
      await expect(client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)))).rejects.toThrow();
      expect((await post(gateway.url, initialize, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    } finally {
      expect(await gateway.stop()).toBe(0);
    }
  });

  it("a full table closes the least recently used idle session, never a live client", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["files.*"] }, enforcement_mode: "observe" });
    const gateway = await listening(
      world(),
      writeConfig(world(), grantId, `${HTTP_BLOCK}upstreams:\n${filesUpstream(world())}`, "full.yaml"),
    );
    const live = new Client({ name: "live", version: "1.0.0" });
    try {
      await live.connect(new StreamableHTTPClientTransport(new URL(gateway.url), withToken));
      // More sessions than the table holds, opened and left idle by a local process that has the token.
      const idle: string[] = [];
      for (let i = 0; i < GATEWAY_LIMITS.httpSessionsMax + 8; i += 1) {
        const opened = await post(gateway.url, initialize, { authorization: `Bearer ${TOKEN}` });
        expect(opened.status, opened.text).toBe(200);
        idle.push(opened.session!);
        // (The live client sends nothing meanwhile: its open event stream is what keeps it.)
      }
      expect(gateway.stderr()).toContain('"http session evicted"');
      expect((await live.listTools()).tools.length).toBeGreaterThan(0);
      // The earliest idle session was evicted: its next request is 404, which tells a client to start again.
      const evicted = await post(
        gateway.url,
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        { authorization: `Bearer ${TOKEN}`, "mcp-session-id": idle[0]!, "mcp-protocol-version": "2025-06-18" },
      );
      expect(evicted.status).toBe(404);
    } finally {
      await live.close();
      expect(await gateway.stop()).toBe(0);
    }
  });

  it("expires a session idle for the configured time; one in use stays", async () => {
    const grantId = await issueGrant(world(), { scope: { tool: ["files.*"] }, enforcement_mode: "observe" });
    const gateway = await listening(
      world(),
      writeConfig(
        world(),
        grantId,
        `http:\n  token_env: ${TOKEN_ENV}\n  session_idle_seconds: 2\nupstreams:\n${filesUpstream(world())}`,
        "idle.yaml",
      ),
    );
    const live = new Client({ name: "live", version: "1.0.0" });
    try {
      await live.connect(new StreamableHTTPClientTransport(new URL(gateway.url), withToken));
      const opened = await post(gateway.url, initialize, { authorization: `Bearer ${TOKEN}` });
      const list = { jsonrpc: "2.0", id: 3, method: "tools/list" };
      const headers = { authorization: `Bearer ${TOKEN}`, "mcp-session-id": opened.session!, "mcp-protocol-version": "2025-06-18" };
      expect((await post(gateway.url, list, headers)).status).toBe(200);
      for (let i = 0; i < 6; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 700));
        expect((await live.listTools()).tools.length).toBeGreaterThan(0);
      }
      expect(gateway.stderr()).toContain('"http session expired"');
      expect((await post(gateway.url, list, headers)).status).toBe(404);
    } finally {
      await live.close();
      expect(await gateway.stop()).toBe(0);
    }
  });
});
