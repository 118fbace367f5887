// Fail closed: an authority server that answers 5xx, garbage, an unrecorded allow, or nothing in
// time gets every call refused, and the upstream (the real memory server) never sees one.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectGateway, MEMORY_SERVER, textOf, writeConfig, type World } from "./harness.js";

const GRANT_ID = "grt_01jc0000000000000000000000";
type Misbehaviour = "5xx" | "garbage" | "unrecorded-allow" | "silent";

/** An HTTP server that reads like the authority server for the grant and misbehaves on authorize. */
async function brokenAuthority(
  mode: () => Misbehaviour,
): Promise<{ baseUrl: string; authorizeCalls: () => number; close(): Promise<void> }> {
  let calls = 0;
  const server: Server = createServer((request, response) => {
    if (request.method === "GET" && request.url === `/v1/grants/${GRANT_ID}`) {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ id: GRANT_ID, status: "active", scope: { tool: ["memory.*"] } }));
      return;
    }
    calls += 1;
    const misbehaviour = mode();
    if (misbehaviour === "silent") return;
    if (misbehaviour === "5xx") {
      response.writeHead(503, { "content-type": "application/problem+json" });
      response.end(JSON.stringify({ type: "about:blank", title: "unavailable", status: 503, code: "unavailable" }));
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      misbehaviour === "garbage" ? '{"outcome": "allow", ' : JSON.stringify({ outcome: "allow", gates: [], reason: "trust me" }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    authorizeCalls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("MCP gateway fails closed", () => {
  let mode: Misbehaviour = "5xx";
  let authority: Awaited<ReturnType<typeof brokenAuthority>>;
  let world: World;
  beforeAll(async () => {
    authority = await brokenAuthority(() => mode);
    const dir = mkdtempSync(join(tmpdir(), "authority-gateway-closed-"));
    // Only what connectGateway and writeConfig read: the server's URL, the key and the directory.
    world = {
      dir,
      files: dir,
      server: { baseUrl: authority.baseUrl } as World["server"],
      agent: { id: "agt_x", key: "aa_agent_key" },
      dispose: async () => undefined,
    };
  });
  afterAll(async () => {
    await authority?.close();
    if (world !== undefined) rmSync(world.dir, { recursive: true, force: true });
  });

  it("refuses on 5xx, an unparsable answer, an unrecorded allow and a timeout, forwarding nothing", async () => {
    const memory = join(world.dir, "memory.jsonl");
    const upstream = `  memory:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(MEMORY_SERVER)}]\n    env:\n      MEMORY_FILE_PATH: ${JSON.stringify(memory)}\n`;
    const gateway = await connectGateway(world, writeConfig(world, GRANT_ID, `upstreams:\n${upstream}`));
    try {
      expect((await gateway.client.listTools()).tools.length).toBeGreaterThan(0);
      const causes: Record<Misbehaviour, RegExp> = {
        "5xx": /platform unavailable \(server_error\)/,
        garbage: /platform unavailable \(unreadable_response\)/,
        "unrecorded-allow": /platform unavailable \(unreadable_response\)/,
        silent: /platform unavailable \(timeout\)/,
      };
      for (const next of Object.keys(causes) as Misbehaviour[]) {
        mode = next;
        const before = authority.authorizeCalls();
        const result = await gateway.client.callTool({
          name: "create_entities",
          arguments: { entities: [{ name: next, entityType: "t", observations: [] }] },
        });
        expect(result.isError, next).toBe(true);
        expect(textOf(result), next).toMatch(/^refused: `create_entities` was not run because the authority server could not decide/);
        expect(textOf(result), next).toMatch(causes[next]);
        expect(authority.authorizeCalls(), next).toBeGreaterThan(before);
      }
      expect(existsSync(memory) ? readFileSync(memory, "utf8") : "").toBe("");
    } finally {
      await gateway.close();
    }
  });
});
