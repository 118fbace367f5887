// Resources, prompts, completions and logging through the gateway: listed by the grant's scope, reads and gets decided like tools.
import { entryCovers } from "@agent-authority/lattice";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  type CompleteRequest,
  type CompleteResult,
  ErrorCode,
  type GetPromptResult,
  type LoggingLevel,
  type LoggingMessageNotification,
  McpError,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from "@modelcontextprotocol/sdk/types.js";
import { callKey, decide, type GatewayContext, type Session } from "./calls.js";
import { GATEWAY_LIMITS } from "./limits.js";
import type { ProgressRelay } from "./progress.js";
import { REFUSED_CODE } from "./refusal.js";
import { messageOf, type Upstream } from "./upstreams.js";

/** The action of reading any resource of an upstream; the policy sees the URI as `args.uri`. */
export function resourceAction(upstream: string): string {
  return `resource:${upstream}`;
}

/** The action of getting one prompt of an upstream; the policy sees its arguments as `args`. */
export function promptAction(upstream: string, prompt: string): string {
  return `prompt:${upstream}.${prompt}`;
}

/** A prompt name that can be part of an action name (`[A-Za-z0-9_.-]`, bounded); others are not offered. */
const PROMPT_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Whether a prompt of this name can be offered and named in a grant's scope. */
export function promptNameAllowed(name: string): boolean {
  return PROMPT_NAME.test(name);
}

/** What each upstream listed last: resource URIs, template texts and prompt names, to route a read or get. */
interface Known {
  uris: Set<string>;
  templates: string[];
  prompts: Set<string>;
  /** Whether both resource lists, and the prompt list, were read at least once. */
  resourcesListed: boolean;
  promptsListed: boolean;
}
const known = new WeakMap<Upstream, Known>();

/** The scope of the grant now; a revoked, pending or unreadable grant has none (failing closed). */
export async function scopeNow(ctx: GatewayContext): Promise<readonly string[]> {
  try {
    const grant = await ctx.authority.grants.get(ctx.config.authority.grantId);
    return grant.status === "active" ? (grant.scope.tool ?? []) : [];
  } catch (error) {
    ctx.log.error("grant unreadable; listing nothing", { grant_id: ctx.config.authority.grantId, error: messageOf(error) });
    return [];
  }
}

function covered(scope: readonly string[], action: string): boolean {
  return scope.some((entry) => entryCovers(entry, action));
}

function serving(ctx: GatewayContext, capability: "resources" | "prompts" | "completions" | "logging"): Upstream[] {
  return ctx.upstreams().filter((upstream) => upstream.alive && upstream.capabilities[capability] !== undefined);
}

/** Reads every page of one list of an upstream, bounded in pages and entries. */
async function allPages<T>(
  upstream: Upstream,
  page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < GATEWAY_LIMITS.listPagesMax; n += 1) {
    const answer = await page(cursor);
    items.push(...answer.items);
    if (items.length > GATEWAY_LIMITS.listEntriesMax)
      throw new Error(`upstream \`${upstream.name}\` lists more than ${GATEWAY_LIMITS.listEntriesMax} entries`);
    cursor = answer.nextCursor;
    if (cursor === undefined) return items;
  }
  throw new Error(`upstream \`${upstream.name}\` lists on more than ${GATEWAY_LIMITS.listPagesMax} pages`);
}

function knownOf(upstream: Upstream): Known {
  let entry = known.get(upstream);
  if (entry === undefined)
    known.set(upstream, (entry = { uris: new Set(), templates: [], prompts: new Set(), resourcesListed: false, promptsListed: false }));
  return entry;
}

async function listResources(upstream: Upstream): Promise<Resource[]> {
  const client = upstream.connectedClient();
  const timeout = upstream.config.timeoutMs;
  const resources = await allPages(upstream, async (cursor) => {
    const answer = await client.listResources(cursor === undefined ? {} : { cursor }, { timeout });
    return { items: answer.resources, nextCursor: answer.nextCursor };
  });
  knownOf(upstream).uris = new Set(resources.map((resource) => resource.uri));
  return resources;
}

async function listTemplates(upstream: Upstream): Promise<ResourceTemplate[]> {
  const client = upstream.connectedClient();
  const timeout = upstream.config.timeoutMs;
  const templates = await allPages(upstream, async (cursor) => {
    const answer = await client.listResourceTemplates(cursor === undefined ? {} : { cursor }, { timeout });
    return { items: answer.resourceTemplates, nextCursor: answer.nextCursor };
  });
  knownOf(upstream).templates = templates.map((template) => template.uriTemplate);
  knownOf(upstream).resourcesListed = true;
  return templates;
}

async function listPrompts(upstream: Upstream): Promise<Prompt[]> {
  const client = upstream.connectedClient();
  const timeout = upstream.config.timeoutMs;
  const prompts = await allPages(upstream, async (cursor) => {
    const answer = await client.listPrompts(cursor === undefined ? {} : { cursor }, { timeout });
    return { items: answer.prompts, nextCursor: answer.nextCursor };
  });
  knownOf(upstream).prompts = new Set(prompts.map((prompt) => prompt.name));
  knownOf(upstream).promptsListed = true;
  return prompts;
}

/** Each upstream's entries of one kind, in configuration order; an upstream that fails to list adds none. */
async function gather<T>(ctx: GatewayContext, upstreams: readonly Upstream[], list: (upstream: Upstream) => Promise<T[]>): Promise<T[][]> {
  return Promise.all(
    upstreams.map((upstream) =>
      list(upstream).catch((error: unknown) => {
        ctx.log.warn("upstream list unreadable", { upstream: upstream.name, error: messageOf(error) });
        return [] as T[];
      }),
    ),
  );
}

/** `resources/list`: the resources of the upstreams whose `resource:<upstream>` the scope covers. */
export async function visibleResources(ctx: GatewayContext): Promise<Resource[]> {
  const scope = await scopeNow(ctx);
  const upstreams = serving(ctx, "resources").filter((upstream) => covered(scope, resourceAction(upstream.name)));
  return (await gather(ctx, upstreams, listResources)).flat();
}

/** `resources/templates/list`: as `resources/list`, for the URI templates. */
export async function visibleTemplates(ctx: GatewayContext): Promise<ResourceTemplate[]> {
  const scope = await scopeNow(ctx);
  const upstreams = serving(ctx, "resources").filter((upstream) => covered(scope, resourceAction(upstream.name)));
  return (await gather(ctx, upstreams, listTemplates)).flat();
}

/** `prompts/list`: each prompt whose `prompt:<upstream>.<name>` the scope covers; the first upstream keeps a name offered twice. */
export async function visiblePrompts(ctx: GatewayContext): Promise<Prompt[]> {
  const scope = await scopeNow(ctx);
  const upstreams = serving(ctx, "prompts");
  const lists = await gather(ctx, upstreams, listPrompts);
  const seen = new Set<string>();
  const prompts: Prompt[] = [];
  lists.forEach((list, index) => {
    for (const prompt of list) {
      if (seen.has(prompt.name) || !PROMPT_NAME.test(prompt.name)) continue;
      seen.add(prompt.name);
      if (covered(scope, promptAction(upstreams[index]!.name, prompt.name))) prompts.push(prompt);
    }
  });
  return prompts;
}

/**
 * The upstream serving `uri`: the only one serving resources; else, among the upstreams whose
 * `resource:<upstream>` the grant covers first and then the others, each in configuration order,
 * the first that lists the URI, else the first with a template whose text before its first `{`
 * starts it. Every upstream is listed before the first match, and once more before a URI is refused.
 */
async function resourceOwner(ctx: GatewayContext, uri: string): Promise<Upstream | undefined> {
  const all = serving(ctx, "resources");
  if (all.length <= 1) return all[0];
  const scope = await scopeNow(ctx);
  const upstreams = [
    ...all.filter((u) => covered(scope, resourceAction(u.name))),
    ...all.filter((u) => !covered(scope, resourceAction(u.name))),
  ];
  const listAll = (which: readonly Upstream[]) =>
    gather(ctx, which, async (upstream) => [...(await listResources(upstream)), ...(await listTemplates(upstream))]);
  await listAll(upstreams.filter((upstream) => !knownOf(upstream).resourcesListed));
  for (let pass = 0; pass < 2; pass += 1) {
    if (pass === 1) await listAll(upstreams);
    const exact = upstreams.find((upstream) => knownOf(upstream).uris.has(uri));
    if (exact !== undefined) return exact;
    const templated = upstreams.find((upstream) =>
      knownOf(upstream).templates.some((template) => {
        const prefix = template.split("{", 1)[0]!;
        return prefix.length > 0 && uri.startsWith(prefix);
      }),
    );
    if (templated !== undefined) return templated;
  }
  return undefined;
}

/** The upstream offering the prompt `name`: the first, in configuration order, that lists it (as `prompts/list` shows it). */
async function promptOwner(ctx: GatewayContext, name: string): Promise<Upstream | undefined> {
  const upstreams = serving(ctx, "prompts");
  await gather(
    ctx,
    upstreams.filter((upstream) => !knownOf(upstream).promptsListed),
    listPrompts,
  );
  const found = upstreams.find((upstream) => knownOf(upstream).prompts.has(name));
  if (found !== undefined) return found;
  await gather(ctx, upstreams, listPrompts);
  return upstreams.find((upstream) => knownOf(upstream).prompts.has(name));
}

/** One host request to decide: the session, its JSON-RPC id, its cancellation and its progress. */
export interface HostRequest {
  readonly session: Session;
  readonly requestId: string | number;
  readonly signal: AbortSignal;
  readonly progress: ProgressRelay | undefined;
}

/** `resources/read`: decided as the action `resource:<upstream>` with `args.uri`, then forwarded on allow. */
export async function readResource(ctx: GatewayContext, request: HostRequest, uri: string): Promise<ReadResourceResult> {
  if (uri.length > GATEWAY_LIMITS.resourceUriCharsMax) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `refused: the resource URI is over ${GATEWAY_LIMITS.resourceUriCharsMax} characters; nothing was decided or forwarded`,
    );
  }
  const upstream = await resourceOwner(ctx, uri);
  if (upstream === undefined)
    throw new McpError(-32002, `refused: no upstream behind this gateway serves the resource \`${uri}\`; nothing was decided or forwarded`);
  const action = resourceAction(upstream.name);
  const key = `${callKey(request.session.id, request.requestId)}:resource`;
  const decided = await decide(
    ctx,
    request.session,
    key,
    { label: `resources/read ${uri}`, action, body: { tool: action, args: { uri } } },
    request.signal,
    request.progress,
  );
  if (!decided.ok) throw new McpError(REFUSED_CODE, decided.refusal);
  return upstream.readResource(uri, request.signal, request.progress?.forwarding());
}

/** `prompts/get`: decided as the action `prompt:<upstream>.<name>` with the prompt's arguments as `args`. */
export async function getPrompt(
  ctx: GatewayContext,
  request: HostRequest,
  name: string,
  args: Record<string, string> | undefined,
): Promise<GetPromptResult> {
  if (!PROMPT_NAME.test(name))
    throw new McpError(
      ErrorCode.InvalidParams,
      `refused: a prompt name is 1 to 128 of \`A-Z a-z 0-9 _ . -\`; nothing was decided or forwarded`,
    );
  if (args !== undefined && Object.keys(args).length > GATEWAY_LIMITS.policyArgsMax) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `refused: a prompt takes at most ${GATEWAY_LIMITS.policyArgsMax} arguments through the gateway; nothing was decided or forwarded`,
    );
  }
  const upstream = await promptOwner(ctx, name);
  if (upstream === undefined)
    throw new McpError(
      ErrorCode.InvalidParams,
      `refused: no upstream behind this gateway offers the prompt \`${name}\`; nothing was decided or forwarded`,
    );
  const action = promptAction(upstream.name, name);
  const key = `${callKey(request.session.id, request.requestId)}:prompt`;
  const body = { tool: action, ...(args === undefined ? {} : { args }) };
  const decided = await decide(ctx, request.session, key, { label: `prompts/get ${name}`, action, body }, request.signal, request.progress);
  if (!decided.ok) throw new McpError(REFUSED_CODE, decided.refusal);
  return upstream.getPrompt(name, args, request.signal, request.progress?.forwarding());
}

/**
 * `completion/complete`: forwarded to the upstream of the prompt or resource template it names when
 * the scope covers that prompt or that upstream's resources. It changes nothing, so it is not ledgered.
 */
export async function complete(ctx: GatewayContext, params: CompleteRequest["params"], signal: AbortSignal): Promise<CompleteResult> {
  const ref = params.ref;
  const upstream = ref.type === "ref/prompt" ? await promptOwner(ctx, ref.name) : await resourceOwner(ctx, ref.uri);
  const action =
    upstream === undefined ? undefined : ref.type === "ref/prompt" ? promptAction(upstream.name, ref.name) : resourceAction(upstream.name);
  if (upstream === undefined || action === undefined || !covered(await scopeNow(ctx), action)) {
    throw new McpError(REFUSED_CODE, `refused: the grant does not cover what this completion refers to; nothing was forwarded`);
  }
  if (upstream.capabilities.completions === undefined)
    throw new McpError(ErrorCode.MethodNotFound, `the upstream \`${upstream.name}\` offers no completions`);
  return upstream.complete(params, signal);
}

/** The resource URIs each host session subscribed to, each bounded in number. */
const subscriptions = new WeakMap<Server, Set<string>>();

/** True when the host session subscribed to `uri`: only then does it hear of the resource's updates. */
export function subscribed(server: Server, uri: string): boolean {
  return subscriptions.get(server)?.has(uri) ?? false;
}

/**
 * `resources/subscribe` and `resources/unsubscribe`: forwarded to the resource's upstream when the
 * scope covers its `resource:<upstream>`. Updates say only that a resource changed (reading it is
 * decided), so a subscription is scoped, not ledgered.
 */
export async function subscribe(ctx: GatewayContext, server: Server, uri: string, on: boolean): Promise<void> {
  if (uri.length > GATEWAY_LIMITS.resourceUriCharsMax)
    throw new McpError(ErrorCode.InvalidParams, `refused: the resource URI is over ${GATEWAY_LIMITS.resourceUriCharsMax} characters`);
  const upstream = await resourceOwner(ctx, uri);
  if (upstream === undefined || !covered(await scopeNow(ctx), resourceAction(upstream.name))) {
    throw new McpError(REFUSED_CODE, `refused: the grant does not cover the resource \`${uri}\`; nothing was forwarded`);
  }
  let uris = subscriptions.get(server);
  if (uris === undefined) subscriptions.set(server, (uris = new Set()));
  if (on && !uris.has(uri) && uris.size >= GATEWAY_LIMITS.subscriptionsMax) {
    throw new McpError(ErrorCode.InvalidParams, `refused: a session subscribes to at most ${GATEWAY_LIMITS.subscriptionsMax} resources`);
  }
  const client = upstream.connectedClient();
  if (on) {
    await client.subscribeResource({ uri }, { timeout: upstream.config.timeoutMs });
    uris.add(uri);
  } else {
    uris.delete(uri);
    await client.unsubscribeResource({ uri }, { timeout: upstream.config.timeoutMs });
  }
}

/** The log level each host session asked for; a session that asked nothing gets every message. */
export const sessionLevels = new WeakMap<Server, LoggingLevel>();

const LEVELS: readonly LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/** `logging/setLevel`: remembered for the session and passed on to every upstream that logs. */
export async function setLevel(ctx: GatewayContext, server: Server, level: LoggingLevel): Promise<void> {
  sessionLevels.set(server, level);
  await Promise.all(
    serving(ctx, "logging").map((upstream) =>
      upstream.setLoggingLevel(level).catch((error: unknown) => {
        ctx.log.warn("upstream log level not set", { upstream: upstream.name, error: messageOf(error) });
      }),
    ),
  );
}

/** An upstream's log message to each host session whose level it reaches, its logger named after the upstream. */
export function relayLog(servers: Iterable<Server>, upstream: string, params: LoggingMessageNotification["params"]): void {
  const logger = params.logger === undefined ? upstream : `${upstream}/${params.logger}`;
  for (const server of servers) {
    const wanted = sessionLevels.get(server);
    if (wanted !== undefined && LEVELS.indexOf(params.level) < LEVELS.indexOf(wanted)) continue;
    server.notification({ method: "notifications/message", params: { ...params, logger } }).catch(() => undefined);
  }
}
