// The host configurations of docs/mcp-gateway.md: each snippet, read from the page, starts the gateway with exactly its command, arguments and environment.
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { SERVER_BUILT } from "../server/server-processes.js";
import { decisionsOf, issueGrant, memoryUpstream, textOf, useWorld } from "./harness.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const doc = readFileSync(join(root, "docs", "mcp-gateway.md"), "utf8");
const section = doc.slice(doc.indexOf("## Host configurations"));

interface HostServer {
  readonly type?: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/** The JSON snippet under `### host` in the host configurations section. */
function snippet(host: string): Record<string, unknown> {
  const start = section.indexOf(`### ${host}\n`);
  if (start < 0) throw new Error(`docs/mcp-gateway.md has no host configuration for ${host}`);
  const block = /```json\n([\s\S]*?)```/.exec(section.slice(start));
  return JSON.parse(block![1]!) as Record<string, unknown>;
}

/** Replaces what the host itself replaces: the project's place, VS Code's variables and the key the reader pastes in. */
function resolved(value: string, project: string, key: string): string {
  return value
    .replaceAll("/path/to/project", project)
    .replaceAll("${workspaceFolder}", project)
    .replaceAll("${input:authority-agent-key}", key)
    .replaceAll("aa_…the agent key…", key);
}

const hosts: [string, (config: Record<string, unknown>) => HostServer][] = [
  ["Claude Desktop", (config) => (config["mcpServers"] as Record<string, HostServer>)["authority-gateway"]!],
  [
    "VS Code",
    (config) => {
      expect(config["inputs"]).toEqual([expect.objectContaining({ type: "promptString", id: "authority-agent-key", password: true })]);
      const server = (config["servers"] as Record<string, HostServer>)["authority-gateway"]!;
      expect(server.type).toBe("stdio");
      return server;
    },
  ],
  ["Cursor", (config) => (config["mcpServers"] as Record<string, HostServer>)["authority-gateway"]!],
];

describe("the host configurations of docs/mcp-gateway.md", () => {
  it("are JSON that runs `authority gateway --config` with the agent key in the environment", () => {
    for (const [host, pick] of hosts) {
      const server = pick(snippet(host));
      expect(server.command, host).toBe("node");
      expect(server.args.slice(1, 3), host).toEqual(["gateway", "--config"]);
      expect(Object.keys(server.env), host).toEqual(["AUTHORITY_AGENT_KEY"]);
    }
  });

  describe.skipIf(!SERVER_BUILT)("started as each host starts them", () => {
    const world = useWorld("desktop-bot");

    for (const [host, pick] of hosts) {
      it(`${host}: the gateway starts, lists the grant's tools and has a call decided`, async () => {
        const project = world().dir;
        try {
          symlinkSync(join(root, "node_modules"), join(project, "node_modules"), "dir");
        } catch {
          // The project of an earlier host already has it.
        }
        const grantId = await issueGrant(world(), { scope: { tool: ["memory.read_graph"] }, enforcement_mode: "observe" });
        writeFileSync(
          join(project, "gateway.yaml"),
          `authority:\n  url: ${world().server.baseUrl}\n  key_env: AUTHORITY_AGENT_KEY\n  grant_id: ${grantId}\nupstreams:\n${memoryUpstream(world())}`,
        );
        const server = pick(snippet(host));
        const env = Object.fromEntries(
          Object.entries(server.env).map(([name, value]) => [name, resolved(value, project, world().agent.key)]),
        );
        const transport = new StdioClientTransport({
          command: server.command,
          args: server.args.map((arg) => resolved(arg, project, world().agent.key)),
          env: { PATH: process.env["PATH"] ?? "", ...env },
          stderr: "pipe",
        });
        const client = new Client({ name: host, version: "1.0.0" });
        await client.connect(transport);
        try {
          expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["read_graph"]);
          const result = await client.callTool({ name: "read_graph", arguments: {} });
          expect(result.isError, textOf(result)).toBeFalsy();
          expect((await decisionsOf(world(), grantId)).map((record) => [record.outcome, record.request.tool])).toEqual([
            ["allow", "memory.read_graph"],
          ]);
        } finally {
          await client.close();
        }
      });
    }
  });
});
