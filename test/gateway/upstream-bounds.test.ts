// An upstream's excesses stay its own: a burst of tool list notices is coalesced, a list over the bound drops that
// upstream's tools without stopping the gateway, and its standard error reaches the gateway's only as JSON lines.
import { join } from "node:path";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { GATEWAY_LIMITS } from "@agent-authority/gateway";
import { describe, expect, it } from "vitest";
import { SERVER_BUILT } from "../server/server-processes.js";
import { connectGateway, issueGrant, logLine, textOf, until, useWorld, writeConfig, type World } from "./harness.js";

const NOISY_SERVER = join(import.meta.dirname, "fixtures", "noisy-server.mjs");
const SHIFTING_SERVER = join(import.meta.dirname, "fixtures", "shifting-server.mjs");

function noisy(name: string, tools: number): string {
  return `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(NOISY_SERVER)}]\n    env:\n      TOOL_COUNT: "${tools}"\n`;
}

async function gatewayOf(world: World, upstreams: string, file: string) {
  const grantId = await issueGrant(world, { scope: { tool: ["noisy.*", "shift.*"] }, enforcement_mode: "observe" });
  return connectGateway(world, writeConfig(world, grantId, `upstreams:\n${upstreams}`, file));
}

function lines(stderr: string): string[] {
  return stderr.split("\n").filter((line) => line.length > 0);
}

describe.skipIf(!SERVER_BUILT)("an upstream's excesses", () => {
  const world = useWorld("gateway-bounds");

  it("coalesces a burst of 2,000 tool list notices into a few re-lists and host notices", async () => {
    const gateway = await gatewayOf(world(), noisy("noisy", 2), "burst.yaml");
    try {
      let told = 0;
      gateway.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        told += 1;
      });
      const sent = await gateway.client.callTool({ name: "burst", arguments: { n: 2_000 } });
      expect(textOf(sent)).toBe("sent 2000");
      const relists = () => lines(gateway.stderr()).filter((line) => line.includes('"msg":"upstream tools changed"')).length;
      // Settled once two reads 300 ms apart see the same count.
      await until(async () => {
        const before = relists();
        await new Promise((resolve) => setTimeout(resolve, 300));
        return before > 0 && relists() === before;
      });
      expect(relists()).toBeLessThanOrEqual(3);
      expect(told).toBeGreaterThanOrEqual(1);
      expect(told).toBeLessThanOrEqual(3);
      expect((await gateway.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(["burst", "t0", "t1"]);
    } finally {
      await gateway.close();
    }
  });

  it("drops the tools of an upstream listing more than 1,024 at start, logs why, and serves the others", async () => {
    const shifting = `  shift:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(SHIFTING_SERVER)}]\n`;
    const gateway = await gatewayOf(world(), `${noisy("noisy", GATEWAY_LIMITS.upstreamToolsMax)}${shifting}`, "many.yaml");
    try {
      const dropped = await logLine(gateway.stderr, "upstream tools dropped");
      expect(dropped).toMatchObject({ level: "error", upstream: "noisy" });
      expect(String(dropped["reason"])).toContain(`more than ${GATEWAY_LIMITS.upstreamToolsMax} tools`);
      const names = (await gateway.client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain("echo");
      expect(names.some((name) => name === "burst" || name.startsWith("t"))).toBe(false);
      expect(textOf(await gateway.client.callTool({ name: "echo", arguments: { text: "still here" } }))).toBe("still here");
    } finally {
      await gateway.close();
    }
  });

  it("writes only JSON lines on standard error, an upstream's own lines wrapped and a long one cut", async () => {
    const gateway = await gatewayOf(world(), noisy("noisy", 1), "stderr.yaml");
    try {
      await gateway.client.listTools();
      await logLine(gateway.stderr, "upstream stderr");
      await until(async () => lines(gateway.stderr()).some((line) => line.includes('"truncated":true')));
      const parsed = lines(gateway.stderr()).map((line) => JSON.parse(line) as Record<string, unknown>);
      const wrapped = parsed.filter((line) => line["msg"] === "upstream stderr");
      expect(wrapped.map((line) => line["line"]).slice(0, 2)).toEqual(["noisy server starting", "not json at all {"]);
      const long = wrapped.find((line) => line["truncated"] === true);
      expect(long).toMatchObject({ upstream: "noisy", line: "L".repeat(GATEWAY_LIMITS.upstreamStderrLineCharsMax) });
      expect(wrapped.length).toBe(3);
    } finally {
      await gateway.close();
    }
  });
});
