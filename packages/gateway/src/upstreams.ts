// The MCP clients towards the upstream servers: their tools, their changes, and calls forwarded to them.
import { resolve } from "node:path";
import { Readable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type CallToolResult,
  type CompleteRequest,
  type CompleteResult,
  type GetPromptResult,
  LoggingMessageNotificationSchema,
  type LoggingLevel,
  type LoggingMessageNotification,
  McpError,
  PromptListChangedNotificationSchema,
  type ReadResourceResult,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type ServerCapabilities,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { UpstreamConfig } from "./config.js";
import { GATEWAY_LIMITS } from "./limits.js";
import type { Log } from "./log.js";
import { wrapStderr } from "./stderr-lines.js";
import { boundReadBuffer } from "./stdio-buffer.js";
import { CallLane, callTool, type OnProgress } from "./upstream-calls.js";

export type { OnProgress } from "./upstream-calls.js";

export const GATEWAY_INFO = Object.freeze({ name: "agent-authority-gateway", version: "0.2.0" });

/** What an upstream tells the hosts through the gateway: its log messages and its changed lists. */
export type UpstreamNotice =
  | { readonly kind: "log"; readonly params: LoggingMessageNotification["params"] }
  | { readonly kind: "resources_changed" }
  | { readonly kind: "resource_updated"; readonly uri: string }
  | { readonly kind: "prompts_changed" };

/** The JSON-RPC error code of a request an upstream makes that the gateway does not relay (method not found). */
export const NOT_RELAYED_CODE = -32601;

/** One upstream MCP server, reached over stdio or streamable HTTP, restarted when it goes away. */
export class Upstream {
  readonly config: UpstreamConfig;
  #client: Client | undefined;
  /** The connection's transport, with the gateway's own `tools/call` requests (upstream-calls.ts). */
  #lane: CallLane | undefined;
  #tools: readonly Tool[] = [];
  #up = false;
  /** Set by `close`: the gateway is stopping, so nothing restarts. */
  #stopping = false;
  /** Counts connections, so that a late event of an old one changes nothing. */
  #generation = 0;
  #failures = 0;
  /** A re-list in flight, and whether another notice came during it: a burst of notices costs two lists. */
  #relisting = false;
  #relistAgain = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #hooks: { baseDir: string; log: Log; onChange: () => void; onNotice: (upstream: string, notice: UpstreamNotice) => void } | undefined;

  constructor(config: UpstreamConfig) {
    this.config = config;
  }

  get name(): string {
    return this.config.name;
  }

  /** The tools it listed last, also while it is down (the manifest keeps them until it is back). */
  get tools(): readonly Tool[] {
    return this.#tools;
  }

  /** True while connected; false once the connection closed (the process exited, the server went away). */
  get alive(): boolean {
    return this.#up;
  }

  /** What the upstream said it serves when it last connected (resources, prompts, completions, logging). */
  get capabilities(): ServerCapabilities {
    return this.#client?.getServerCapabilities() ?? {};
  }

  /**
   * Connects, reads the tool list and watches it; `onChange` runs after each re-read, loss and
   * restart, `onNotice` with each log message and changed resource or prompt list.
   */
  async connect(
    baseDir: string,
    log: Log,
    onChange: () => void,
    onNotice: (upstream: string, notice: UpstreamNotice) => void = () => undefined,
  ): Promise<void> {
    this.#hooks = { baseDir, log, onChange, onNotice };
    await this.#open();
  }

  /** Relays notices and refuses, with a clear error, every request the upstream makes of the gateway. */
  #watch(client: Client): void {
    const { log, onNotice } = this.#hooks!;
    client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) =>
      onNotice(this.name, { kind: "log", params: notification.params }),
    );
    client.setNotificationHandler(ResourceListChangedNotificationSchema, async () => onNotice(this.name, { kind: "resources_changed" }));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (notification) =>
      onNotice(this.name, { kind: "resource_updated", uri: notification.params.uri }),
    );
    client.setNotificationHandler(PromptListChangedNotificationSchema, async () => onNotice(this.name, { kind: "prompts_changed" }));
    // Sampling, elicitation and roots are not offered to upstreams (docs/decisions/1306-gateway-whole-protocol.md).
    client.fallbackRequestHandler = async (request) => {
      log.warn("upstream request refused", { upstream: this.name, method: request.method });
      throw new McpError(
        NOT_RELAYED_CODE,
        `the Agent Authority gateway does not relay \`${request.method}\` from an upstream to the host: only the host's own requests are decided and forwarded`,
      );
    };
  }

  async #open(): Promise<void> {
    const { baseDir, log } = this.#hooks!;
    const generation = ++this.#generation;
    const client = new Client(GATEWAY_INFO, { capabilities: {} });
    this.#watch(client);
    client.onclose = () => {
      if (generation === this.#generation) this.#lost();
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => this.#relist(client, generation));
    try {
      const lane = new CallLane(transportOf(this.config, baseDir, log));
      await client.connect(lane.transport, { timeout: this.config.timeoutMs });
      const tools = await this.#listWithinBounds(client);
      if (generation !== this.#generation || this.#stopping) throw new Error(`upstream \`${this.name}\` was closed while starting`);
      this.#client = client;
      this.#lane = lane;
      this.#tools = tools;
      this.#up = true;
    } catch (error) {
      this.#generation += 1;
      await client.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Reads the tool list again after `notifications/tools/list_changed`. Notices that arrive while a
   * re-list runs are coalesced into one more re-list after it, so a burst costs two lists and two
   * host notices, not one per notice.
   */
  async #relist(client: Client, generation: number): Promise<void> {
    if (this.#relisting) {
      this.#relistAgain = true;
      return;
    }
    const { log, onChange } = this.#hooks!;
    this.#relisting = true;
    try {
      do {
        this.#relistAgain = false;
        try {
          const tools = await this.#listWithinBounds(client);
          if (generation !== this.#generation) return;
          this.#tools = tools;
          log.info("upstream tools changed", { upstream: this.name, tools: this.#tools.length });
        } catch (error) {
          if (generation !== this.#generation) return;
          // A list that cannot be read is an empty list: nothing unknown is offered or attested.
          this.#tools = [];
          log.error("upstream tools unreadable", { upstream: this.name, error: messageOf(error) });
        }
        onChange();
      } while (this.#relistAgain);
    } finally {
      this.#relisting = false;
    }
  }

  /**
   * The upstream's tools, or none when it lists more than the gateway takes (tools or pages): that
   * upstream's tools are dropped with a logged reason, and the gateway and its other upstreams go on.
   */
  async #listWithinBounds(client: Client): Promise<Tool[]> {
    try {
      return await this.#listAll(client);
    } catch (error) {
      if (!(error instanceof OverBoundError)) throw error;
      this.#hooks!.log.error("upstream tools dropped", { upstream: this.name, reason: error.message });
      return [];
    }
  }

  /** The connection closed: the tools leave the list, and the upstream restarts unless the gateway stops. */
  #lost(): void {
    const { log, onChange } = this.#hooks!;
    const wasUp = this.#up;
    this.#up = false;
    this.#client = undefined;
    this.#lane = undefined;
    if (wasUp) {
      log.warn("upstream closed", { upstream: this.name, restart: this.config.restart !== undefined && !this.#stopping });
      onChange();
    }
    this.#scheduleRestart();
  }

  #scheduleRestart(): void {
    const policy = this.config.restart;
    if (policy === undefined || this.#stopping || this.#timer !== undefined) return;
    const delay = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(this.#failures, 30));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#stopping) return;
      this.#open().then(
        () => {
          this.#failures = 0;
          this.#hooks!.log.info("upstream restarted", { upstream: this.name, tools: this.#tools.length });
          this.#hooks!.onChange();
        },
        (error: unknown) => {
          this.#failures += 1;
          this.#hooks!.log.error("upstream restart failed", {
            upstream: this.name,
            error: messageOf(error),
            next_ms: Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(this.#failures, 30)),
          });
          this.#scheduleRestart();
        },
      );
    }, delay);
  }

  async #listAll(client: Client): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < GATEWAY_LIMITS.toolPagesMax; page += 1) {
      const answer = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: this.config.timeoutMs });
      tools.push(...answer.tools);
      if (tools.length > GATEWAY_LIMITS.upstreamToolsMax)
        throw new OverBoundError(`upstream \`${this.name}\` lists more than ${GATEWAY_LIMITS.upstreamToolsMax} tools`);
      cursor = answer.nextCursor;
      if (cursor === undefined) return tools;
    }
    throw new OverBoundError(`upstream \`${this.name}\` lists tools on more than ${GATEWAY_LIMITS.toolPagesMax} pages`);
  }

  /**
   * Forwards one call; throws when the upstream is gone, times out or breaks the protocol. With
   * `onProgress` the upstream gets a progress token of its own, and each progress it reports
   * restarts the timeout. Sent by the gateway's own dispatch, not the MCP SDK's (upstream-calls.ts).
   */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal, onProgress?: OnProgress): Promise<CallToolResult> {
    const client = this.#connected();
    return callTool(this.#lane!, client, tool, args, { signal, timeoutMs: this.config.timeoutMs, onProgress });
  }

  async readResource(uri: string, signal: AbortSignal, onProgress?: OnProgress): Promise<ReadResourceResult> {
    return this.#connected().readResource({ uri }, this.#options(signal, onProgress));
  }

  async getPrompt(
    name: string,
    args: Record<string, string> | undefined,
    signal: AbortSignal,
    onProgress?: OnProgress,
  ): Promise<GetPromptResult> {
    return this.#connected().getPrompt(args === undefined ? { name } : { name, arguments: args }, this.#options(signal, onProgress));
  }

  async complete(params: CompleteRequest["params"], signal: AbortSignal): Promise<CompleteResult> {
    return this.#connected().complete(params, this.#options(signal, undefined));
  }

  async setLoggingLevel(level: LoggingLevel): Promise<void> {
    await this.#connected().setLoggingLevel(level, { timeout: this.config.timeoutMs });
  }

  /** The client of a live connection, for a request of the upstream's own kind (lists, reads). */
  connectedClient(): Client {
    return this.#connected();
  }

  #connected(): Client {
    if (this.#client === undefined || !this.#up) throw new Error(`upstream \`${this.name}\` is not connected`);
    return this.#client;
  }

  #options(signal: AbortSignal, onProgress: OnProgress | undefined): RequestOptions {
    return {
      signal,
      timeout: this.config.timeoutMs,
      ...(onProgress === undefined ? {} : { onprogress: onProgress, resetTimeoutOnProgress: true }),
    };
  }

  async close(): Promise<void> {
    this.#stopping = true;
    this.#up = false;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#client?.close().catch(() => undefined);
  }
}

/** A tool list past the gateway's bounds: that upstream's tools are dropped, the gateway goes on. */
class OverBoundError extends Error {}

function transportOf(config: UpstreamConfig, baseDir: string, log: Log): Transport {
  if (config.kind === "http") {
    // Another gateway's listener wants its bearer token; it is read from the gateway's own environment.
    const token = config.tokenEnv === undefined ? undefined : process.env[config.tokenEnv];
    return new StreamableHTTPClientTransport(
      new URL(config.url),
      token === undefined ? undefined : { requestInit: { headers: { authorization: `Bearer ${token}` } } },
    );
  }
  const transport = new StdioClientTransport({
    command: config.command,
    args: [...config.args],
    // The SDK adds only a safe default environment (PATH, HOME, ...): the agent's key never reaches an upstream.
    env: { ...config.env },
    cwd: resolve(baseDir, config.cwd ?? "."),
    stderr: "pipe",
  });
  // The gateway's standard error is JSON lines only: the upstream's lines are wrapped in log lines.
  const stderr = transport.stderr;
  if (stderr instanceof Readable) wrapStderr(stderr, config.name, log);
  boundReadBuffer(transport);
  return transport;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
