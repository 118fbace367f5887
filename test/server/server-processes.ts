// Real server processes (node server/dist/main.js) on one shared database, for the concurrency and
// crash proofs: several processes at once, and `kill -9` in the middle of a load.

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ADMIN_KEY, CERTIFICATION, ENVIRONMENT } from "./http-harness.js";
import type { Agent, Grant, KeyCreated } from "@agent-authority/sdk";

export const SERVER_MAIN = fileURLToPath(new URL("../../server/dist/main.js", import.meta.url));
/** The crash tests' entry: the same process, with fault hooks read from `AUTHORITY_TEST_CRASH_*`. */
const CRASH_ENTRY = fileURLToPath(new URL("./crash-entry.mjs", import.meta.url));
export const SERVER_BUILT = existsSync(SERVER_MAIN);

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly baseUrl: string;
  readonly exited: Promise<void>;
  output(): string;
}

export interface SharedDatabase {
  readonly url: string;
  readonly schema?: string | undefined;
}

/** Starts `node server/dist/main.js` on the database; `env` adds variables (the test-only fault hooks, say), and a variable given as undefined is left out. */
export async function startServerProcess(
  db: SharedDatabase,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<ServerProcess> {
  const merged: Record<string, string | undefined> = {
    PATH: process.env["PATH"] ?? "",
    AUTHORITY_PORT: "0",
    AUTHORITY_DATABASE_URL: db.url,
    ...(db.schema === undefined ? {} : { AUTHORITY_DATABASE_SCHEMA: db.schema }),
    AUTHORITY_ADMIN_KEY: ADMIN_KEY,
    AUTHORITY_ENVIRONMENT: ENVIRONMENT,
    AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "1000000",
    AUTHORITY_LOG_LEVEL: "info",
    ...env,
  };
  const crashing = Object.keys(env).some((name) => name.startsWith("AUTHORITY_TEST_CRASH_") && env[name] !== undefined);
  const child = spawn(process.execPath, [crashing ? CRASH_ENTRY : SERVER_MAIN], {
    env: Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== undefined)) as Record<string, string>,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (chunk) => {
    out += String(chunk);
  });
  child.stderr!.on("data", (chunk) => {
    out += String(chunk);
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const deadline = Date.now() + 20_000;
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /"url":"http:\/\/127\.0\.0\.1:(\d+)\/v1"/.exec(out);
      if (match !== null) {
        clearInterval(timer);
        resolve(Number(match[1]));
      } else if (Date.now() > deadline || child.exitCode !== null) {
        clearInterval(timer);
        // A server that did not start in time is not left running behind the failed test.
        if (child.exitCode === null) child.kill("SIGKILL");
        reject(new Error(`server did not start: ${out}`));
      }
    }, 25);
  });
  return { child, baseUrl: `http://127.0.0.1:${port}/v1`, exited, output: () => out };
}

/** An answer of the API; `T` names the wire type the caller expects of its body (the SDK's types). */
export interface Answer<T = Record<string, unknown>> {
  readonly status: number;
  readonly body: T;
}

export async function post<T = Record<string, unknown>>(baseUrl: string, path: string, key: string, body: unknown): Promise<Answer<T>> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

/** Tries a client makes of one request answered 409 `contention` (decision 0314) before it gives up. */
const CONTENTION_TRIES = 10;

/**
 * A POST sent the way a careful client sends it: under an idempotency key, and sent again with the
 * same key after `Retry-After` when it is answered 409 `contention` (nothing was written), as the
 * SDK does. Answers the last answer and how many contention answers came before it.
 */
export async function postRetryingContention(
  baseUrl: string,
  path: string,
  key: string,
  body: unknown,
  idempotencyKey: string,
): Promise<Answer & { contended: number }> {
  for (let contended = 0; ; contended += 1) {
    const response = await fetch(`${baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": idempotencyKey },
      body: JSON.stringify(body),
    });
    const answer = { status: response.status, body: await response.json() };
    if (answer.status !== 409 || answer.body.code !== "contention" || contended + 1 >= CONTENTION_TRIES) return { ...answer, contended };
    const wait = Number(response.headers.get("retry-after") ?? "1");
    await new Promise((resolve) => setTimeout(resolve, wait * 1000 * (0.5 + Math.random() / 2)));
  }
}

/**
 * Sends the same authorize body six times under each idempotency key at once, request `i` to the
 * server `base(i)`, each answered 200; answers whether every key got one answer, byte for byte,
 * and the keys different answers.
 */
export async function sentSixTimesEach(
  base: (i: number) => string,
  agentKey: string,
  body: string,
  keys: readonly string[],
): Promise<{ oneAnswerPerKey: boolean; distinct: number }> {
  const texts = await Promise.all(
    keys.flatMap((key) =>
      Array.from({ length: 6 }, async (_, i) => {
        const response = await fetch(`${base(i)}/authorize`, {
          method: "POST",
          body,
          headers: { authorization: `Bearer ${agentKey}`, "content-type": "application/json", "idempotency-key": key },
        });
        if (response.status !== 200) throw new Error(`answered ${response.status}: ${await response.text()}`);
        return { key, text: await response.text() };
      }),
    ),
  );
  return {
    oneAnswerPerKey: keys.every((key) => new Set(texts.filter((t) => t.key === key).map((t) => t.text)).size === 1),
    distinct: new Set(texts.map((t) => t.text)).size,
  };
}

export async function get<T = Record<string, unknown>>(baseUrl: string, path: string, key: string): Promise<T> {
  return (await (await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } })).json()) as T;
}

/** A certified agent with its agent key, made through the HTTP API of one process. */
export async function agentWithKey(baseUrl: string, name: string, admin = ADMIN_KEY): Promise<{ id: string; key: string }> {
  const agent = await post<Agent>(baseUrl, "/agents", admin, { name });
  await post(baseUrl, `/agents/${agent.body.id}/certification`, admin, CERTIFICATION);
  const key = await post<KeyCreated>(baseUrl, "/keys", admin, {
    identity: `${name}-key`,
    kind: "service",
    roles: ["agent"],
    agent_id: agent.body.id,
  });
  return { id: agent.body.id, key: key.body.key };
}

export async function grant(baseUrl: string, agentId: string, extra: Record<string, unknown>, admin = ADMIN_KEY): Promise<string> {
  const reply = await post<Grant>(baseUrl, "/grants", admin, {
    agent_id: agentId,
    principal_type: "service",
    principal_id: "proof",
    scope: { tool: ["payments.*"] },
    ...extra,
  });
  if (reply.status !== 201) throw new Error(`grant not issued: ${JSON.stringify(reply.body)}`);
  return reply.body.id;
}

export const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};
