// Starts the gateway: connects the upstreams, keeps the catalog current, and serves MCP on stdio or HTTP.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { AuthorityClient, type SigningKeysOption } from "@agent-authority/sdk";
import type { GatewayContext } from "./calls.js";
import { buildCatalog, type Catalog } from "./catalog.js";
import type { GatewayConfig } from "./config.js";
import { listenHttp, type Listen } from "./http.js";
import { GATEWAY_LIMITS } from "./limits.js";
import type { Log } from "./log.js";
import { sessionServer } from "./session.js";
import { boundReadBuffer } from "./stdio-buffer.js";
import { relayLog, subscribed } from "./protocol.js";
import { messageOf, Upstream, type UpstreamNotice } from "./upstreams.js";

export interface GatewayOptions {
  readonly config: GatewayConfig;
  /** The directory of the configuration file: upstream `cwd` values are relative to it. */
  readonly baseDir: string;
  /** The agent's API key, read from the environment variable the configuration names. */
  readonly apiKey: string;
  readonly log: Log;
  /** Serve streamable HTTP here instead of stdio. */
  readonly listen?: Listen;
  /** The bearer token every HTTP request must carry; required with `listen`. */
  readonly listenToken?: string;
  /** The streams of the stdio transport; default the process's own. */
  readonly stdio?: { readonly input: NodeJS.ReadableStream; readonly output: NodeJS.WritableStream };
}

export interface RunningGateway {
  /** The MCP endpoint when serving HTTP (`http://host:port/mcp`). */
  readonly url: string | undefined;
  /** The manifest hash the gateway attests now. */
  manifestHash(): string;
  /** Settles when the client side closed (stdin ended) or `close` ran. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/** The keys decisions are verified with: `fetch-once`, or the JWKS file named (docs/verification.md). */
function signingKeysOf(setting: string | undefined, baseDir: string): SigningKeysOption | undefined {
  if (setting === undefined || setting === "fetch-once") return setting;
  const file = resolve(baseDir, setting);
  try {
    return JSON.parse(readFileSync(file, "utf8")) as SigningKeysOption;
  } catch (error) {
    throw new Error(`\`authority.signing_keys\`: \`${file}\` is not a readable JWKS: ${messageOf(error)}`);
  }
}

/** The authority client the gateway spends the agent's grants through. */
function authorityClient(config: GatewayConfig, apiKey: string, baseDir: string): AuthorityClient {
  const signingKeys = signingKeysOf(config.authority.signingKeys, baseDir);
  return new AuthorityClient({
    baseUrl: config.authority.url,
    apiKey,
    timeoutMs: config.authority.timeoutMs,
    attempts: config.authority.attempts,
    retryDelayMs: 50,
    // Verified by default (the SDK fetches the server's keys once when none are pinned).
    ...(signingKeys === undefined ? {} : { signingKeys }),
    ...(config.authority.allowUnsignedAnswers ? { allowUnsignedAnswers: true } : {}),
  });
}

/** Passes an upstream's notice on to every session: its log lines, and what changed in its resources and prompts. */
function relayNotice(servers: ReadonlySet<Server>, upstream: string, told: UpstreamNotice): void {
  if (told.kind === "log") relayLog(servers, upstream, told.params);
  for (const server of servers) {
    if (told.kind === "resources_changed") server.sendResourceListChanged().catch(() => undefined);
    if (told.kind === "prompts_changed") server.sendPromptListChanged().catch(() => undefined);
    if (told.kind === "resource_updated" && subscribed(server, told.uri))
      server.sendResourceUpdated({ uri: told.uri }).catch(() => undefined);
  }
}

/** Starts every upstream; when one does not start, all are closed again and the first failure is thrown. */
async function connectUpstreams(
  upstreams: readonly Upstream[],
  baseDir: string,
  log: Log,
  refresh: () => void,
  notice: (upstream: string, told: UpstreamNotice) => void,
): Promise<void> {
  try {
    await Promise.all(
      upstreams.map((upstream) =>
        upstream.connect(baseDir, log, refresh, notice).catch((error: unknown) => {
          throw new Error(`upstream \`${upstream.name}\` did not start: ${messageOf(error)}`);
        }),
      ),
    );
  } catch (error) {
    await Promise.all(upstreams.map((upstream) => upstream.close()));
    throw error;
  }
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const { config, log } = options;
  // The listener spends the agent's authority: no token, no listener (checked before anything starts).
  if (options.listen !== undefined && (options.listenToken ?? "").length < GATEWAY_LIMITS.httpTokenCharsMin) {
    throw new Error(`the HTTP listener needs a bearer token of at least ${GATEWAY_LIMITS.httpTokenCharsMin} characters`);
  }
  const authority = authorityClient(config, options.apiKey, options.baseDir);
  const upstreams = config.upstreams.map((upstream) => new Upstream(upstream));
  const servers = new Set<Server>();
  const reported = new Set<string>();
  let catalog: Catalog = buildCatalog([], config.tools, log, reported);
  // The catalog is built again whenever an upstream's tools change; the sessions are told when its hash moves.
  const refresh = (): void => {
    const before = catalog.manifestHash;
    catalog = buildCatalog(upstreams, config.tools, log, reported);
    if (catalog.manifestHash !== before) log.info("manifest hash", { manifest_hash: catalog.manifestHash, tools: catalog.routes.size });
    for (const server of servers) server.sendToolListChanged().catch(() => undefined);
  };
  await connectUpstreams(upstreams, options.baseDir, log, refresh, (upstream, told) => relayNotice(servers, upstream, told));
  refresh();
  const ctx: GatewayContext = { config, authority, log, catalog: () => catalog, upstreams: () => upstreams };
  const front = options.listen === undefined ? await serveStdio(ctx, servers, options.stdio) : await serveHttp(ctx, servers, options);
  log.info("gateway ready", {
    transport: options.listen === undefined ? "stdio" : "http",
    url: front.url,
    upstreams: upstreams.length,
    manifest_hash: catalog.manifestHash,
  });
  const closed = front.closed.then(async () => {
    await Promise.all(upstreams.map((upstream) => upstream.close()));
  });
  return {
    url: front.url,
    manifestHash: () => catalog.manifestHash,
    closed,
    close: async () => {
      await front.close();
      await closed;
    },
  };
}

/** The tools of a configuration's upstreams and the manifest hash the gateway attests for them. */
export interface AttestedManifest {
  readonly manifestHash: string;
  /** Each upstream tool: the action name the grant sees and the upstream's own tool name. */
  readonly tools: readonly {
    readonly action: string;
    readonly upstream: string;
    readonly tool: string;
    readonly description: string | undefined;
  }[];
}

/**
 * Starts every upstream of `config`, reads their tool lists and answers the manifest hash the
 * gateway would attest (`authority manifest --config`), then stops them; nothing is decided.
 */
export async function attestUpstreams(config: GatewayConfig, baseDir: string, log: Log): Promise<AttestedManifest> {
  const upstreams = config.upstreams.map((upstream) => new Upstream({ ...upstream, restart: undefined }));
  try {
    await Promise.all(
      upstreams.map((upstream) =>
        upstream
          .connect(baseDir, log, () => undefined)
          .catch((error: unknown) => {
            throw new Error(`upstream \`${upstream.name}\` did not start: ${messageOf(error)}`);
          }),
      ),
    );
    const catalog = buildCatalog(upstreams, config.tools, log);
    const tools = upstreams.flatMap((upstream) =>
      upstream.tools.map((tool) => ({
        action:
          [...catalog.routes.values()].find((route) => route.upstream === upstream && route.tool === tool)?.action ??
          `${upstream.name}.${tool.name}`,
        upstream: upstream.name,
        tool: tool.name,
        description: tool.description,
      })),
    );
    return { manifestHash: catalog.manifestHash, tools };
  } finally {
    await Promise.all(upstreams.map((upstream) => upstream.close()));
  }
}

interface Front {
  readonly url: string | undefined;
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

function serveHttp(ctx: GatewayContext, servers: Set<Server>, options: GatewayOptions): Promise<Front> {
  return listenHttp(ctx, servers, options.listen!, {
    token: options.listenToken!,
    sessionIdleMs: options.config.http.sessionIdleSeconds * 1000,
  });
}

async function serveStdio(ctx: GatewayContext, servers: Set<Server>, stdio: GatewayOptions["stdio"]): Promise<Front> {
  const { server, connect } = sessionServer(ctx);
  const transport = new StdioServerTransport(stdio?.input as never, stdio?.output as never);
  // A request over the limit is answered with an error and skipped; the session goes on.
  boundReadBuffer(transport, (id, maxLineBytes) => {
    ctx.log.warn("request over the transport limit refused", { id: id ?? null, max_bytes: maxLineBytes });
    if (id !== undefined)
      void transport.send({
        jsonrpc: "2.0",
        id,
        error: { code: -32600, message: `the request is over the gateway's limit of ${maxLineBytes} bytes; it was not read` },
      });
    return undefined;
  });
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    // The client closing stdin ends the session, as MCP's stdio transport specifies.
    (stdio?.input ?? process.stdin).once("end", () => void server.close());
  });
  servers.add(server);
  await connect(transport);
  return { url: undefined, closed, close: () => server.close() };
}
