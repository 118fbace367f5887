// One MCP server session towards the client: tools/list filtered by the grant's scope, tools/call decided.
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { handleCall, type GatewayContext, type Session } from "./calls.js";
import { routesInScope } from "./catalog.js";
import { GATEWAY_INFO, messageOf } from "./upstreams.js";

/** A new MCP server for one client session; the caller connects it to a transport. */
export function sessionServer(ctx: GatewayContext, sessionId: string = randomUUID()): { server: Server; session: Session } {
  const session: Session = { id: sessionId, calls: new Map() };
  const server = new Server(GATEWAY_INFO, {
    capabilities: { tools: { listChanged: true } },
    instructions: "Every tool call is decided by an Agent Authority server first; a refused call answers with the outcome, the gate and the reason.",
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await visibleTools(ctx) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const token = request.params._meta?.progressToken;
    return handleCall(ctx, session, {
      name: request.params.name,
      args: request.params.arguments ?? {},
      requestId: extra.requestId,
      signal: extra.signal,
      progress: token === undefined ? undefined : (progress, total, message) =>
        extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, total, message } }),
    });
  });
  return { server, session };
}

/**
 * The tools the grant's scope allows, read from the grant at each listing (a revoked or unreadable
 * grant lists nothing: least privilege, failing closed).
 */
async function visibleTools(ctx: GatewayContext): Promise<Tool[]> {
  let scope: readonly string[];
  try {
    const grant = await ctx.authority.grants.get(ctx.config.authority.grantId);
    // Only an active grant lists tools: one revoked, expired or still awaiting approval allows nothing yet.
    scope = grant.status === "active" ? grant.scope.tool ?? [] : [];
  } catch (error) {
    ctx.log.error("grant unreadable; listing no tools", { grant_id: ctx.config.authority.grantId, error: messageOf(error) });
    return [];
  }
  return routesInScope(ctx.catalog(), scope).map((route) => ({ ...route.tool, name: route.exposed }));
}
