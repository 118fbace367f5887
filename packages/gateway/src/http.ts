// The streamable HTTP side towards clients (`--listen HOST:PORT`): one MCP session per `mcp-session-id`.
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { GatewayContext } from "./calls.js";
import { GATEWAY_LIMITS } from "./limits.js";
import { sessionServer } from "./session.js";
import { messageOf } from "./upstreams.js";

export interface Listen {
  readonly host: string;
  readonly port: number;
}

/** Reads `HOST:PORT` (`[::1]:PORT` for IPv6); answers an error message when it is not one. */
export function parseListen(text: string): Listen | string {
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text);
  const port = match === null ? NaN : Number(match[2]);
  if (match === null || port > 65_535) return `\`--listen\` is HOST:PORT (for example \`127.0.0.1:8931\`), not \`${text}\``;
  return { host: match[1]!.replace(/^\[|\]$/g, ""), port };
}

/** What the listener needs beyond its address: the bearer token a client must send, and the idle timeout. */
export interface ListenOptions {
  readonly token: string;
  readonly sessionIdleMs: number;
}

/** One live HTTP session: its transport, when it was last used, and its requests still open (a stream counts). */
interface HttpSession {
  readonly transport: StreamableHTTPServerTransport;
  lastUsed: number;
  open: number;
}

export async function listenHttp(ctx: GatewayContext, servers: Set<Server>, listen: Listen, options: ListenOptions) {
  const sessions = new Map<string, HttpSession>();
  let allowedHosts: string[] | undefined;
  const tokenDigest = digest(options.token);
  const http = createServer((request, response) => {
    if (!authorized(request, tokenDigest)) {
      response.writeHead(401, { "content-type": "application/json", "www-authenticate": 'Bearer realm="agent-authority-gateway"' });
      response.end(
        JSON.stringify({
          jsonrpc: "2.0",
          error: { code: -32001, message: "the gateway's listener needs its bearer token (Authorization: Bearer …)" },
          id: null,
        }),
      );
      return;
    }
    route(ctx, servers, sessions, allowedHosts, request, response).catch((error: unknown) => {
      ctx.log.error("http request failed", { error: messageOf(error) });
      if (!response.headersSent) answer(response, 500, "the gateway failed on this request");
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(listen.port, listen.host, () => resolve());
  });
  const address = http.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  // On a loopback address only loopback Host headers are served: a web page cannot rebind a name to it.
  if (/^(127\.|\[::1\]$|localhost$)/.test(host)) allowedHosts = [`${host}:${address.port}`, `localhost:${address.port}`];
  const sweeper = setInterval(
    () => expireIdle(ctx, sessions, options.sessionIdleMs),
    Math.max(250, Math.min(30_000, options.sessionIdleMs / 4)),
  );
  sweeper.unref();
  const closed = new Promise<void>((resolve) => http.once("close", () => resolve()));
  return {
    url: `http://${host}:${address.port}/mcp`,
    closed,
    close: async () => {
      clearInterval(sweeper);
      await Promise.all([...sessions.values()].map((session) => session.transport.close()));
      http.closeAllConnections();
      http.close();
      await closed;
    },
  };
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** Whether the request carries the listener's bearer token (compared in constant time). */
function authorized(request: IncomingMessage, tokenDigest: Buffer): boolean {
  const header = request.headers.authorization;
  const match = typeof header === "string" ? /^Bearer ([\x21-\x7e]{1,1024})$/.exec(header) : null;
  return match !== null && timingSafeEqual(digest(match[1]!), tokenDigest);
}

/** Closes every session that had no request for `idleMs` and has none open now. */
function expireIdle(ctx: GatewayContext, sessions: Map<string, HttpSession>, idleMs: number): void {
  const now = Date.now();
  for (const [id, session] of sessions) {
    if (session.open === 0 && now - session.lastUsed >= idleMs) {
      ctx.log.info("http session expired", { session: id, idle_ms: now - session.lastUsed });
      sessions.delete(id);
      void session.transport.close();
    }
  }
}

/**
 * Makes room for a new session when the table is full: closes the least recently used session
 * that has no request or stream open. A session with one open is live and is never closed for
 * another; when every session is live the new one is refused instead.
 */
function makeRoom(ctx: GatewayContext, sessions: Map<string, HttpSession>): boolean {
  if (sessions.size < GATEWAY_LIMITS.httpSessionsMax) return true;
  let oldest: [string, HttpSession] | undefined;
  for (const entry of sessions) if (entry[1].open === 0 && (oldest === undefined || entry[1].lastUsed < oldest[1].lastUsed)) oldest = entry;
  if (oldest === undefined) return false;
  ctx.log.info("http session evicted", { session: oldest[0], idle_ms: Date.now() - oldest[1].lastUsed });
  sessions.delete(oldest[0]);
  void oldest[1].transport.close();
  return true;
}

/** Counts the request as open on its session until its response is finished or its stream closed. */
async function handleOn(session: HttpSession, request: IncomingMessage, response: ServerResponse): Promise<void> {
  session.open += 1;
  session.lastUsed = Date.now();
  response.once("close", () => {
    session.open -= 1;
    session.lastUsed = Date.now();
  });
  await session.transport.handleRequest(request, response);
}

async function route(
  ctx: GatewayContext,
  servers: Set<Server>,
  sessions: Map<string, HttpSession>,
  allowedHosts: string[] | undefined,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  if (new URL(request.url ?? "/", "http://gateway").pathname !== "/mcp") return answer(response, 404, "the MCP endpoint is /mcp");
  const sessionId = request.headers["mcp-session-id"];
  if (typeof sessionId === "string") {
    const session = sessions.get(sessionId);
    // 404 tells an MCP client to start a new session (an expired or evicted one included).
    if (session === undefined) return answer(response, 404, "unknown, expired or closed session");
    return handleOn(session, request, response);
  }
  if (request.method !== "POST") return answer(response, 400, "a session starts with an initialize POST");
  if (!makeRoom(ctx, sessions)) return answer(response, 503, `all ${GATEWAY_LIMITS.httpSessionsMax} sessions are in use by live clients`);
  const session: HttpSession = {
    transport: new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, session),
      ...(allowedHosts === undefined ? {} : { enableDnsRebindingProtection: true, allowedHosts }),
    }),
    lastUsed: Date.now(),
    open: 0,
  };
  const { transport } = session;
  const { server, connect } = sessionServer(ctx, undefined);
  transport.onclose = () => {
    if (transport.sessionId !== undefined && sessions.get(transport.sessionId) === session) sessions.delete(transport.sessionId);
    servers.delete(server);
  };
  servers.add(server);
  await connect(transport);
  await handleOn(session, request, response);
  // A first request that was not an initialize leaves no session behind.
  if (transport.sessionId === undefined) await server.close();
}

function answer(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}
