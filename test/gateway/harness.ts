// The gateway under test: a real reference server process, real upstream MCP servers from npm, and
// the gateway itself run as `authority gateway` and driven by the MCP SDK's own Client.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Grant, LedgerRecord } from "@agent-authority/sdk";
import { ADMIN_KEY } from "../server/http-harness.js";
import { agentWithKey, get, post, startServerProcess, type ServerProcess } from "../server/server-processes.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
export const CLI = join(root, "cli", "bin", "authority.js");
export const MEMORY_SERVER = join(root, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js");
export const FILESYSTEM_SERVER = join(root, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");
export const SHIFTING_SERVER = join(root, "test", "gateway", "fixtures", "shifting-server.mjs");
export const POISONING_SERVER = join(root, "test", "gateway", "fixtures", "poisoning-server.mjs");
export const KEY_ENV = "GATEWAY_TEST_AGENT_KEY";

export interface World {
  readonly dir: string;
  readonly files: string;
  readonly server: ServerProcess;
  readonly agent: { readonly id: string; readonly key: string };
  dispose(): Promise<void>;
}

/** A server on a fresh SQLite file, one certified agent with its key, and a directory for files. */
export async function startWorld(name: string): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), "authority-gateway-"));
  const files = join(dir, "files");
  rmSync(files, { recursive: true, force: true });
  await import("node:fs").then((fs) => fs.mkdirSync(files));
  const server = await startServerProcess({ url: join(dir, "authority.db") });
  const agent = await agentWithKey(server.baseUrl, name);
  return {
    dir,
    files,
    server,
    agent,
    async dispose() {
      server.child.kill("SIGKILL");
      await server.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Issues a grant to the world's agent and answers its id. */
export async function issueGrant(world: World, extra: Record<string, unknown>): Promise<string> {
  const reply = await post<Grant>(world.server.baseUrl, "/grants", ADMIN_KEY, {
    agent_id: world.agent.id,
    principal_type: "human",
    principal_id: "ops@example.com",
    ...extra,
  });
  if (reply.status !== 201) throw new Error(`grant not issued: ${JSON.stringify(reply.body)}`);
  return reply.body.id;
}

/** The grant as the server reports it, usage included. */
export function grantNow(world: World, grantId: string): Promise<Grant> {
  return get(world.server.baseUrl, `/grants/${grantId}`, ADMIN_KEY);
}

/** A sealed decision as these tests read it: the ledger keeps the request the gateway sent. */
export type SealedDecision = LedgerRecord & {
  readonly request: {
    readonly tool: string;
    readonly args: Readonly<Record<string, unknown>>;
    readonly amount_minor?: number;
    readonly attestation: { readonly manifest_hash: string };
  };
};

/** The sealed decisions of a grant's tree, in chain order. */
export async function decisionsOf(world: World, grantId: string): Promise<SealedDecision[]> {
  const tree = await get(world.server.baseUrl, `/grants/${grantId}/ledger?limit=1000`, ADMIN_KEY);
  return (tree.records as SealedDecision[]).filter((record) => record.kind === "decision");
}

/** Writes a gateway configuration and answers its path. */
export function writeConfig(world: World, grantId: string, body: string, file = "gateway.yaml"): string {
  const path = join(world.dir, file);
  writeFileSync(
    path,
    `authority:\n  url: ${world.server.baseUrl}\n  key_env: ${KEY_ENV}\n  grant_id: ${grantId}\n  timeout_ms: 1000\n  attempts: 1\n${body}`,
  );
  return path;
}

/** The upstream block for the filesystem server on the world's directory. */
export function filesUpstream(world: World): string {
  return `  files:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(FILESYSTEM_SERVER)}, ${JSON.stringify(world.files)}]\n`;
}

/** The upstream block for the memory server, its graph in the world's directory. */
export function memoryUpstream(world: World): string {
  return `  memory:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(MEMORY_SERVER)}]\n    env:\n      MEMORY_FILE_PATH: ${JSON.stringify(join(world.dir, "memory.jsonl"))}\n`;
}

export interface Connected {
  readonly client: Client;
  readonly transport: StdioClientTransport;
  stderr(): string;
  close(): Promise<void>;
}

/** Runs `authority gateway --config PATH` and connects the MCP SDK's Client to it over stdio. */
export async function connectGateway(
  world: World,
  configPath: string,
  agentKey: string = world.agent.key,
  env: Record<string, string> = {},
): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "gateway", "--config", configPath],
    env: { PATH: process.env["PATH"] ?? "", [KEY_ENV]: agentKey, ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const client = new Client({ name: "gateway-test", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`gateway did not start: ${String(error)}\n${stderr}`);
  }
  return { client, transport, stderr: () => stderr, close: () => client.close() };
}

/** The text of a tool result. */
export function textOf(result: unknown): string {
  const content = (result as CallToolResult).content ?? [];
  return content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("\n");
}

export { ADMIN_KEY, get, post };

import { CERTIFICATION } from "../server/http-harness.js";

/** The attestation block naming the certified content hash and provenance; the gateway adds the manifest hash. */
export const ATTESTATION_BLOCK = `attestation:\n  content_hash: ${CERTIFICATION.content_hash}\n  provenance_version: ${CERTIFICATION.provenance_version}\n`;

/** A field of the gateway's `gateway ready` log line that is text: its manifest hash, or the URL it serves MCP at. */
export async function readyField(stderr: () => string, field: "manifest_hash" | "url"): Promise<string> {
  const value = (await logLine(stderr, "gateway ready"))[field];
  if (typeof value !== "string") throw new Error(`the gateway ready line has no text ${field}`);
  return value;
}

/** Waits until the gateway's log has a line with `msg`, and answers that line parsed. */
export async function logLine(stderr: () => string, msg: string, timeoutMs = 20_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = stderr()
      .split("\n")
      .filter((text) => text.startsWith("{"))
      .map((text) => JSON.parse(text))
      .find((entry) => entry.msg === msg);
    if (line !== undefined) return line;
    if (Date.now() > deadline) throw new Error(`no \`${msg}\` in the gateway log:\n${stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Certifies the world's agent for a manifest hash (superseding its certificate), as a human certifier does. */
export async function certify(world: World, manifestHash: string): Promise<void> {
  const reply = await post(world.server.baseUrl, `/agents/${world.agent.id}/certification`, ADMIN_KEY, {
    ...CERTIFICATION,
    manifest_hash: manifestHash,
  });
  if (reply.status !== 201) throw new Error(`not certified: ${JSON.stringify(reply.body)}`);
}

/** The manifest hash of an upstream's tools as `authority manifest` would hash them, read with a direct client. */
export async function upstreamManifestHash(
  upstream: string,
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<string> {
  const { manifestHash, toolDefinition } = await import("@agent-authority/sdk");
  const client = new Client({ name: "direct", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, env, stderr: "ignore" }));
  try {
    const { tools } = await client.listTools();
    return manifestHash(
      tools.map((tool) => ({ name: `${upstream}.${tool.name}`, kind: "mcp" as const, definition: toolDefinition(tool) })),
    );
  } finally {
    await client.close();
  }
}

/** Starts a world before the enclosing suite and disposes of it after; answers a getter for it. */
export function useWorld(name: string): () => World {
  let world: World | undefined;
  beforeAll(async () => {
    world = await startWorld(name);
  });
  afterAll(async () => {
    await world?.dispose();
  });
  return () => world!;
}

/** Polls `probe` until it answers something other than `undefined` or `false` (a bounded number of times). */
export async function until<T>(probe: () => Promise<T | undefined | false>): Promise<T> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("condition not reached after 400 polls");
}
