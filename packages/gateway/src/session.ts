// One MCP server session towards the client: tools, resources, prompts, completions and logging, each decided or scoped by the grant.
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type ServerCapabilities,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  type Tool,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { handleCall, type GatewayContext, type Session } from "./calls.js";
import { routesInScope } from "./catalog.js";
import { hostCallFront, type HostCallHandler } from "./host-calls.js";
import { ProgressRelay } from "./progress.js";
import {
  complete,
  getPrompt,
  readResource,
  scopeNow,
  setLevel,
  subscribe,
  visiblePrompts,
  visibleResources,
  visibleTemplates,
  type HostRequest,
} from "./protocol.js";
import { GATEWAY_INFO } from "./upstreams.js";

interface Extra {
  readonly requestId: string | number;
  readonly signal: AbortSignal;
  readonly _meta?: { progressToken?: string | number } | undefined;
  sendNotification(notification: {
    method: "notifications/progress";
    params: { progressToken: string | number; progress: number; total?: number; message?: string };
  }): Promise<void>;
}

/** The host's progress token, kept for its own notifications; the upstream gets one of the gateway's own. */
function relayOf(extra: Extra): ProgressRelay | undefined {
  const token = extra._meta?.progressToken;
  if (token === undefined) return undefined;
  return new ProgressRelay((progress, total, message) =>
    extra.sendNotification({
      method: "notifications/progress",
      params: { progressToken: token, progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) },
    }),
  );
}

/** What the gateway serves: tools always; resources, prompts, completions and logging when an upstream does. */
function capabilitiesOf(ctx: GatewayContext): ServerCapabilities {
  const has = (name: "resources" | "prompts" | "completions" | "logging"): boolean =>
    ctx.upstreams().some((upstream) => upstream.capabilities[name] !== undefined);
  const subscribable = ctx.upstreams().some((upstream) => upstream.capabilities.resources?.subscribe === true);
  return {
    tools: { listChanged: true },
    ...(has("resources") ? { resources: { listChanged: true, ...(subscribable ? { subscribe: true } : {}) } } : {}),
    ...(has("prompts") ? { prompts: { listChanged: true } } : {}),
    ...(has("completions") ? { completions: {} } : {}),
    ...(has("logging") ? { logging: {} } : {}),
  };
}

type CallHandler = Parameters<typeof Server.prototype.setRequestHandler<typeof CallToolRequestSchema>>[1];

/**
 * Sets the `tools/call` handler as the protocol layer sets any other: the request is validated once
 * there, against `CallToolRequestSchema`. The MCP SDK's `Server` wraps a `tools/call` handler to
 * validate the request a second time and the result again (copying it); the gateway's result is
 * either its own refusal or the upstream's result, which was validated once already
 * (call-checks.ts), and the gateway offers no tasks, the wrapper's other concern
 * (docs/decisions/1902-gateway-own-work-halved.md). Most calls never reach this handler: the
 * gateway's own dispatch takes them first (host-calls.ts); it answers the ones that dispatch leaves,
 * a malformed request with the schema's error as before.
 */
function setCallHandler(server: Server, handler: CallHandler): void {
  const protocolLayer = Object.getPrototypeOf(Server.prototype) as { setRequestHandler: Server["setRequestHandler"] };
  protocolLayer.setRequestHandler.call(server, CallToolRequestSchema, handler);
}

/** One client session's MCP server, and how to connect it: through the gateway's own dispatch of `tools/call`. */
export interface SessionServer {
  readonly server: Server;
  readonly session: Session;
  /** Connects the server to the host's transport, each `tools/call` taken by the gateway's own dispatch first. */
  connect(transport: Transport): Promise<void>;
}

/** A new MCP server for one client session; the caller connects it to a transport with `connect`. */
export function sessionServer(ctx: GatewayContext, sessionId: string = randomUUID()): SessionServer {
  const session: Session = { id: sessionId, calls: new Map() };
  const capabilities = capabilitiesOf(ctx);
  const server = new Server(GATEWAY_INFO, {
    capabilities,
    instructions:
      "Every tool call, resource read and prompt is decided by an Agent Authority server first; a refused one answers with the outcome, the gate and the reason.",
  });
  const hostRequest = (extra: Extra): HostRequest => ({
    session,
    requestId: extra.requestId,
    signal: extra.signal,
    progress: relayOf(extra),
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await visibleTools(ctx) }));
  setCallHandler(server, async (request, extra) =>
    handleCall(ctx, session, {
      name: request.params.name,
      args: request.params.arguments ?? {},
      requestId: extra.requestId,
      signal: extra.signal,
      progress: relayOf(extra),
    }),
  );
  if (capabilities.resources !== undefined) {
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: await visibleResources(ctx) }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: await visibleTemplates(ctx) }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) =>
      readResource(ctx, hostRequest(extra), request.params.uri),
    );
  }
  if (capabilities.resources?.subscribe === true) {
    server.setRequestHandler(SubscribeRequestSchema, async (request) => {
      await subscribe(ctx, server, request.params.uri, true);
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
      await subscribe(ctx, server, request.params.uri, false);
      return {};
    });
  }
  if (capabilities.prompts !== undefined) {
    server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: await visiblePrompts(ctx) }));
    server.setRequestHandler(GetPromptRequestSchema, async (request, extra) =>
      getPrompt(ctx, hostRequest(extra), request.params.name, request.params.arguments),
    );
  }
  if (capabilities.completions !== undefined)
    server.setRequestHandler(CompleteRequestSchema, async (request, extra) => complete(ctx, request.params, extra.signal));
  if (capabilities.logging !== undefined) {
    server.setRequestHandler(SetLevelRequestSchema, async (request) => {
      await setLevel(ctx, server, request.params.level);
      return {};
    });
  }
  const ownCall: HostCallHandler = (call, signal, progress) =>
    handleCall(ctx, session, { name: call.name, args: call.args, requestId: call.id, signal, progress });
  return { server, session, connect: (transport) => server.connect(hostCallFront(transport, ownCall)) };
}

/**
 * The tools the grant's scope allows, read from the grant at each listing (a revoked or unreadable
 * grant lists nothing: least privilege, failing closed).
 */
async function visibleTools(ctx: GatewayContext): Promise<Tool[]> {
  const scope = await scopeNow(ctx);
  return routesInScope(ctx.catalog(), scope).map((route) => ({ ...route.tool, name: route.exposed }));
}
