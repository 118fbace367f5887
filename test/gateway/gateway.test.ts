// The gateway against real MCP servers from npm and the real reference server, driven by the MCP SDK's Client.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVER_BUILT } from "../server/server-processes.js";
import {
  ADMIN_KEY, connectGateway, decisionsOf, filesUpstream, grantNow, issueGrant, memoryUpstream, post, startWorld, textOf, writeConfig, type World,
} from "./harness.js";

describe.skipIf(!SERVER_BUILT)("MCP gateway with real upstreams", () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld("gateway-agent");
  });
  afterAll(async () => {
    await world?.dispose();
  });

  it("forwards an allowed call (the file is written), holds its amount and settles it", async () => {
    const grantId = await issueGrant(world, { scope: { tool: ["files.write_file"] }, budget_amount_minor: 1_000, budget_currency: "EUR", enforcement_mode: "observe" });
    const config = writeConfig(world, grantId, `upstreams:\n${filesUpstream(world)}tools:\n  files.write_file:\n    amount: 250\n    currency: EUR\n    args: [path]\n`);
    const gateway = await connectGateway(world, config);
    try {
      const path = join(world.files, "allowed.txt");
      const result = await gateway.client.callTool({ name: "write_file", arguments: { path, content: "hello" } });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(readFileSync(path, "utf8")).toBe("hello");
      const [decision] = await decisionsOf(world, grantId);
      expect(decision.request).toMatchObject({ tool: "files.write_file", amount_minor: 250, currency: "EUR", args: { path } });
      const usage = await grantNow(world, grantId);
      expect(usage).toMatchObject({ held_minor: 0, settled_minor: 250 });
    } finally {
      await gateway.close();
    }
  });
});
