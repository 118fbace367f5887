// The MCP clients towards the upstream servers: their tools, their changes, and calls forwarded to them.
import { resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type CallToolResult, type Tool, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { UpstreamConfig } from "./config.js";
import { GATEWAY_LIMITS } from "./limits.js";
import type { Log } from "./log.js";

export const GATEWAY_INFO = Object.freeze({ name: "agent-authority-gateway", version: "0.2.0" });

/** One upstream MCP server, reached over stdio or streamable HTTP. */
export class Upstream {
  readonly config: UpstreamConfig;
  #client: Client | undefined;
  #tools: readonly Tool[] = [];
  #closed = false;

  constructor(config: UpstreamConfig) {
    this.config = config;
  }

  get name(): string {
    return this.config.name;
  }

  get tools(): readonly Tool[] {
    return this.#tools;
  }

  /** False once the connection closed (the process exited, the server went away). */
  get alive(): boolean {
    return this.#client !== undefined && !this.#closed;
  }

  /** Connects, reads the tool list and watches it; `onChange` runs after each re-read. */
  async connect(baseDir: string, log: Log, onChange: () => void): Promise<void> {
    const client = new Client(GATEWAY_INFO, { capabilities: {} });
    client.onclose = () => {
      this.#closed = true;
      log.warn("upstream closed", { upstream: this.name });
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      try {
        this.#tools = await this.#listAll(client);
        log.info("upstream tools changed", { upstream: this.name, tools: this.#tools.length });
      } catch (error) {
        // A list that cannot be read is an empty list: nothing unknown is offered or attested.
        this.#tools = [];
        log.error("upstream tools unreadable", { upstream: this.name, error: messageOf(error) });
      }
      onChange();
    });
    await client.connect(transportOf(this.config, baseDir), { timeout: this.config.timeoutMs });
    this.#client = client;
    this.#tools = await this.#listAll(client);
  }

  async #listAll(client: Client): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < GATEWAY_LIMITS.toolPagesMax; page += 1) {
      const answer = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: this.config.timeoutMs });
      tools.push(...answer.tools);
      if (tools.length > GATEWAY_LIMITS.upstreamToolsMax) throw new Error(`upstream \`${this.name}\` lists more than ${GATEWAY_LIMITS.upstreamToolsMax} tools`);
      cursor = answer.nextCursor;
      if (cursor === undefined) return tools;
    }
    throw new Error(`upstream \`${this.name}\` lists tools on more than ${GATEWAY_LIMITS.toolPagesMax} pages`);
  }

  /** Forwards one call; throws when the upstream is gone, times out or breaks the protocol. */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    if (this.#client === undefined || this.#closed) throw new Error(`upstream \`${this.name}\` is not connected`);
    const result = await this.#client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: this.config.timeoutMs });
    return result as CallToolResult;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#client?.close().catch(() => undefined);
  }
}

function transportOf(config: UpstreamConfig, baseDir: string): Transport {
  if (config.kind === "http") return new StreamableHTTPClientTransport(new URL(config.url));
  return new StdioClientTransport({
    command: config.command,
    args: [...config.args],
    // The SDK adds only a safe default environment (PATH, HOME, ...): the agent's key never reaches an upstream.
    env: { ...config.env },
    cwd: resolve(baseDir, config.cwd ?? "."),
    stderr: "inherit",
  });
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
