// A real server on a random loopback port over a fresh database, and a small client for tests.

import { startServer, type AuthorityServer, type ServerConfig } from "@agent-authority/server";
import { ResponseRecorder } from "./openapi-conformance.js";
import { openTestStore, type StoreTarget, type TestStore } from "./targets.js";

export const ADMIN_KEY = "aa_test-admin-key-0123456789abcdefghijklmnop";
export const ENVIRONMENT = "test-env";
/** The server key every test server starts with, so that a restart on the same database opens its signing keys. */
export const TEST_SERVER_KEY = "dGVzdC1zZXJ2ZXIta2V5LTAxMjM0NTY3ODlhYmNkZWY";

export interface Reply {
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: any answer of the API, read by member in some 700 assertions; decisions-http.ts types its replies per call
  readonly body: any;
  readonly contentType: string | null;
  readonly headers: Headers;
}

export interface CallOptions {
  readonly key?: string | undefined;
  /** How the key is sent; both are accepted everywhere. */
  readonly via?: "bearer" | "x-api-key";
  readonly body?: unknown;
  /** A body sent exactly as given (for malformed input). */
  readonly raw?: string | Buffer;
  readonly contentType?: string;
}

export interface TestServer {
  readonly server: AuthorityServer;
  readonly db: TestStore;
  readonly baseUrl: string;
  /** Every answer `call` received; checked against the served OpenAPI document on `close()`. */
  readonly recorder: ResponseRecorder;
  call(method: string, path: string, options?: CallOptions): Promise<Reply>;
  /** Creates a key with the given roles and answers its secret. */
  key(
    identity: string,
    roles: string[],
    options?: { kind?: "human" | "service"; agent_id?: string; agent_ids?: string[] },
  ): Promise<string>;
  /** Checks every recorded answer against the served OpenAPI document, then stops the server. */
  close(): Promise<void>;
}

export interface LogLine {
  readonly level: string;
  readonly msg: string;
  readonly fields: Record<string, unknown>;
}

export async function startTestServer(target: StoreTarget, config: Partial<ServerConfig> = {}, logs?: LogLine[]): Promise<TestServer> {
  const db = await openTestStore(target);
  const server = await startServer(
    {
      host: "127.0.0.1",
      port: 0,
      dataDir: "unused",
      databaseUrl: db.url,
      environment: ENVIRONMENT,
      adminKey: ADMIN_KEY,
      serverKey: TEST_SERVER_KEY,
      autoApprovalCeilingMinor: 10_000,
      logLevel: "silent",
      ...config,
    },
    {
      store: db.store,
      ownsStore: false,
      ...(logs === undefined ? {} : { logger: { log: (level, msg, fields = {}) => logs.push({ level, msg, fields }) } }),
    },
  );
  const recorder = new ResponseRecorder();
  const call = async (method: string, path: string, options: CallOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = {};
    if (options.key !== undefined) {
      if (options.via === "x-api-key") headers["x-api-key"] = options.key;
      else headers["authorization"] = `Bearer ${options.key}`;
    }
    let body: string | Buffer | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers["content-type"] = options.contentType ?? "application/json";
    // A raw Buffer is copied into a plain byte array, which every fetch typing accepts as a body.
    const payload = typeof body === "string" || body === undefined ? body : Uint8Array.from(body);
    const url = `${server.baseUrl}${path}`;
    const response = await fetch(url, { method, headers, ...(payload === undefined ? {} : { body: payload }) });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      // Leave non-JSON bodies as text: the test sees exactly what came back.
    }
    recorder.record(server.baseUrl, method, url, response, parsed);
    return { status: response.status, body: parsed, contentType: response.headers.get("content-type"), headers: response.headers };
  };
  return {
    server,
    db,
    baseUrl: server.baseUrl,
    recorder,
    call,
    async key(identity, roles, options = {}) {
      const reply = await call("POST", "/keys", {
        key: ADMIN_KEY,
        body: {
          identity,
          kind: options.kind ?? "human",
          roles,
          ...(options.agent_id === undefined ? {} : { agent_id: options.agent_id }),
          ...(options.agent_ids === undefined ? {} : { agent_ids: options.agent_ids }),
        },
      });
      if (reply.status !== 201) throw new Error(`key creation failed: ${JSON.stringify(reply.body)}`);
      return reply.body.key as string;
    },
    async close() {
      try {
        await recorder.check(server.baseUrl);
      } finally {
        await server.close();
        await db.close();
      }
    },
  };
}

/** Creates an agent and certifies it with the admin key; answers its id, or throws when either call fails. */
export async function certifiedAgentId(t: TestServer, name: string): Promise<string> {
  const agent = await t.call("POST", "/agents", { key: ADMIN_KEY, body: { name } });
  if (agent.status !== 201) throw new Error(`agent \`${name}\` not created: ${agent.status} ${JSON.stringify(agent.body)}`);
  const certified = await t.call("POST", `/agents/${agent.body.id}/certification`, { key: ADMIN_KEY, body: CERTIFICATION });
  if (certified.status !== 201) throw new Error(`agent \`${name}\` not certified: ${certified.status} ${JSON.stringify(certified.body)}`);
  return agent.body.id;
}

/** A problem reply: the status, the media type and a stable code. */
export function expectProblem(reply: Reply, status: number, code: string): void {
  const where = `${status} ${code} expected, got ${reply.status} ${JSON.stringify(reply.body)}`;
  if (reply.status !== status || reply.contentType?.startsWith("application/problem+json") !== true || reply.body?.code !== code) {
    throw new Error(where);
  }
  if (reply.body.status !== status || typeof reply.body.title !== "string" || typeof reply.body.type !== "string")
    throw new Error(`not RFC 9457: ${where}`);
}

export const CERTIFICATION = {
  basis: "evaluation report 2026-01",
  provenance_version: "model-2026-01",
  manifest_hash: "sha256:1111",
  content_hash: "sha256:2222",
  market_profile: "EU",
  checks: ["tool manifest reviewed", "red-team run 14"],
};
