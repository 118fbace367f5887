// The Express application of v1: every endpoint of the @agent-authority/api table gets the same
// chain (authenticate, check roles, read and validate the body, run the handler), and every error
// becomes its problem answer (http/problem.ts) in the one error handler at the end.

import { randomUUID } from "node:crypto";
import {
  API_LIMITS,
  ENDPOINTS,
  buildOpenApiDocument,
  idPattern,
  ID_PREFIXES,
  unstorableCharacter,
  type Endpoint,
  type RequestSchemaName,
} from "@agent-authority/api";
import express, { type NextFunction, type Request, type Response } from "express";
import type { Logger } from "../log.js";
import { callerForSecret, missingRole, unauthenticated } from "../services/keys/index.js";
import type { Caller, ServiceContext } from "../services/common/index.js";
import type { Page } from "../store/core/index.js";
import { parseJsonBody, validateBody } from "./body.js";
import { mountAuthzen } from "./authzen.js";
import { CONSOLE_PATH, consoleRouter } from "./console.js";
import { BEFORE_BODY, HANDLERS, type HandlerRequest, type HandlerResult } from "./handlers.js";
import { handleAuthorize, setSafetyHeaders } from "./hot-path.js";
import { streamEvents, type StreamSettings } from "./event-stream.js";
import { answerPost, keptInstead } from "./idempotency.js";
import type { FreshAnswer } from "../services/idempotency/index.js";
import { HttpMetrics } from "./metrics.js";
import { presentedSecret } from "./presented-key.js";
import { problemAnswer } from "./problem.js";
import { requestLog } from "./request-log.js";
import { Refusal } from "../services/common/index.js";

export interface AppOptions {
  readonly ctx: ServiceContext;
  readonly logger: Logger;
  readonly version: string;
  /** The metrics to count into; the server shares one with the authorize hot path. */
  readonly metrics?: HttpMetrics;
  /** Addresses of trusted reverse proxies, whose X-Forwarded-For names the logged client. */
  readonly trustedProxies?: ReadonlySet<string>;
  /** The event stream's feed, bounds and heartbeat; absent: `GET /v1/events` answers 503 `not_ready`. */
  readonly streams?: StreamSettings;
  /** The AuthZEN `policy_decision_point` identifier; absent: the origin the request was sent to. */
  readonly authzenPdp?: string;
}

/** Path parameters and the id prefix each must carry. */
const PARAM_PREFIX: Readonly<Record<string, string>> = {
  agent_id: ID_PREFIXES.agent,
  grant_id: ID_PREFIXES.grant,
  certificate_id: ID_PREFIXES.certificate,
  key_id: ID_PREFIXES.key,
  ledger_id: ID_PREFIXES.ledger,
  family_id: ID_PREFIXES.family,
  breaker_id: ID_PREFIXES.breaker,
  webhook_id: ID_PREFIXES.webhook,
  delivery_id: ID_PREFIXES.delivery,
};
const PARAM_PATTERN = new Map(Object.entries(PARAM_PREFIX).map(([name, prefix]) => [name, new RegExp(idPattern(prefix))]));

interface Locals {
  caller?: Caller;
  requestId: string;
  keyId?: string;
}

/** The Express route of a table path: `{name}` becomes `:name`, and the index `/` is `/v1` itself (`/v1/` too). */
function expressPath(path: string): string {
  return path === "/" ? "/v1" : `/v1${path.replace(/\{([a-z_]+)\}/g, ":$1")}`;
}

function locals(res: Response): Locals {
  return res.locals as Locals;
}

function authenticate(ctx: ServiceContext) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const secret = presentedSecret(req.headers);
    const caller = secret === undefined ? undefined : await callerForSecret(ctx.store, secret);
    // The Bearer challenge goes with the 401 (problemAnswer).
    if (caller === undefined) throw unauthenticated(secret !== undefined);
    locals(res).caller = caller;
    next();
  };
}

function authorize(endpoint: Endpoint) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const caller = locals(res).caller!;
    const roles = endpoint.roles ?? [];
    if (!caller.roles.some((role) => roles.includes(role))) {
      throw missingRole(endpoint.method, `/v1${endpoint.path}`, roles);
    }
    if (endpoint.human && caller.kind !== "human") throw new Refusal("human_required", "this action needs a human key");
    next();
  };
}

const readRawBody = express.raw({ type: () => true, limit: API_LIMITS.requestBodyBytesMax });

function paramsOf(req: Request): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.params as Record<string, string>)) {
    const pattern = PARAM_PATTERN.get(name);
    if (pattern !== undefined && !pattern.test(value)) {
      throw new Refusal(
        "invalid_id",
        `\`${name}\` must look like \`${PARAM_PREFIX[name]}_…\` (26 characters after the underscore), got \`${value.slice(0, 80)}\``,
      );
    }
    params[name] = value;
  }
  return params;
}

/** A handler reads only the query parameters its endpoint documents (a programmer error otherwise). */
function documentedQuery(endpoint: Endpoint, name: string): string {
  if (!endpoint.query.includes(name)) throw new Error(`${endpoint.operationId} reads the undocumented query parameter ${name}`);
  return name;
}

/** The page size asked for (`?limit=`, 1 to the list limit), or the default. */
function limitOf(req: Request, endpoint: Endpoint): number {
  documentedQuery(endpoint, "limit");
  const rawLimit = (req.query as Record<string, unknown>)["limit"];
  if (rawLimit === undefined) return API_LIMITS.listLimitDefault;
  const limit = Number(rawLimit);
  if (typeof rawLimit !== "string" || !Number.isSafeInteger(limit) || limit < 1 || limit > API_LIMITS.listLimitMax) {
    throw new Refusal("invalid_query", `\`limit\` must be an integer from 1 to ${API_LIMITS.listLimitMax}`);
  }
  return limit;
}

function pageOf(req: Request, endpoint: Endpoint): Page {
  const limit = limitOf(req, endpoint);
  documentedQuery(endpoint, "after");
  const query = req.query as Record<string, unknown>;
  const after = query["after"];
  if (after !== undefined && (typeof after !== "string" || after.length > 64 || unstorableCharacter(after) !== undefined)) {
    throw new Refusal("invalid_query", "`after` must be an id");
  }
  return { limit, after: after as string | undefined };
}

function queryString(req: Request, name: string): string | undefined {
  const value = (req.query as Record<string, unknown>)[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length > 200) throw new Refusal("invalid_query", `\`${name}\` must be a single string`);
  // The rule of text for bodies holds for queries too (decision 0306).
  if (unstorableCharacter(value) !== undefined) throw new Refusal("invalid_query", `\`${name}\` holds NUL or a lone surrogate`);
  return value;
}

/** A handler's result as the exact text sent, and the answer a replay gets instead when that must not be stored. */
function rendered(endpoint: Endpoint, result: HandlerResult, path: string): FreshAnswer {
  // Metrics are the Prometheus text format (version 0.0.4); a checkpoint is a plain signed note.
  if (endpoint.mediaType === "text/plain")
    return {
      status: result.status,
      contentType: endpoint.operationId === "metrics" ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8",
      text: String(result.body),
    };
  const kept = keptInstead(result.replayInstead, path);
  return {
    status: result.status,
    contentType: "application/json; charset=utf-8",
    text: JSON.stringify(result.body),
    ...(kept === undefined ? {} : { kept }),
  };
}

function route(endpoint: Endpoint, options: AppOptions, openapi: unknown, metrics: HttpMetrics) {
  const handler = HANDLERS[endpoint.operationId];
  if (handler === undefined) throw new Error(`no handler for ${endpoint.operationId}`);
  return async (req: Request, res: Response): Promise<void> => {
    // Everything the handler reads and writes goes through `ctx`: with an Idempotency-Key its store
    // is the transaction that claims the key.
    const run = async (ctx: ServiceContext): Promise<FreshAnswer> => {
      const params = paramsOf(req);
      let body: unknown;
      const before = BEFORE_BODY[endpoint.operationId];
      const caller = locals(res).caller;
      if (before !== undefined && caller !== undefined) await before(ctx, caller, params);
      if (endpoint.body !== null) {
        const parsed = parseJsonBody(Buffer.isBuffer(req.body) ? req.body : undefined, req.headers["content-type"]);
        body = validateBody(endpoint.body as RequestSchemaName, parsed === undefined && endpoint.bodyOptional ? {} : parsed);
      }
      const request: HandlerRequest = {
        ctx,
        caller,
        params,
        body,
        sentText: endpoint.body !== null && Buffer.isBuffer(req.body) ? req.body.toString("utf8") : undefined,
        page: () => pageOf(req, endpoint),
        limit: () => limitOf(req, endpoint),
        query: (name) => queryString(req, documentedQuery(endpoint, name)),
        openapi,
        metrics,
        version: options.version,
      };
      return rendered(endpoint, await handler(request), req.originalUrl.split("?")[0]!);
    };
    const caller = locals(res).caller;
    const answer =
      endpoint.method === "post" && caller !== undefined
        ? await answerPost(options.ctx, req, endpoint.operationId, caller, run)
        : { ...(await run(options.ctx)), replayed: false };
    if (answer.replayed) res.setHeader("idempotent-replayed", "true");
    res.status(answer.status).type(answer.contentType).send(answer.text);
  };
}

/** The longest path a request log line carries, in characters; a longer one is cut and marked. */
export const LOGGED_PATH_CHARS_MAX = 512;

/**
 * The metric label of a request: the template of the route that answered, mount point included
 * (`/console/:file`, never the file), or `unmatched`. Templates are fixed in code, so the number of
 * series stays bounded whatever paths clients send.
 */
function routeTemplate(req: Request, res: Response): string {
  // A mounted router names the template it answered with (console.ts); a route of its that passed
  // the request on answered nothing, so only the v1 routes, mounted at the top, are read here.
  const named = (res.locals as { routeTemplate?: unknown }).routeTemplate;
  if (typeof named === "string") return named;
  const route = (req.route as { path?: unknown } | undefined)?.path;
  return typeof route === "string" && route.startsWith("/v1/") ? route : "unmatched";
}

/** The path as the client sent it (a mounted router sees only its own part), without the query. */
function loggedPath(req: Request): string {
  const path = req.originalUrl.split("?")[0]!;
  return path.length > LOGGED_PATH_CHARS_MAX ? `${path.slice(0, LOGGED_PATH_CHARS_MAX)}…` : path;
}

/** Every request gets an id, the safety headers, and on finishing a metric and a log line. */
function observeRequests(app: express.Express, options: AppOptions, metrics: HttpMetrics): void {
  const log = requestLog(options.logger, options.trustedProxies ?? new Set<string>());
  app.use((req, res, next) => {
    const started = performance.now();
    locals(res).requestId = randomUUID();
    res.setHeader("x-request-id", locals(res).requestId);
    setSafetyHeaders(res);
    res.on("finish", () => {
      const seconds = (performance.now() - started) / 1000;
      metrics.observe(req.method, routeTemplate(req, res), res.statusCode, seconds);
      log(req, locals(res).requestId, req.method, loggedPath(req), res.statusCode, seconds, locals(res).caller?.keyId ?? locals(res).keyId);
    });
    next();
  });
}

/** One implementation of authorize: the hot path's, reached here when Express is called directly. */
function mountAuthorize(app: express.Express, path: string, options: AppOptions): void {
  app.post(path, async (req, res) => {
    const keyId = await handleAuthorize(options.ctx, options.logger, req, res);
    if (keyId !== undefined) locals(res).keyId = keyId;
  });
}

/** The event stream: a long-lived answer, not a handler's result. */
function mountEventStream(app: express.Express, path: string, endpoint: Endpoint, options: AppOptions): void {
  app.get(path, authenticate(options.ctx), authorize(endpoint), async (req, res) => {
    if (options.streams === undefined) throw new Refusal("not_ready", "the event stream is not running");
    const request = {
      headers: req.headers,
      query: queryString(req, documentedQuery(endpoint, "types")),
      after: queryString(req, documentedQuery(endpoint, "after")),
    };
    await streamEvents(options.ctx, options.streams, locals(res).caller!, request, res);
  });
}

/** Every documented endpoint: authenticated and role-checked unless public, its body read when it has one. */
function mountEndpoints(app: express.Express, options: AppOptions, openapi: unknown, metrics: HttpMetrics): void {
  for (const endpoint of ENDPOINTS) {
    const path = expressPath(endpoint.path);
    if (endpoint.operationId === "authorize") mountAuthorize(app, path, options);
    else if (endpoint.operationId === "streamEvents") mountEventStream(app, path, endpoint, options);
    else {
      const chain =
        endpoint.roles === null
          ? [route(endpoint, options, openapi, metrics)]
          : [
              authenticate(options.ctx),
              authorize(endpoint),
              ...(endpoint.body === null ? [] : [readRawBody]),
              route(endpoint, options, openapi, metrics),
            ];
      app[endpoint.method](path, ...chain);
    }
  }
}

/** A path no endpoint matches is route_not_found; a known path with another method is method_not_allowed, with `allow`. */
function refuseUnmatched(app: express.Express): void {
  const known = ENDPOINTS.map((e) => ({
    pattern: new RegExp(`^/v1${e.path === "/" ? "" : e.path.replace(/\{[a-z_]+\}/g, "[^/]+")}/?$`),
    method: e.method.toUpperCase(),
  }));
  app.use((req, res) => {
    const allowed = known.filter((k) => k.pattern.test(req.path)).map((k) => k.method);
    if (allowed.length > 0) {
      res.setHeader("allow", [...new Set(allowed)].join(", "));
      throw new Refusal("method_not_allowed", `\`${req.path}\` accepts ${[...new Set(allowed)].join(", ")}`);
    }
    throw new Refusal("route_not_found", `no endpoint \`${req.method} ${req.path}\``);
  });
}

/** Every error of Express becomes its problem answer here (problemAnswer, RFC 9457). */
function answerErrors(app: express.Express, options: AppOptions): void {
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const answer = problemAnswer(error, req.originalUrl.split("?")[0]!, { logger: options.logger, requestId: locals(res).requestId });
    if (res.headersSent) return;
    for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
    res.status(answer.status).type(answer.contentType).send(answer.text);
  });
}

export function createApp(options: AppOptions): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  // A relative server URL: clients resolve it against wherever they fetched the document from.
  const openapi = buildOpenApiDocument("/v1", options.version);
  const metrics = options.metrics ?? new HttpMetrics();
  observeRequests(app, options, metrics);
  // The approvals console: static files with their own security headers, outside /v1.
  app.use(CONSOLE_PATH, consoleRouter());
  // The AuthZEN 1.0 endpoints, beside v1 (docs/authzen.md).
  mountAuthzen(app, options.ctx, options.authzenPdp);
  mountEndpoints(app, options, openapi, metrics);
  refuseUnmatched(app);
  answerErrors(app, options);
  return app;
}
