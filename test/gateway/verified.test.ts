// The gateway verifies the server's word by default (keys fetched once) and with its keys pinned
// (`authority.signing_keys`): behind a forging proxy, an unsigned allow, an allow the server gave
// to a rewritten request, a stripped signature and an earlier allow replayed are refused with the
// reason, and the upstream (the real filesystem server) never runs; the honest answer through the
// same proxy runs the call.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVER_BUILT } from "../server/server-processes.js";
import { connectGateway, filesUpstream, issueGrant, startWorld, textOf, writeConfig, type World } from "./harness.js";

type Forgery = "none" | "unsigned-allow" | "other-path" | "stripped" | "replayed";

/** Forwards to the real server; on authorize, forges as `mode` says. */
async function forgingProxy(upstream: string, mode: () => Forgery): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const target = new URL(upstream);
  let honest: string | undefined;
  const proxy: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      let text = Buffer.concat(chunks).toString("utf8");
      const authorize = incoming.url?.endsWith("/authorize") === true;
      if (authorize && mode() === "unsigned-allow") {
        const forged = JSON.stringify({
          outcome: "allow",
          ledger_id: "led_forged",
          gates: [],
          reason: "trust me",
          decided_at: new Date().toISOString(),
        });
        outgoing.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(forged) });
        outgoing.end(forged);
        return;
      }
      if (authorize && mode() === "replayed" && honest !== undefined) {
        outgoing.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(honest) });
        outgoing.end(honest);
        return;
      }
      // The server is asked about another file than the one the gateway will write.
      if (authorize && mode() === "other-path") text = JSON.stringify({ ...JSON.parse(text), args: { path: "/elsewhere.txt" } });
      const onward = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: incoming.method,
          path: incoming.url,
          headers: { ...incoming.headers, host: target.host, "content-length": String(Buffer.byteLength(text)) },
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => parts.push(chunk));
          answer.on("end", () => {
            let body = Buffer.concat(parts).toString("utf8");
            if (authorize && mode() === "none") honest = body;
            if (authorize && mode() === "stripped") {
              const { signature: _dropped, ...unsigned } = JSON.parse(body) as Record<string, unknown>;
              body = JSON.stringify(unsigned);
            }
            const headers = { ...answer.headers, "content-length": String(Buffer.byteLength(body)) };
            outgoing.writeHead(answer.statusCode ?? 502, headers);
            outgoing.end(body);
          });
        },
      );
      onward.end(text);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}

describe.skipIf(!SERVER_BUILT)("MCP gateway verifying signed decisions", () => {
  let world: World;
  let mode: Forgery = "none";
  let proxy: Awaited<ReturnType<typeof forgingProxy>>;
  beforeAll(async () => {
    world = await startWorld("verifying-gateway");
    proxy = await forgingProxy(world.server.baseUrl, () => mode);
  });
  afterAll(async () => {
    await proxy?.close();
    await world?.dispose();
  });

  for (const [keys, line] of [
    ["pinned keys", "  signing_keys: keys.json\n"],
    ["no signing configuration at all", ""],
  ] as const) {
    it(`with ${keys}: runs the honest call and refuses every forged answer, forwarding nothing`, async () => {
      const grantId = await issueGrant(world, { scope: { tool: ["files.write_file"] }, enforcement_mode: "observe" });
      writeFileSync(join(world.dir, "keys.json"), await (await fetch(`${world.server.baseUrl}/signing-keys`)).text());
      const config = writeConfig(
        { ...world, server: { ...world.server, baseUrl: proxy.baseUrl } },
        grantId,
        `upstreams:\n${filesUpstream(world)}tools:\n  files.write_file:\n    args: [path]\n`,
        `gateway-${line === "" ? "default" : "pinned"}.yaml`,
      );
      writeFileSync(config, readFileSync(config, "utf8").replace("  attempts: 1\n", `  attempts: 1\n${line}`));
      const gateway = await connectGateway(world, config);
      try {
        mode = "none";
        const honest = join(world.files, `honest-${line.length}.txt`);
        const ran = await gateway.client.callTool({ name: "write_file", arguments: { path: honest, content: "ok" } });
        expect(ran.isError, textOf(ran)).toBeFalsy();
        expect(readFileSync(honest, "utf8")).toBe("ok");
        for (const [forgery, reason] of [
          ["unsigned-allow", /unverified_answer\).*unsigned/],
          ["other-path", /unverified_answer\).*mismatch/],
          ["stripped", /unverified_answer\).*unsigned/],
          ["replayed", /unverified_answer\)/],
        ] as const) {
          mode = forgery;
          const path = join(world.files, `${forgery}-${line.length}.txt`);
          const refused = await gateway.client.callTool({ name: "write_file", arguments: { path, content: "forged" } });
          expect(refused.isError, forgery).toBe(true);
          expect(textOf(refused), forgery).toMatch(reason);
          expect(existsSync(path), forgery).toBe(false);
        }
      } finally {
        await gateway.close();
      }
    });
  }

  it("does not start with a signing_keys file that is no JWKS, saying why", async () => {
    const grantId = await issueGrant(world, { scope: { tool: ["files.write_file"] }, enforcement_mode: "observe" });
    writeFileSync(join(world.dir, "not-keys.json"), '{"keys": 1}');
    const config = writeConfig(world, grantId, `upstreams:\n${filesUpstream(world)}`, "bad-keys.yaml");
    writeFileSync(config, readFileSync(config, "utf8").replace("  attempts: 1\n", "  attempts: 1\n  signing_keys: not-keys.json\n"));
    await expect(connectGateway(world, config)).rejects.toThrow(/signingKeys must be a JWKS/);
  });
});
