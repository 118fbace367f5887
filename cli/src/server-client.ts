// Talking to a running server: where it is, which key to use, and problems in one line.
import { option, type ParsedArgs, UsageError } from "./args.js";

/** How long one request may take before the command gives up on it. */
export const REQUEST_TIMEOUT_MS = 30_000;

export interface ServerTarget {
  /** The base URL ending in `/v1`. */
  readonly base: string;
  readonly key: string | undefined;
}

/** `http://host:port`, `…/v1` and `…/v1/` all name the same v1 base. */
export function v1Base(server: string): string {
  const base = server.replace(/\/+$/, "");
  return /\/v1$/.test(base) ? base : `${base}/v1`;
}

/** The server and key from `--server`/`--key` or `AUTHORITY_SERVER`/`AUTHORITY_KEY`. */
export function serverTarget(args: ParsedArgs, env: Readonly<Record<string, string | undefined>>, keyRequired: boolean): ServerTarget {
  const server = option(args, "server") ?? env["AUTHORITY_SERVER"];
  const key = option(args, "key") ?? env["AUTHORITY_KEY"];
  if (server === undefined || server === "") throw new UsageError("give the server with `--server URL` or `AUTHORITY_SERVER`");
  if (!/^https?:\/\//.test(server)) throw new UsageError(`\`--server\` must be an http or https URL, not \`${server}\``);
  if (keyRequired && (key === undefined || key === "")) throw new UsageError("give an API key with `AUTHORITY_KEY` or `--key KEY`");
  return { base: v1Base(server), key: key === "" ? undefined : key };
}

export type Answer =
  | { readonly ok: true; readonly status: number; readonly body: unknown; readonly replayed?: boolean }
  | { readonly ok: false; readonly message: string };

/** One JSON request; a refusal or a network failure comes back as a one-line message, never thrown. */
export async function request(
  target: ServerTarget,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  headers: Readonly<Record<string, string>> = {},
): Promise<Answer> {
  const url = `${target.base}${path}`;
  try {
    const response = await fetch(url, {
      method,
      headers: {
        ...(target.key !== undefined ? { authorization: `Bearer ${target.key}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    if (!response.ok) return { ok: false, message: problemLine(response.status, text) };
    // A plain-text document (a ledger checkpoint) is answered as its text.
    if (/^text\/plain\b/i.test(response.headers.get("content-type") ?? "")) return { ok: true, status: response.status, body: text };
    let parsed: unknown = null;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : null;
    } catch {
      return { ok: false, message: `HTTP ${response.status}: the answer is not JSON` };
    }
    // A replayed answer (same Idempotency-Key and body) repeats what the first request did.
    return { ok: true, status: response.status, body: parsed, replayed: response.headers.get("idempotent-replayed") === "true" };
  } catch (error) {
    const timedOut = error instanceof Error && error.name === "TimeoutError";
    return { ok: false, message: `${timedOut ? "no answer in time" : "the server could not be reached"} (${url})` };
  }
}

/** A problem-details body in one line: its code, title and detail where present. */
export function problemLine(status: number, text: string): string {
  try {
    const problem = JSON.parse(text) as Record<string, unknown>;
    const parts = [problem["code"], problem["title"], problem["detail"]].filter((p): p is string => typeof p === "string" && p.length > 0);
    if (parts.length > 0) return `HTTP ${status}: ${parts.join(": ")}`;
  } catch {
    // Not JSON: the status alone, never a body that may hold internals.
  }
  return `HTTP ${status}`;
}
