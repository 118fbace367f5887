// Tool names the authority server cannot name in a scope are never listed, are logged once, and a call to one is refused and sealed.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SERVER_BUILT } from "../server/server-processes.js";
import { connectGateway, decisionsOf, issueGrant, textOf, useWorld, writeConfig, type World } from "./harness.js";

const UNNAMEABLE_SERVER = join(import.meta.dirname, "fixtures", "unnameable-server.mjs");
const HOSTILE = ["\u0435cho", "../a.echo", "x/../y"];

function config(world: World, grantId: string, file: string): string {
  return writeConfig(
    world,
    grantId,
    `upstreams:\n  odd:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(UNNAMEABLE_SERVER)}]\n`,
    file,
  );
}

describe.skipIf(!SERVER_BUILT)("tool names no grant can name", () => {
  const world = useWorld("gateway-names");

  it.each(["observe", "enforce"])("are not listed, are logged once, and a call is refused and sealed (%s)", async (mode) => {
    const grantId = await issueGrant(world(), { scope: { tool: ["odd.*"] }, enforcement_mode: mode });
    const gateway = await connectGateway(world(), config(world(), grantId, `names-${mode}.yaml`));
    try {
      expect((await gateway.client.listTools()).tools.map((tool) => tool.name)).toEqual(["echo"]);
      expect((await gateway.client.listTools()).tools.map((tool) => tool.name)).toEqual(["echo"]);
      for (const name of HOSTILE) {
        const result = await gateway.client.callTool({ name, arguments: {} });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(/^refused: /);
        expect(textOf(result)).toMatch(/decision led_\w+\)$/);
        expect(textOf(result)).not.toContain(`ran ${name}`);
      }
      const logged = gateway
        .stderr()
        .split("\n")
        .filter((line) => line.includes("tool not listed: the authority server cannot name it"))
        .map((line) => JSON.parse(line) as { tool: string; reason: string });
      expect(logged.map((line) => line.tool).sort()).toEqual([...HOSTILE].sort());
      for (const line of logged) expect(line.reason).toContain("has characters outside");
      const sealed = await decisionsOf(world(), grantId);
      expect(sealed.map((d) => d.request.tool)).toEqual(HOSTILE.map((name) => `odd.${name}`));
      // In enforce the uncertified agent is refused at the certification gate first; in observe the scope gate says why.
      for (const decision of sealed) {
        expect(mode === "enforce" ? decision.outcome : decision.would_outcome).toBe("deny");
        if (mode === "observe") expect(decision.reason_code).toBe("scope.out_of_scope");
      }
    } finally {
      await gateway.close();
    }
  });
});
