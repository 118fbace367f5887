// The server as a value: open the store, migrate, listen, make sure an admin key exists, and
// close gracefully. main.ts and the CLI's `serve` both use it; tests start it on a random port.

import { evaluationServer, isEvaluationRequest } from "./http/authzen-hot-path.js";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { TRANSPORT_LIMITS, type ServerConfig } from "./config.js";
import { createApp } from "./http/app.js";
import { AuthorizeWorker, authorizeWorkerAvailable } from "./http/authorize-thread.js";
import { StreamRegistry } from "./http/event-stream.js";
import { EVENT_LIMITS, EventFeed } from "./services/events/index.js";
import { WEBHOOK_DELIVERY_LIMITS, WebhookDispatcher } from "./services/events/index.js";
import { answerClientError } from "./http/client-error.js";
import { authorizeServer, isAuthorizeRequest } from "./http/hot-path.js";
import { HttpMetrics, METRICS_LIMITS } from "./http/metrics.js";
import { jsonLogger, type Logger } from "./log.js";
import type { FaultHooks, ServiceContext } from "./services/common/index.js";
import { startIdempotencyPruner, type IdempotencyPruner } from "./services/idempotency/index.js";
import { startLedgerLogger, type LedgerLogger } from "./services/ledger/index.js";
import { bootstrapAdminKey } from "./services/keys/index.js";
import { isPostgresUrl, openStore } from "./store/core/index.js";
import { derivedKey, parseServerKey, serverKeyFromFile } from "./server-key.js";
import { Signer, SIGNING_LIMITS } from "./services/seal/index.js";
import { THREADED_WRITER_CHECKPOINT_FRAMES } from "./store/drivers/index.js";
import type { Store } from "./store/core/index.js";

export const SERVER_VERSION = "0.2.0";

export interface AuthorityServer {
  readonly store: Store;
  readonly config: ServerConfig;
  /** `http://host:port/v1`, known once listening. */
  readonly baseUrl: string;
  /** The generated first admin key, when this start created one (printed once by main). */
  readonly generatedAdminKey: string | null;
  close(): Promise<void>;
}

export interface StartOptions {
  readonly logger?: Logger;
  /** The clock; tests pass their own. */
  readonly now?: () => number;
  /** An already-open store to serve instead of opening `config.databaseUrl`. */
  readonly store?: Store;
  /** Whether `close()` also closes a store passed in `store` (a store the server opened, it always closes). */
  readonly ownsStore?: boolean;
  /** How long `close()` lets requests in flight finish before it drops their connections. */
  readonly shutdownGraceMs?: number;
  /** Test-only fault injection (the crash tests). */
  readonly faults?: FaultHooks;
}

/**
 * Whether authorize transactions run on a worker thread with a second connection: for a SQLite
 * file the server opens itself, with the real clock, when the server runs compiled. PostgreSQL, an
 * in-memory database, a store passed in and a clock passed in answer on the main thread.
 */
function authorizeOnWorker(config: ServerConfig, options: StartOptions): boolean {
  if (options.store !== undefined || options.now !== undefined) return false;
  if (isPostgresUrl(config.databaseUrl) || /^(sqlite:)?:memory:$/.test(config.databaseUrl)) return false;
  return authorizeWorkerAvailable();
}

/**
 * The request listener: Express behind a plain node:http listener, so that a lean hot path (for
 * example POST /v1/authorize) can later answer before Express is entered.
 */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The transport bounds: a client that has not sent its headers within `headersTimeoutMs`, or its
 * whole request within `requestTimeoutMs`, is cut off. Node looks for such connections only every
 * `connectionsCheckingInterval`, so that interval is kept short enough for the cut to come on time.
 */
function transportOptions(config: ServerConfig): { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number } {
  const headersTimeout = config.headersTimeoutMs ?? TRANSPORT_LIMITS.headersTimeoutMsDefault;
  const requestTimeout = Math.max(headersTimeout, config.requestTimeoutMs ?? TRANSPORT_LIMITS.requestTimeoutMsDefault);
  const connectionsCheckingInterval = Math.min(TRANSPORT_LIMITS.timeoutCheckIntervalMsMax, Math.max(10, Math.floor(headersTimeout / 10)));
  return { headersTimeout, requestTimeout, connectionsCheckingInterval };
}

/**
 * The server key: AUTHORITY_SERVER_KEY, else the key file (made when absent). A configuration built
 * in code with neither gets a key of this process alone, which suits a database that lives no longer.
 */
export function resolveServerKey(config: ServerConfig): Buffer {
  if (config.serverKey !== undefined) return parseServerKey(config.serverKey, "AUTHORITY_SERVER_KEY");
  if (config.serverKeyFile !== undefined) return serverKeyFromFile(config.serverKeyFile);
  return randomBytes(32);
}

/**
 * Reads the signing keys again every interval: another replica's rotation reaches this one (and
 * its authorize thread) within it; until then it signs with a key the JWKS still lists, retired.
 */
function refreshSigningKeys(
  signer: Signer,
  store: Store,
  now: () => number,
  logger: Logger,
  worker: () => AuthorizeWorker | undefined,
): NodeJS.Timeout {
  const timer = setInterval(() => {
    signer.load(store, now()).then(
      () => worker()?.refreshSigningKeys(),
      (error: unknown) =>
        logger.log("warn", "signing keys not read again", { error: error instanceof Error ? error.message : String(error) }),
    );
  }, SIGNING_LIMITS.refreshIntervalMs);
  timer.unref();
  return timer;
}

/** What a start has set going so far; a failed start and `close()` both stop exactly these. */
interface Started {
  http?: Server;
  worker?: AuthorizeWorker;
  pruner?: IdempotencyPruner;
  ledgerLogger?: LedgerLogger;
  feed?: EventFeed;
  dispatcher?: WebhookDispatcher;
  dispatcherStore?: Store;
  refresh?: NodeJS.Timeout;
}

/**
 * The server's own store. The worker's connection has a checkpoint thread (sqlite-driver.ts); this
 * connection's commits then checkpoint the log only as late as the worker's own do.
 */
function openServerStore(config: ServerConfig, onWorker: boolean, metrics: HttpMetrics): Store {
  return openStore(config.databaseUrl, {
    schema: config.databaseSchema,
    engine: config.databaseEngine,
    namedStatements: config.databaseNamedStatements ?? true,
    ...(onWorker ? { walCheckpointFrames: THREADED_WRITER_CHECKPOINT_FRAMES } : {}),
    observations: metrics.observations,
  });
}

/** Brings the schema up to date, saying which migrations ran. */
async function migrate(store: Store, now: () => number, logger: Logger): Promise<void> {
  const applied = await store.migrate(now());
  if (applied.length > 0) logger.log("info", "migrations applied", { versions: applied, dialect: store.dialect });
}

/** The authorize thread, with its own connection to the same database. */
function startAuthorizeWorker(
  config: ServerConfig,
  options: StartOptions,
  serverKey: Buffer,
  holdLifetimeMs: number | undefined,
  logger: Logger,
  metrics: HttpMetrics,
): Promise<AuthorizeWorker> {
  return AuthorizeWorker.start(
    {
      databaseUrl: config.databaseUrl,
      environment: config.environment,
      autoApprovalCeilingMinor: config.autoApprovalCeilingMinor,
      holdLifetimeMs,
      serverKey: serverKey.toString("base64url"),
      ...(options.faults === undefined ? {} : { faults: options.faults }),
    },
    (error) =>
      logger.log("error", "the authorize worker stopped; authorize answers 500 and the server is not ready", { error: error.message }),
    metrics.observations,
  );
}

/**
 * The webhook dispatcher, made but not yet started. Webhooks run on the real clock: their backoff
 * and leases are about the receiver, not the decisions. On SQLite the dispatcher writes through a
 * connection of its own that does not wait for the disk: losing its last writes in a power cut only
 * sends a delivery again (decision 0704), and its commits then hold the write lock the decision
 * path waits for only for microseconds.
 */
function makeWebhookDispatcher(
  config: ServerConfig,
  options: StartOptions,
  store: Store,
  logger: Logger,
  started: Started,
): WebhookDispatcher {
  if (store.dialect === "sqlite" && options.store === undefined) {
    started.dispatcherStore = openStore(config.databaseUrl, {
      durability: "normal",
      walCheckpointFrames: THREADED_WRITER_CHECKPOINT_FRAMES,
    });
  }
  started.dispatcher = new WebhookDispatcher(
    started.dispatcherStore ?? store,
    {
      retryScheduleMs: config.webhookRetryScheduleMs ?? WEBHOOK_DELIVERY_LIMITS.retryScheduleMsDefault,
      attemptTimeoutMs: config.webhookAttemptTimeoutMs ?? WEBHOOK_DELIVERY_LIMITS.attemptTimeoutMsDefault,
      concurrencyPerWebhook: config.webhookConcurrency ?? WEBHOOK_DELIVERY_LIMITS.concurrencyPerWebhookDefault,
      allowPrivate: config.webhookAllowPrivate === true,
      tickMs: config.eventPollMs ?? EVENT_LIMITS.pollMsDefault,
    },
    logger,
  );
  return started.dispatcher;
}

/** What every service reads: the store, the clock, the keys, the worker and the observers. */
function serviceContext(
  config: ServerConfig,
  options: StartOptions,
  parts: { store: Store; now: () => number; signer: Signer; serverKey: Buffer; holdLifetimeMs: number | undefined },
  webhooks: WebhookDispatcher,
  worker: AuthorizeWorker | undefined,
  metrics: HttpMetrics,
): ServiceContext {
  const { store, now, signer, serverKey, holdLifetimeMs } = parts;
  return {
    store,
    environment: config.environment,
    autoApprovalCeilingMinor: config.autoApprovalCeilingMinor,
    now,
    webhookAllowPrivate: config.webhookAllowPrivate === true,
    webhookNudge: () => webhooks.nudge(),
    signer,
    cursorKey: derivedKey(serverKey, "cursor"),
    ...(holdLifetimeMs === undefined ? {} : { holdLifetimeMs }),
    ...(config.ledgerOrigin === undefined ? {} : { ledgerOrigin: config.ledgerOrigin }),
    ...(worker === undefined ? {} : { authorizeWorker: worker }),
    ...(options.faults === undefined ? {} : { faults: options.faults }),
    observer: metrics,
  };
}

/** The background work beside requests: idempotency pruning, the ledger logger, the event feed. */
function startBackground(config: ServerConfig, store: Store, now: () => number, logger: Logger, started: Started): EventFeed {
  started.pruner = startIdempotencyPruner(store, now, logger);
  started.ledgerLogger = startLedgerLogger(store, logger);
  started.feed = new EventFeed(store, config.eventPollMs ?? EVENT_LIMITS.pollMsDefault);
  started.feed.start();
  return started.feed;
}

/** Express and the authorize hot path behind one listener: the hot path answers POST /v1/authorize before Express is entered. */
function requestListener(
  config: ServerConfig,
  ctx: ServiceContext,
  logger: Logger,
  metrics: HttpMetrics,
  feed: EventFeed,
): RequestListener {
  const trustedProxies = new Set(config.trustedProxies ?? []);
  const streams = { feed, registry: new StreamRegistry(), heartbeatMs: config.eventHeartbeatMs ?? EVENT_LIMITS.heartbeatMsDefault };
  const app = createApp({
    ctx,
    logger,
    version: SERVER_VERSION,
    metrics,
    trustedProxies,
    streams,
    ...(config.authzenPdp === undefined ? {} : { authzenPdp: config.authzenPdp }),
  });
  const serveAuthorize = authorizeServer(ctx, logger, metrics, trustedProxies);
  // POST /access/v1/evaluation too is answered before Express, by the function its route calls (decision 1703).
  const serveEvaluation = evaluationServer(ctx, logger, metrics, trustedProxies);
  return (req, res) => {
    if (isAuthorizeRequest(req)) serveAuthorize(req, res);
    else if (isEvaluationRequest(req)) serveEvaluation(req, res);
    else app(req, res);
  };
}

/** Holds the port. What the parser refuses before any handler runs is a problem with the usual headers too. */
async function listen(config: ServerConfig, listener: RequestListener, started: Started): Promise<Server> {
  const server = createServer(transportOptions(config), listener);
  started.http = server;
  server.on("clientError", answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => resolve());
  });
  return server;
}

/** The base URL the server answers on, logged once. */
function announce(server: Server, config: ServerConfig, store: Store, worker: AuthorizeWorker | undefined, logger: Logger): string {
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const baseUrl = `http://${host}:${address.port}/v1`;
  logger.log("info", "listening", {
    url: baseUrl,
    environment: config.environment,
    database: store.dialect,
    authorize_thread: worker === undefined ? "main" : "worker",
  });
  return baseUrl;
}

/**
 * Stops what was started after the listener, in order; `settle` decides whether a failure to stop
 * one part is passed on (a close) or ignored so the rest still stop (a failed start).
 */
async function stopBackground(started: Started, settle: (stop: Promise<unknown>) => Promise<unknown>): Promise<void> {
  if (started.dispatcher !== undefined) await settle(started.dispatcher.stop());
  if (started.dispatcherStore !== undefined) await settle(started.dispatcherStore.close());
  clearInterval(started.refresh);
  if (started.pruner !== undefined) await settle(started.pruner.stop());
  if (started.ledgerLogger !== undefined) await settle(started.ledgerLogger.stop());
  if (started.worker !== undefined) await settle(started.worker.close());
}

/**
 * Stops accepting, closes idle keep-alive connections, lets requests in flight finish, and drops
 * whatever is still open after the grace period; open event streams end at once (their clients
 * resume elsewhere from their last id). Then the background work, the worker and the store stop.
 */
async function closeServer(
  server: Server,
  started: Started,
  options: StartOptions,
  closeStore: () => Promise<void>,
  logger: Logger,
): Promise<void> {
  const grace = setTimeout(() => server.closeAllConnections(), options.shutdownGraceMs ?? 10_000);
  started.feed?.stop();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  clearTimeout(grace);
  await stopBackground(started, (stop) => stop);
  await closeStore();
  logger.log("info", "stopped", {});
}

/** Undoes a start that failed part way: everything started is stopped, and no failure to stop hides the first. */
async function abandonStart(started: Started, closeStore: () => Promise<void>): Promise<void> {
  started.feed?.stop();
  started.http?.close();
  await stopBackground(started, (stop) => stop.catch(() => undefined));
  await closeStore().catch(() => undefined);
}

export async function startServer(config: ServerConfig, options: StartOptions = {}): Promise<AuthorityServer> {
  const logger = options.logger ?? jsonLogger(config.logLevel);
  const now = options.now ?? Date.now;
  const onWorker = authorizeOnWorker(config, options);
  // Made first, so that the store and the authorize worker count into it from their start.
  const metrics = new HttpMetrics();
  const store = options.store ?? openServerStore(config, onWorker, metrics);
  const ownsStore = options.store === undefined || options.ownsStore === true;
  const closeStore = async (): Promise<void> => {
    if (ownsStore) await store.close();
  };
  const started: Started = {};
  try {
    const serverKey = resolveServerKey(config);
    await migrate(store, now, logger);
    const signer = new Signer(derivedKey(serverKey, "signing-key-seal"));
    await signer.load(store, now());
    started.refresh = refreshSigningKeys(signer, store, now, logger, () => started.worker);
    const holdLifetimeMs = config.holdLifetimeHours === undefined ? undefined : config.holdLifetimeHours * 3_600_000;
    if (onWorker) started.worker = await startAuthorizeWorker(config, options, serverKey, holdLifetimeMs, logger, metrics);
    const dispatcher = makeWebhookDispatcher(config, options, store, logger, started);
    const parts = { store, now, signer, serverKey, holdLifetimeMs };
    const ctx = serviceContext(config, options, parts, dispatcher, started.worker, metrics);
    metrics.watchWaiting(() => store.decisionPath().gatedWaiting(now(), METRICS_LIMITS.gatedWaitingCountMax), now);
    const feed = startBackground(config, store, now, logger, started);
    const server = await listen(config, requestListener(config, ctx, logger, metrics, feed), started);
    // The first admin key is created only once the port is held: a start that cannot listen
    // (EADDRINUSE) leaves the database without a key that nobody saw, and the next start makes one.
    const admin = await bootstrapAdminKey(store, config.adminKey, now());
    dispatcher.start();
    if (admin.created) logger.log("info", "first admin key created", { identity: "admin", generated: admin.generatedSecret !== null });
    const baseUrl = announce(server, config, store, started.worker, logger);
    let closing: Promise<void> | undefined;
    return {
      store,
      config,
      baseUrl,
      generatedAdminKey: admin.generatedSecret,
      close() {
        closing ??= closeServer(server, started, options, closeStore, logger);
        return closing;
      },
    };
  } catch (error) {
    await abandonStart(started, closeStore);
    throw error;
  }
}
