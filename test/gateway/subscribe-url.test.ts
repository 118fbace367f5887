// resources/subscribe and resources/unsubscribe pass through a `url` (streamable HTTP) upstream as through a `command` one.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SERVER_BUILT } from "../server/server-processes.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CLI, connectGateway, issueGrant, KEY_ENV, readyField, useWorld, writeConfig } from "./harness.js";

const EVERYTHING = join(process.cwd(), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

describe.skipIf(!SERVER_BUILT)("subscriptions through each kind of upstream", () => {
  const world = useWorld("gateway-subscribe");

  it("subscribes through the HTTP listener to a url upstream", async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
      env: { PATH: process.env["PATH"] ?? "", PORT: String(port) },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let log = "";
    child.stderr.on("data", (chunk) => {
      log += String(chunk);
    });
    for (let i = 0; i < 200 && !log.includes("listening"); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    const grantId = await issueGrant(world(), { scope: { tool: ["resource:everything"] }, enforcement_mode: "observe" });
    const token = "subscribe-token-0123456789abcdefghijklmnopqrstuvwxyz";
    const config = writeConfig(
      world(),
      grantId,
      `http:\n  token_env: SUB_TOKEN\nupstreams:\n  everything:\n    url: http://127.0.0.1:${port}/mcp\n`,
      "sub-listen.yaml",
    );
    const gateway = spawn(process.execPath, [CLI, "gateway", "--config", config, "--listen", "127.0.0.1:0"], {
      env: { PATH: process.env["PATH"] ?? "", [KEY_ENV]: world().agent.key, SUB_TOKEN: token },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let gatewayLog = "";
    gateway.stderr.on("data", (chunk) => {
      gatewayLog += String(chunk);
    });
    try {
      const url = await readyField(() => gatewayLog, "url");
      for (let n = 0; n < 2; n++) {
        const client = new Client({ name: "sub", version: "1.0.0" });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
        );
        const uri = "test://watched-resource";
        await expect(client.subscribeResource({ uri }), gatewayLog).resolves.toEqual({});
        await expect(client.unsubscribeResource({ uri }), gatewayLog).resolves.toEqual({});
        await client.close();
      }
    } finally {
      gateway.kill("SIGKILL");
      child.kill("SIGKILL");
    }
  });

  it.each(["command", "url"])("subscribes to and unsubscribes from a resource of a %s upstream", async (kind) => {
    let upstream = `  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING)}, stdio]\n`;
    let stop: () => void = () => undefined;
    if (kind === "url") {
      const port = await freePort();
      const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
        env: { PATH: process.env["PATH"] ?? "", PORT: String(port) },
        stdio: ["ignore", "ignore", "pipe"],
      });
      stop = () => {
        child.kill("SIGKILL");
      };
      let log = "";
      child.stderr.on("data", (chunk) => {
        log += String(chunk);
      });
      for (let i = 0; i < 200 && !log.includes("listening"); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
      upstream = `  everything:\n    url: http://127.0.0.1:${port}/mcp\n`;
    }
    const grantId = await issueGrant(world(), { scope: { tool: ["resource:everything"] }, enforcement_mode: "observe" });
    const gateway = await connectGateway(world(), writeConfig(world(), grantId, `upstreams:\n${upstream}`, `subscribe-${kind}.yaml`));
    try {
      expect(gateway.client.getServerCapabilities()?.resources?.subscribe).toBe(true);
      // The conformance suite subscribes to a URI no list names; a single upstream serving resources owns it.
      const uri = "test://watched-resource";
      await expect(gateway.client.subscribeResource({ uri })).resolves.toEqual({});
      await expect(gateway.client.unsubscribeResource({ uri })).resolves.toEqual({});
    } finally {
      await gateway.close();
      stop();
    }
  });
});
