// One HTTP request and its answer, read whole and bounded: through the SDK's own HTTP/1.1 client by
// default, or through a `fetch` the caller gives. The transport (transport.ts) decides what an
// answer means; an exchange only carries it. Both refuse a redirect (following one could carry the
// key to another origin) and stop reading a body past its limit.
import { AttemptTimedOut, send } from "./http1.js";

export { AttemptTimedOut } from "./http1.js";

export interface ExchangeRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
  /** The caller's: aborts the request, the reading of its answer included. */
  readonly signal: AbortSignal | undefined;
  /** The attempt's time, the reading of the whole answer included; past it the exchange throws `AttemptTimedOut`. */
  readonly timeoutMs: number;
  /** The most bytes of a body read; a longer one is not read to the end. */
  readonly maxBytes: number;
}

export interface Answered {
  readonly status: number;
  readonly statusText: string;
  /** A header's value, by its name in any case; null when absent. */
  header(name: string): string | null;
  /** The body as UTF-8 text; undefined when it is longer than `maxBytes`. */
  readonly text: string | undefined;
}

/** Sends one request and reads its answer; throws when no answer could be had (network, abort, time out, redirect). */
export type Exchange = (url: string, request: ExchangeRequest) => Promise<Answered>;

/** The statuses `fetch` follows as redirects; an exchange refuses them instead. */
const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/**
 * The default exchange: the SDK's own HTTP/1.1 client (http1.ts) on kept-alive connections, over
 * TLS for an `https:` URL, verified as Node.js verifies it. It costs less than Node.js's client
 * (decision 1953), which cost a third of the global `fetch` (decision 1903). An idle connection
 * does not keep the process alive.
 */
export function http1Exchange(): Exchange {
  return async (url, request) => {
    const target = new URL(url);
    if (target.protocol !== "http:" && target.protocol !== "https:") throw new TypeError(`${target.protocol} is not HTTP`);
    const response = await send({
      method: request.method,
      url: target,
      headers: request.headers,
      body: request.body,
      signal: request.signal,
      timeoutMs: request.timeoutMs,
      maxBytes: request.maxBytes,
    });
    if (REDIRECTS.has(response.status)) throw new Error(`the server answered a redirect (${response.status}), which is not followed`);
    const { fields, body } = response;
    return {
      status: response.status,
      statusText: response.statusText,
      header: (name) => fields.get(name.toLowerCase())?.join(", ") ?? null,
      text: body === undefined ? undefined : new TextDecoder().decode(body),
    };
  };
}

/** An exchange through the `fetch` a caller gives (a proxy's, a test's): the same bounds, the same refusal of redirects. */
export function fetchExchange(fetchFunction: typeof globalThis.fetch): Exchange {
  return async (url, request) => {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, request.timeoutMs);
    const forward = (): void => controller.abort(request.signal?.reason);
    request.signal?.addEventListener("abort", forward, { once: true });
    try {
      const init: RequestInit = { method: request.method, headers: request.headers, signal: controller.signal, redirect: "error" };
      if (request.body !== undefined) init.body = request.body;
      const response = await fetchFunction(url, init);
      const text = await readBounded(response, request.maxBytes, controller.signal);
      return { status: response.status, statusText: response.statusText, header: (name) => response.headers.get(name), text };
    } catch (error) {
      throw timedOut ? new AttemptTimedOut(request.timeoutMs) : error;
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", forward);
    }
  };
}

/**
 * The body as text, or undefined once it grows past `maxBytes`. A read stops when `signal` aborts,
 * whether or not the `fetch` given ties its body to the signal.
 */
async function readBounded(response: Response, maxBytes: number, signal: AbortSignal): Promise<string | undefined> {
  if (Number(response.headers.get("content-length") ?? "0") > maxBytes) {
    await response.body?.cancel();
    return undefined;
  }
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const stop = (): void => void reader.cancel(signal.reason).catch(() => undefined);
  signal.addEventListener("abort", stop, { once: true });
  try {
    return await readAll(reader, maxBytes, signal);
  } finally {
    signal.removeEventListener("abort", stop);
  }
}

async function readAll(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  maxBytes: number,
  signal: AbortSignal,
): Promise<string | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    signal.throwIfAborted();
    const { done, value } = await reader.read();
    signal.throwIfAborted();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const whole = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    whole.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(whole);
}
