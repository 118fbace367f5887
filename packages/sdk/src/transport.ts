// One HTTP exchange with the server: authentication, per-attempt timeouts, retries under one idempotency key.
import { problemFrom, type ProblemDetails, type UnavailableCause } from "./errors.js";
import { AttemptTimedOut, type Answered, type Exchange } from "./exchange.js";

/** Which header carries the key. `auto` follows the specification: `x-api-key` on breaker paths, Bearer elsewhere. */
export type KeyHeader = "auto" | "authorization" | "x-api-key";

/** What the client reports about each attempt; it never contains the key or any header. */
export interface RequestEvent {
  readonly method: string;
  readonly path: string;
  readonly attempt: number;
  /** `response` when an HTTP status came back, otherwise why the attempt failed. */
  readonly result: "response" | "network" | "timeout";
  readonly status?: number;
  readonly duration_ms: number;
  readonly idempotency_key?: string;
}

export interface TransportSettings {
  readonly baseUrl: string;
  readonly keyHeader: KeyHeader;
  readonly timeoutMs: number;
  readonly attempts: number;
  readonly retryDelayMs: number;
  /** How a request is sent: Node.js's HTTP client, or a caller's `fetch` (exchange.ts). */
  readonly exchange: Exchange;
  readonly onRequest: ((event: RequestEvent) => void) | undefined;
}

/** Options every call accepts. */
export interface CallOptions {
  /** Reuse a key of your own (for example across a process restart); by default one is made per call. */
  readonly idempotencyKey?: string;
  /** Per-attempt timeout for this call, overriding the client's. */
  readonly timeoutMs?: number;
  /** Abandons the call; an abandoned authorize is a refusal like any other unavailability. */
  readonly signal?: AbortSignal;
}

/** The result of a request: never an exception for anything the network or the server does. */
export type HttpResult =
  | {
      readonly kind: "ok";
      readonly status: number;
      readonly body: unknown;
      /** True when the server answered with the stored answer of an earlier request under the same Idempotency-Key. */
      readonly replayed?: boolean;
    }
  | { readonly kind: "problem"; readonly problem: ProblemDetails }
  | {
      readonly kind: "unavailable";
      readonly cause: UnavailableCause;
      readonly message: string;
      readonly attempts: number;
      readonly status?: number;
    };

type AttemptResult =
  | HttpResult
  | {
      readonly kind: "retry";
      readonly cause: Exclude<UnavailableCause, "aborted">;
      readonly message: string;
      readonly status?: number;
      /** The server's `retry-after`, in milliseconds: the next attempt waits at least this long (at most `retryDelayMaxMs`). */
      readonly retryAfterMs?: number;
    };

/** The problem code of the server's answer that nothing was written and the same call may be sent again. */
const CONTENTION = "contention";

/** Paths of the circuit-breaker endpoints, which the specification calls with `x-api-key`. */
const breakerPath = /(^|\/)breakers(\/|\?|$)/;

/** Upper bound on the wait between two attempts, whatever the configured delay. */
const retryDelayMaxMs = 5_000;

/** Largest response body read; a longer one is not read to the end and counts as unreadable. */
export const responseBytesMax = 8 * 1024 * 1024;

/** Performs requests for one client; it holds the key privately so that it can never be printed. */
export class Transport {
  readonly #apiKey: string;
  readonly #settings: TransportSettings;

  constructor(apiKey: string, settings: TransportSettings) {
    this.#apiKey = apiKey;
    this.#settings = settings;
  }

  /** Sends one logical call; every retry carries the same `Idempotency-Key`. */
  async request(method: "GET" | "POST", path: string, body: unknown, options: CallOptions = {}): Promise<HttpResult> {
    const settings = this.#settings;
    const idempotencyKey = method === "POST" ? (options.idempotencyKey ?? globalThis.crypto.randomUUID()) : undefined;
    const headers = this.#headers(path, method, idempotencyKey);
    const payload = method === "POST" ? JSON.stringify(body ?? {}) : undefined;
    const timeoutMs = options.timeoutMs ?? settings.timeoutMs;
    let last: AttemptResult | undefined;
    for (let attempt = 1; attempt <= settings.attempts; attempt += 1) {
      if (options.signal?.aborted) return aborted(attempt - 1);
      if (attempt > 1) {
        const asked = last?.kind === "retry" ? (last.retryAfterMs ?? 0) : 0;
        const delay = Math.min(Math.max(settings.retryDelayMs * 2 ** (attempt - 2), asked), retryDelayMaxMs);
        if (!(await pause(delay, options.signal))) return aborted(attempt - 1);
      }
      last = await this.#attempt(method, path, headers, payload, timeoutMs, attempt, idempotencyKey, options.signal);
      if (last.kind !== "retry") return last.kind === "unavailable" ? { ...last, attempts: attempt } : last;
      if (options.signal?.aborted) return aborted(attempt);
    }
    const final = last as Extract<AttemptResult, { kind: "retry" }>;
    return {
      kind: "unavailable",
      cause: final.cause,
      message: `${final.message} (after ${settings.attempts} attempt${settings.attempts === 1 ? "" : "s"})`,
      attempts: settings.attempts,
      ...(final.status === undefined ? {} : { status: final.status }),
    };
  }

  #headers(path: string, method: string, idempotencyKey: string | undefined): Record<string, string> {
    const headers: Record<string, string> = { accept: "application/json, application/problem+json" };
    const header =
      this.#settings.keyHeader === "auto" ? (breakerPath.test(path) ? "x-api-key" : "authorization") : this.#settings.keyHeader;
    if (header === "x-api-key") headers["x-api-key"] = this.#apiKey;
    else headers["authorization"] = `Bearer ${this.#apiKey}`;
    if (method === "POST") headers["content-type"] = "application/json";
    if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey;
    return headers;
  }

  /** Tells the `onRequest` observer how one attempt ended; a failing observer changes nothing. */
  #reporter(
    method: string,
    path: string,
    attempt: number,
    idempotencyKey: string | undefined,
  ): (result: RequestEvent["result"], status?: number) => void {
    const onRequest = this.#settings.onRequest;
    if (onRequest === undefined) return unobserved;
    const started = Date.now();
    return (result, status) => {
      // A failing observer must not turn an answer into an exception, nor a refusal into a throw.
      try {
        onRequest({
          method,
          path,
          attempt,
          result,
          duration_ms: Date.now() - started,
          ...(status === undefined ? {} : { status }),
          ...(idempotencyKey === undefined ? {} : { idempotency_key: idempotencyKey }),
        });
      } catch {
        // The event is informational; the request's result stands.
      }
    };
  }

  /** Classifies an answer, read whole within the attempt's timeout: a server that stalls mid-body is unavailable. */
  #answer(
    answered: Answered,
    method: string,
    path: string,
    attempt: number,
    report: (result: RequestEvent["result"], status?: number) => void,
  ): AttemptResult {
    const { status, text } = answered;
    report("response", status);
    if (text === undefined) {
      return {
        kind: "unavailable",
        cause: "unreadable_response",
        message: `${method} ${path} answered more than ${responseBytesMax} bytes`,
        attempts: attempt,
        status,
      };
    }
    const classified = classify(
      status,
      answered.statusText,
      text,
      method,
      path,
      answered.header("retry-after"),
      answered.header("content-type"),
    );
    // The server marks a stored answer it replays: the caller may have acted on it already.
    return classified.kind === "ok" && answered.header("idempotent-replayed") === "true" ? { ...classified, replayed: true } : classified;
  }

  async #attempt(
    method: string,
    path: string,
    headers: Record<string, string>,
    payload: string | undefined,
    timeoutMs: number,
    attempt: number,
    idempotencyKey: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<AttemptResult> {
    const report = this.#reporter(method, path, attempt, idempotencyKey);
    try {
      // Redirects are refused (exchange.ts): following one could carry the key to another origin.
      // The exchange keeps the attempt's time itself: one timer, no signal of its own per attempt.
      const answered = await this.#settings.exchange(`${this.#settings.baseUrl}${path}`, {
        method,
        headers,
        body: payload,
        signal,
        timeoutMs,
        maxBytes: responseBytesMax,
      });
      return this.#answer(answered, method, path, attempt, report);
    } catch (error) {
      const why = error instanceof AttemptTimedOut ? "timeout" : signal?.aborted === true ? "aborted" : "network";
      return failedAttempt(error, method, path, attempt, timeoutMs, why, report);
    }
  }
}

/** The report of an attempt when nobody observes them. */
const unobserved = (): void => undefined;

/** An attempt that got no answer: abandoned by the caller (final), or timed out or unreachable (retried). */
function failedAttempt(
  error: unknown,
  method: string,
  path: string,
  attempt: number,
  timeoutMs: number,
  why: "aborted" | "timeout" | "network",
  report: (result: RequestEvent["result"]) => void,
): AttemptResult {
  report(why === "timeout" ? "timeout" : "network");
  if (why === "aborted") {
    return { kind: "unavailable", cause: "aborted", message: `${method} ${path} was abandoned by the caller`, attempts: attempt };
  }
  return why === "timeout"
    ? { kind: "retry", cause: "timeout", message: `${method} ${path} got no answer within ${timeoutMs} ms` }
    : { kind: "retry", cause: "network", message: `${method} ${path} could not reach the server: ${describe(error)}` };
}

function classify(
  status: number,
  statusText: string,
  text: string,
  method: string,
  path: string,
  retryAfter: string | null,
  contentType: string | null = null,
): AttemptResult {
  if (status >= 500) {
    // A 503 with Retry-After (the database failing over, say) asks for the wait before the next attempt.
    const seconds = status === 503 && retryAfter !== null ? Number(retryAfter) : Number.NaN;
    return {
      kind: "retry",
      cause: "server_error",
      message: `${method} ${path} answered ${status}`,
      status,
      ...(Number.isFinite(seconds) && seconds >= 0 ? { retryAfterMs: seconds * 1000 } : {}),
    };
  }
  // A document the server sends as plain text (a ledger checkpoint) is answered as that text.
  if (status >= 200 && status < 300 && contentType !== null && /^text\/plain\b/i.test(contentType))
    return { kind: "ok", status, body: text };
  const parsed = parseJson(text);
  if (status >= 400) {
    const problem = problemFrom(status, statusText, parsed.ok ? parsed.value : undefined);
    // The server wrote nothing and says so: the same call, with the same key, is sent again.
    if (status === 409 && problem.code === CONTENTION) {
      const seconds = retryAfter === null ? Number.NaN : Number(retryAfter);
      return {
        kind: "retry",
        cause: "contention",
        status,
        message: `${method} ${path} answered 409 \`contention\`: nothing was written`,
        ...(Number.isFinite(seconds) && seconds >= 0 ? { retryAfterMs: seconds * 1000 } : {}),
      };
    }
    return { kind: "problem", problem };
  }
  if (status >= 200 && status < 300 && parsed.ok) return { kind: "ok", status, body: parsed.value };
  return {
    kind: "unavailable",
    cause: "unreadable_response",
    message: `${method} ${path} answered ${status} with a body that is not JSON`,
    attempts: 1,
    status,
  };
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.length === 0) return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function aborted(attempts: number): HttpResult {
  return { kind: "unavailable", cause: "aborted", message: "the call was abandoned by the caller", attempts };
}

/** Waits, or stops early when the caller abandons the call; answers whether the wait completed. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve(true);
    }, ms);
    const stop = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/** Describes a network failure without echoing request details; undici hides the real cause in `cause`. */
function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error && "code" in cause && typeof cause.code === "string") return cause.code;
    return error.message;
  }
  return "unknown error";
}
