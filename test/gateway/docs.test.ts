// docs/mcp-gateway.md: its configuration is valid, and its refusal reads as the gateway writes it.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseGatewayConfig } from "@agent-authority/gateway";
import { SERVER_BUILT } from "../server/server-processes.js";
import { ATTESTATION_BLOCK, certify, connectGateway, issueGrant, logLine, useWorld, textOf, writeConfig } from "./harness.js";

const doc = readFileSync(new URL("../../docs/mcp-gateway.md", import.meta.url), "utf8");
const yamlBlock = /```yaml\n([\s\S]*?)```/.exec(doc)![1]!;
const refusal = /```text\n(refused: [^\n]*)\n```/.exec(doc)![1]!;

describe("docs/mcp-gateway.md", () => {
  it("holds a configuration the gateway accepts, and a host snippet that is JSON", () => {
    const parsed = parseGatewayConfig(yamlBlock, "gateway.yaml");
    expect(parsed.ok ? [] : parsed.diagnostics).toEqual([]);
    const host = JSON.parse(/```json\n([\s\S]*?)```/.exec(doc)![1]!);
    expect(host.mcpServers.files.args.slice(1, 3)).toEqual(["gateway", "--config"]);
  });

  describe.skipIf(!SERVER_BUILT)("the five-minute example", () => {
    const world = useWorld("notes-bot");

    it("refuses a write outside the notes with the text the page shows", async () => {
      const grantId = await issueGrant(world(), {
        scope: { tool: ["files.write_file", "files.list_allowed_directories"] }, enforcement_mode: "enforce", policy: `startsWith(args.path, "${world().files}/notes/")`,
      });
      mkdirSync(join(world().files, "notes"));
      const upstreams = yamlBlock.slice(yamlBlock.indexOf("upstreams:")).replace("node_modules/", join(process.cwd(), "node_modules/")).replace("/tmp/agent-files", world().files);
      const gateway = await connectGateway(world(), writeConfig(world(), grantId, `${ATTESTATION_BLOCK}${upstreams}`));
      try {
        await certify(world(), (await logLine(gateway.stderr, "gateway ready"))["manifest_hash"]);
        expect((await gateway.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(["list_allowed_directories", "write_file"]);
        const allowed = await gateway.client.callTool({ name: "write_file", arguments: { path: join(world().files, "notes", "hello.md"), content: "hi" } });
        expect(allowed.isError, textOf(allowed)).toBeFalsy();
        const refused = await gateway.client.callTool({ name: "write_file", arguments: { path: join(world().files, "secret.txt"), content: "no" } });
        const shown = textOf(refused).replace(/grt_\w+/, "grt_…").replace(/led_\w+/, "led_…");
        expect(shown).toBe(refusal);
      } finally {
        await gateway.close();
      }
    });
  });
});
