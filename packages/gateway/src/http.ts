// The streamable HTTP side towards clients (`--listen HOST:PORT`): one MCP session per `mcp-session-id`.
import { randomUUID } from "node:crypto";
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

export async function listenHttp(ctx: GatewayContext, servers: Set<Server>, listen: Listen) {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let allowedHosts: string[] | undefined;
  const http = createServer((request, response) => {
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
  const closed = new Promise<void>((resolve) => http.once("close", () => resolve()));
  return {
    url: `http://${host}:${address.port}/mcp`,
    closed,
    close: async () => {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
      http.closeAllConnections();
      http.close();
      await closed;
    },
  };
}

async function route(
  ctx: GatewayContext, servers: Set<Server>, sessions: Map<string, StreamableHTTPServerTransport>, allowedHosts: string[] | undefined,
  request: IncomingMessage, response: ServerResponse,
): Promise<void> {
  if (new URL(request.url ?? "/", "http://gateway").pathname !== "/mcp") return answer(response, 404, "the MCP endpoint is /mcp");
  const sessionId = request.headers["mcp-session-id"];
  if (typeof sessionId === "string") {
    const transport = sessions.get(sessionId);
    if (transport === undefined) return answer(response, 404, "unknown or closed session");
    return transport.handleRequest(request, response);
  }
  if (request.method !== "POST") return answer(response, 400, "a session starts with an initialize POST");
  if (sessions.size >= GATEWAY_LIMITS.httpSessionsMax) return answer(response, 503, `at most ${GATEWAY_LIMITS.httpSessionsMax} sessions at once`);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => void sessions.set(id, transport),
    ...(allowedHosts === undefined ? {} : { enableDnsRebindingProtection: true, allowedHosts }),
  });
  const { server } = sessionServer(ctx, undefined);
  transport.onclose = () => {
    if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    servers.delete(server);
  };
  servers.add(server);
  await server.connect(transport);
  await transport.handleRequest(request, response);
  // A first request that was not an initialize leaves no session behind.
  if (transport.sessionId === undefined) await server.close();
}

function answer(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}
