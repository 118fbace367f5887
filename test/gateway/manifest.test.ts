// Tool poisoning is caught: the manifest hash covers each tool's definition, `authority manifest
// --config` computes what the gateway attests, and a tool changed behind its name is refused under
// an enforce grant until it is certified again.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { manifestHash } from "@agent-authority/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { SERVER_BUILT } from "../server/server-processes.js";
import {
  ATTESTATION_BLOCK,
  certify,
  CLI,
  connectGateway,
  decisionsOf,
  filesUpstream,
  issueGrant,
  POISONING_SERVER,
  textOf,
  upstreamManifestHash,
  useWorld,
  writeConfig,
  until,
  readyField,
} from "./harness.js";

const poisoning = `upstreams:\n  notes:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(POISONING_SERVER)}]\n`;

/** `authority manifest --config FILE --format json`, run as a user runs it. */
function cliManifest(config: string): { manifest_hash: string; tools: { action: string }[] } {
  const run = spawnSync(process.execPath, [CLI, "manifest", "--config", config, "--format", "json"], { encoding: "utf8", timeout: 60_000 });
  if (run.status !== 0) throw new Error(`authority manifest exited ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** The hash of the tool names alone (the old form), read with a direct client. */
async function namesOnlyHash(): Promise<string> {
  const client = new Client({ name: "direct", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [POISONING_SERVER], stderr: "ignore" }));
  try {
    return manifestHash((await client.listTools()).tools.map((tool) => ({ name: `notes.${tool.name}`, kind: "mcp" as const })));
  } finally {
    await client.close();
  }
}

/** Every manifest hash the gateway logged, in order. */
function hashesLogged(stderr: string): string[] {
  return stderr
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.msg === "manifest hash")
    .map((entry) => entry.manifest_hash);
}

describe("authority manifest --config on a broken configuration", () => {
  it("reports each error at file:line:col and exits 1, starting nothing", () => {
    const dir = mkdtempSync(join(tmpdir(), "authority-manifest-config-"));
    try {
      const config = join(dir, "gateway.yaml");
      writeFileSync(
        config,
        "authority:\n  url: http://authority.example.com/v1\n  key_env: K\n  grant_id: grant-7\nupstreams:\n  notes:\n    command: no-such-command\n",
      );
      const run = spawnSync(process.execPath, [CLI, "manifest", "--config", config], { encoding: "utf8", timeout: 60_000 });
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(/gateway\.yaml:2:8: error: `authority\.url` must be https, or http on a loopback address/);
      expect(run.stderr).toMatch(/gateway\.yaml:4:13: error: `authority\.grant_id` must be a string matching/);
      expect(run.stdout).toBe("");
      const usage = spawnSync(process.execPath, [CLI, "manifest", "--config", config, "src"], { encoding: "utf8", timeout: 60_000 });
      expect(usage.status).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!SERVER_BUILT)("manifest hash over tool definitions", () => {
  const world = useWorld("gateway-manifest");

  it("`authority manifest --config` prints the hash the gateway attests, for real upstreams", async () => {
    for (const [name, upstreams] of [
      ["files", `upstreams:\n${filesUpstream(world())}`],
      ["notes", poisoning],
    ] as const) {
      const grantId = await issueGrant(world(), { scope: { tool: [`${name}.*`] }, enforcement_mode: "observe" });
      const config = writeConfig(world(), grantId, `${ATTESTATION_BLOCK}${upstreams}`, `manifest-${name}.yaml`);
      const printed = cliManifest(config);
      const gateway = await connectGateway(world(), config);
      try {
        expect(await readyField(gateway.stderr, "manifest_hash")).toBe(printed.manifest_hash);
      } finally {
        await gateway.close();
      }
      expect(printed.tools.every((tool) => tool.action.startsWith(`${name}.`))).toBe(true);
    }
    expect(cliManifest(writeConfig(world(), "grt_01jc0000000000000000000000", poisoning, "direct.yaml")).manifest_hash).toBe(
      await upstreamManifestHash("notes", process.execPath, [POISONING_SERVER]),
    );
  });

  it("refuses a tool poisoned behind its name under enforce until it is certified again", async () => {
    const namesBefore = await namesOnlyHash();
    const grantId = await issueGrant(world(), { scope: { tool: ["notes.*"] }, enforcement_mode: "enforce" });
    const gateway = await connectGateway(world(), writeConfig(world(), grantId, `${ATTESTATION_BLOCK}${poisoning}`, "poison.yaml"));
    try {
      const certified = await readyField(gateway.stderr, "manifest_hash");
      await certify(world(), certified);
      let changes = 0;
      gateway.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changes += 1;
      });
      expect(textOf(await gateway.client.callTool({ name: "read_note", arguments: { path: "a" } }))).toBe("note a");
      expect(textOf(await gateway.client.callTool({ name: "poison", arguments: {} }))).toBe("poisoned");
      await until(async () => changes > 0 || undefined);
      // The gateway read the list again and attests a new hash.
      const changed = await until(async () => hashesLogged(gateway.stderr()).find((hash) => hash !== certified));
      // The same names: a hash of names alone would not have noticed.
      expect(await namesOnlyHash()).toBe(namesBefore);
      const listed = (await gateway.client.listTools()).tools.find((tool) => tool.name === "read_note")!;
      expect(listed.description).toContain("IMPORTANT");
      const refused = await gateway.client.callTool({ name: "read_note", arguments: { path: "b", backup: "key" } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^refused: deny by the certification gate \(certification\.attestation_mismatch\)/);
      // Certified again for what it now is, the call runs.
      await certify(world(), changed);
      expect(textOf(await gateway.client.callTool({ name: "read_note", arguments: { path: "c" } }))).toBe("note c");
      // An annotation alone changes the hash too.
      expect(textOf(await gateway.client.callTool({ name: "annotate", arguments: {} }))).toBe("annotated");
      await until(async () => changes > 1 || undefined);
      const annotated = await gateway.client.callTool({ name: "read_note", arguments: { path: "d" } });
      expect(textOf(annotated)).toMatch(/^refused: deny by the certification gate \(certification\.attestation_mismatch\)/);
      const outcomes = (await decisionsOf(world(), grantId)).map((d) => [d.request.tool, d.outcome]);
      expect(outcomes).toEqual([
        ["notes.read_note", "allow"],
        ["notes.poison", "allow"],
        ["notes.read_note", "deny"],
        ["notes.read_note", "allow"],
        ["notes.annotate", "allow"],
        ["notes.read_note", "deny"],
      ]);
    } finally {
      await gateway.close();
    }
  });
});
