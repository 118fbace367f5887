// Server configuration from environment variables, optionally layered over a JSON file named by
// AUTHORITY_CONFIG_FILE (the environment wins). docs/operations.md lists every setting.

import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { join, resolve } from "node:path";
import { isCheckpointName } from "@agent-authority/sdk";
import { isStrongEnough } from "./secrets.js";
import { parseServerKey, ServerKeyError } from "./server-key.js";
import { DATABASE_ENGINES, isDatabaseEngine, type DatabaseEngine } from "./store/sql/index.js";
import { EVENT_LIMITS } from "./services/events/index.js";
import { WEBHOOK_DELIVERY_LIMITS } from "./services/events/index.js";

export interface ServerConfig {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** A `postgres://` URL, or a SQLite file path; default `<dataDir>/authority.db`. */
  readonly databaseUrl: string;
  /** PostgreSQL only: the schema to use; absent uses the connection's default search path. */
  readonly databaseSchema?: string | undefined;
  /**
   * PostgreSQL only: send reads and writes as named (prepared) statements (decision 0313); off for
   * a transaction-mode pooler that does not keep them. Default on.
   */
  readonly databaseNamedStatements?: boolean | undefined;
  /**
   * PostgreSQL only: the engine behind the URL, which sets how locks are taken and the isolation
   * level (decision 0310); default `postgresql`.
   */
  readonly databaseEngine?: DatabaseEngine | undefined;
  readonly environment: string;
  /**
   * The server key's file (AUTHORITY_SERVER_KEY_FILE; loadConfig's default `<dataDir>/server.key`),
   * made on the first start when absent. It seals the signing keys and keys the cursors' HMAC.
   */
  readonly serverKeyFile?: string | undefined;
  /** The server key itself (AUTHORITY_SERVER_KEY, 43 base64url characters); wins over the file. */
  readonly serverKey?: string | undefined;
  /** The first admin key on an empty database; absent means one is generated and printed once. */
  readonly adminKey?: string | undefined;
  /** Grants whose amount budget exceeds this are born `pending_approval`. */
  readonly autoApprovalCeilingMinor: number;
  readonly logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** The longest a hold lives, in hours (docs/decisions.md); absent: 24. A hold never outlives its grant. */
  readonly holdLifetimeHours?: number | undefined;
  /** How long a client may take to send a request's headers, in milliseconds; absent: 10,000. */
  readonly headersTimeoutMs?: number | undefined;
  /** How long a client may take to send a whole request, in milliseconds; absent: 30,000. */
  readonly requestTimeoutMs?: number | undefined;
  /**
   * Addresses of the reverse proxies in front of the server (AUTHORITY_TRUSTED_PROXIES, comma
   * separated): a request from one of them is logged with the client address it forwarded.
   */
  readonly trustedProxies?: readonly string[] | undefined;
  /** How often new events are looked for, in milliseconds (AUTHORITY_EVENT_POLL_MS); absent: 250. */
  readonly eventPollMs?: number | undefined;
  /** The event stream's heartbeat interval, in milliseconds (AUTHORITY_EVENT_HEARTBEAT_MS); absent: 15,000. */
  readonly eventHeartbeatMs?: number | undefined;
  /** Whether webhook URLs may name loopback, private and link-local addresses (AUTHORITY_WEBHOOK_ALLOW_PRIVATE); default off. */
  readonly webhookAllowPrivate?: boolean | undefined;
  /** The waits between a delivery's attempts, in milliseconds (AUTHORITY_WEBHOOK_RETRY_SCHEDULE_MS, comma separated). */
  readonly webhookRetryScheduleMs?: readonly number[] | undefined;
  /** One attempt's timeout, in milliseconds (AUTHORITY_WEBHOOK_TIMEOUT_MS); default 10,000. */
  readonly webhookAttemptTimeoutMs?: number | undefined;
  /** Deliveries of one webhook in flight at once, all replicas together (AUTHORITY_WEBHOOK_CONCURRENCY); default 4. */
  readonly webhookConcurrency?: number | undefined;
  /**
   * The origin line of the ledger's checkpoints (AUTHORITY_LEDGER_ORIGIN, decision 0621); absent:
   * `agent-authority/<kid of the first signing key>`, the same on every replica.
   */
  readonly ledgerOrigin?: string | undefined;
  /**
   * The AuthZEN `policy_decision_point` identifier (AUTHORITY_AUTHZEN_PDP, decision 1702): the URL
   * enforcement points know this server by; absent, the origin each metadata request reached.
   */
  readonly authzenPdp?: string | undefined;
}

/** The transport bounds of the HTTP server, in milliseconds (docs/operations.md, Limits). */
export const TRANSPORT_LIMITS = Object.freeze({
  headersTimeoutMsDefault: 10_000,
  requestTimeoutMsDefault: 30_000,
  /** The shortest timeout a configuration may set; tests use it to keep the edge test short. */
  timeoutMsMin: 100,
  timeoutMsMax: 600_000,
  /** How often the server looks for connections past their timeout: the most a cut can lag. */
  timeoutCheckIntervalMsMax: 1_000,
});

export class ConfigError extends Error {}

/**
 * The AuthZEN decision point identifier as configured: an `https` URL with no query, fragment,
 * credentials or trailing slash (the specification's rule), or `http` on a loopback host for a
 * server tried on one machine.
 */
function policyDecisionPoint(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  const loopback = url !== undefined && ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  const fits =
    url !== undefined &&
    (url.protocol === "https:" || (url.protocol === "http:" && loopback)) &&
    url.search === "" &&
    url.hash === "" &&
    url.username === "" &&
    url.password === "" &&
    !raw.endsWith("/") &&
    !raw.includes("?") &&
    !raw.includes("#") &&
    raw.length <= 2_048;
  if (!fits) {
    throw new ConfigError(
      `AUTHORITY_AUTHZEN_PDP must be an https URL without query, fragment, credentials or trailing slash (http only on a loopback host), got \`${raw.slice(0, 300)}\``,
    );
  }
  return raw;
}

type Source = Readonly<Record<string, string | undefined>>;

function integer(source: Source, name: string, fallback: number, min: number, max: number): number {
  const raw = source[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got \`${raw}\``);
  }
  return value;
}

function onOff(source: Source, name: string, fallback: boolean): boolean {
  const raw = source[name];
  if (raw === undefined || raw === "") return fallback;
  if (raw !== "on" && raw !== "off") throw new ConfigError(`${name} must be on or off, got \`${raw}\``);
  return raw === "on";
}

function fileSource(path: string | undefined): Source {
  if (path === undefined || path === "") return {};
  const parsed = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) out[key] = String(value);
  return out;
}

function addresses(source: Source, name: string): readonly string[] {
  const raw = source[name];
  if (raw === undefined || raw.trim() === "") return [];
  const list = raw.split(",").map((item) => item.trim());
  for (const item of list) {
    if (isIP(item) === 0) throw new ConfigError(`${name} must be IP addresses separated by commas, got \`${item}\``);
  }
  return list;
}

/** The retry schedule: 1 to 30 waits, each 1 ms to 24 hours; absent: the default of about 25.7 hours in all. */
function schedule(source: Source, name: string): readonly number[] {
  const raw = source[name];
  if (raw === undefined || raw.trim() === "") return WEBHOOK_DELIVERY_LIMITS.retryScheduleMsDefault;
  const waits = raw.split(",").map((item) => Number(item.trim()));
  if (waits.length > 30 || waits.some((w) => !Number.isSafeInteger(w) || w < 1 || w > 86_400_000)) {
    throw new ConfigError(`${name} must be 1 to 30 integers from 1 to 86400000 separated by commas, got \`${raw.slice(0, 200)}\``);
  }
  return waits;
}

/** How the server logs and which environment it answers for. */
function readIdentity(source: Source): Pick<ServerConfig, "logLevel" | "environment"> {
  const logLevel = source["AUTHORITY_LOG_LEVEL"] || "info";
  if (!["debug", "info", "warn", "error", "silent"].includes(logLevel)) {
    throw new ConfigError(`AUTHORITY_LOG_LEVEL must be debug, info, warn, error or silent, got \`${logLevel}\``);
  }
  const environment = source["AUTHORITY_ENVIRONMENT"] || "development";
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(environment)) {
    throw new ConfigError(`AUTHORITY_ENVIRONMENT must be lower-case letters, digits, '.', '_' or '-', got \`${environment}\``);
  }
  return { logLevel: logLevel as ServerConfig["logLevel"], environment };
}

/** Which database, and how to speak to it: a SQLite file under the data directory unless a URL is given. */
function readDatabase(
  source: Source,
  dataDir: string,
): Pick<ServerConfig, "databaseUrl" | "databaseSchema" | "databaseNamedStatements" | "databaseEngine"> {
  const databaseUrl = source["AUTHORITY_DATABASE_URL"] || join(dataDir, "authority.db");
  const databaseEngine = source["AUTHORITY_DATABASE_ENGINE"] || "postgresql";
  if (!isDatabaseEngine(databaseEngine)) {
    throw new ConfigError(
      `AUTHORITY_DATABASE_ENGINE must be ${DATABASE_ENGINES.slice(0, -1).join(", ")} or ${DATABASE_ENGINES.at(-1)}, got \`${databaseEngine}\``,
    );
  }
  if (databaseEngine !== "postgresql" && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(`AUTHORITY_DATABASE_ENGINE=${databaseEngine} needs a postgres:// AUTHORITY_DATABASE_URL, not a SQLite file`);
  }
  return {
    databaseUrl,
    databaseSchema: source["AUTHORITY_DATABASE_SCHEMA"] || undefined,
    databaseNamedStatements: onOff(source, "AUTHORITY_DATABASE_NAMED_STATEMENTS", true),
    databaseEngine,
  };
}

/**
 * The first admin key and the server key. Checked here, before any database is opened, so that a
 * bad key writes nothing (exit 2).
 */
function readKeys(source: Source, cwd: string, dataDir: string): Pick<ServerConfig, "adminKey" | "serverKey" | "serverKeyFile"> {
  const adminKey = source["AUTHORITY_ADMIN_KEY"] || undefined;
  if (adminKey !== undefined && !isStrongEnough(adminKey)) {
    throw new ConfigError("AUTHORITY_ADMIN_KEY must be at least 32 printable characters without spaces; nothing was written");
  }
  const serverKey = source["AUTHORITY_SERVER_KEY"] || undefined;
  if (serverKey !== undefined) {
    try {
      parseServerKey(serverKey, "AUTHORITY_SERVER_KEY");
    } catch (error) {
      if (error instanceof ServerKeyError) throw new ConfigError(`${error.message}; nothing was written`);
      throw error;
    }
  }
  return { adminKey, serverKey, serverKeyFile: resolve(cwd, source["AUTHORITY_SERVER_KEY_FILE"] || join(dataDir, "server.key")) };
}

/** The ledger's checkpoint origin, when one is named. */
function readLedger(source: Source): Pick<ServerConfig, "ledgerOrigin" | "authzenPdp"> {
  const ledgerOrigin = source["AUTHORITY_LEDGER_ORIGIN"] || undefined;
  if (ledgerOrigin !== undefined && !isCheckpointName(ledgerOrigin)) {
    throw new ConfigError(
      `AUTHORITY_LEDGER_ORIGIN must be 1 to 255 printable ASCII characters without spaces or '+', got \`${ledgerOrigin.slice(0, 300)}\``,
    );
  }
  const authzenPdp = policyDecisionPoint(source["AUTHORITY_AUTHZEN_PDP"] || undefined);
  return { ...(ledgerOrigin === undefined ? {} : { ledgerOrigin }), ...(authzenPdp === undefined ? {} : { authzenPdp }) };
}

/** Where the server listens, how long a client may take to send, and which proxies it believes. */
function readTransport(source: Source): Pick<ServerConfig, "host" | "port" | "headersTimeoutMs" | "requestTimeoutMs" | "trustedProxies"> {
  const { timeoutMsMin, timeoutMsMax } = TRANSPORT_LIMITS;
  return {
    host: source["AUTHORITY_HOST"] || "127.0.0.1",
    port: integer(source, "AUTHORITY_PORT", 8080, 0, 65_535),
    headersTimeoutMs: integer(source, "AUTHORITY_HEADERS_TIMEOUT_MS", TRANSPORT_LIMITS.headersTimeoutMsDefault, timeoutMsMin, timeoutMsMax),
    requestTimeoutMs: integer(source, "AUTHORITY_REQUEST_TIMEOUT_MS", TRANSPORT_LIMITS.requestTimeoutMsDefault, timeoutMsMin, timeoutMsMax),
    trustedProxies: addresses(source, "AUTHORITY_TRUSTED_PROXIES"),
  };
}

/** The decision rules' numbers: the auto-approval ceiling and how long a hold lives. */
function readDecisions(source: Source): Pick<ServerConfig, "autoApprovalCeilingMinor" | "holdLifetimeHours"> {
  return {
    autoApprovalCeilingMinor: integer(source, "AUTHORITY_AUTO_APPROVAL_CEILING_MINOR", 0, 0, Number.MAX_SAFE_INTEGER),
    holdLifetimeHours: integer(source, "AUTHORITY_HOLD_LIFETIME_HOURS", 24, 1, 8_760),
  };
}

/** The event feed's polling and the event stream's heartbeat. */
function readEvents(source: Source): Pick<ServerConfig, "eventPollMs" | "eventHeartbeatMs"> {
  const { pollMsDefault, pollMsMin, pollMsMax, heartbeatMsDefault, heartbeatMsMin, heartbeatMsMax } = EVENT_LIMITS;
  return {
    eventPollMs: integer(source, "AUTHORITY_EVENT_POLL_MS", pollMsDefault, pollMsMin, pollMsMax),
    eventHeartbeatMs: integer(source, "AUTHORITY_EVENT_HEARTBEAT_MS", heartbeatMsDefault, heartbeatMsMin, heartbeatMsMax),
  };
}

/** Webhook delivery: private receivers, the retry schedule, each attempt's timeout, and concurrency. */
function readWebhooks(
  source: Source,
): Pick<ServerConfig, "webhookAllowPrivate" | "webhookRetryScheduleMs" | "webhookAttemptTimeoutMs" | "webhookConcurrency"> {
  const limits = WEBHOOK_DELIVERY_LIMITS;
  return {
    webhookAllowPrivate: onOff(source, "AUTHORITY_WEBHOOK_ALLOW_PRIVATE", false),
    webhookRetryScheduleMs: schedule(source, "AUTHORITY_WEBHOOK_RETRY_SCHEDULE_MS"),
    webhookAttemptTimeoutMs: integer(
      source,
      "AUTHORITY_WEBHOOK_TIMEOUT_MS",
      limits.attemptTimeoutMsDefault,
      limits.attemptTimeoutMsMin,
      limits.attemptTimeoutMsMax,
    ),
    webhookConcurrency: integer(
      source,
      "AUTHORITY_WEBHOOK_CONCURRENCY",
      limits.concurrencyPerWebhookDefault,
      1,
      limits.concurrencyPerWebhookMax,
    ),
  };
}

/**
 * Reads the configuration, table by table, each checked before the next is read; `cwd` resolves
 * the relative data directory.
 */
export function loadConfig(env: Source = process.env, cwd: string = process.cwd()): ServerConfig {
  const source: Source = { ...fileSource(env["AUTHORITY_CONFIG_FILE"]), ...env };
  const dataDir = resolve(cwd, source["AUTHORITY_DATA_DIR"] || "data");
  const identity = readIdentity(source);
  const database = readDatabase(source, dataDir);
  const keys = readKeys(source, cwd, dataDir);
  const ledger = readLedger(source);
  return {
    ...ledger,
    ...readTransport(source),
    dataDir,
    ...database,
    ...identity,
    ...keys,
    ...readDecisions(source),
    ...readEvents(source),
    ...readWebhooks(source),
  };
}
