// One HTTP request and its answer, read whole and bounded: through Node.js's own HTTP client by
// default, or through a `fetch` the caller gives. The transport (transport.ts) decides what an
// answer means; an exchange only carries it. Both refuse a redirect (following one could carry the
// key to another origin) and stop reading a body past its limit.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

export interface ExchangeRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
  /** Aborts the request, the reading of its answer included. */
  readonly signal: AbortSignal;
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

/** Sends one request and reads its answer; throws when no answer could be had (network, abort, redirect). */
export type Exchange = (url: string, request: ExchangeRequest) => Promise<Answered>;

/** The statuses `fetch` follows as redirects; an exchange refuses them instead. */
const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/**
 * How long an idle kept-alive connection is kept: under the 5 s after which a Node.js server
 * closes one, so that a request is not sent on a connection the server is closing.
 */
const IDLE_CONNECTION_MS = 4_000;

/**
 * The connection pools every client shares, as the global `fetch` shares its own: a client made
 * per call still rides a kept-alive connection, and the requests of many clients arrive together.
 */
const agents = {
  http: new HttpAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
  https: new HttpsAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
} as const;

/**
 * The default exchange: node:http or node:https on kept-alive connections. It costs a third of the
 * CPU of the global `fetch` per call (decision 1903); TLS is verified as Node.js verifies it. An
 * idle connection does not keep the process alive.
 */
export function nodeExchange(): Exchange {
  return (url, request) =>
    new Promise<Answered>((resolve, reject) => {
      const target = new URL(url);
      const secure = target.protocol === "https:";
      const headers =
        request.body === undefined ? request.headers : { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) };
      const outgoing = (secure ? httpsRequest : httpRequest)(
        target,
        { method: request.method, headers, signal: request.signal, agent: secure ? agents.https : agents.http },
        (response) => {
          const status = response.statusCode ?? 0;
          if (REDIRECTS.has(status)) {
            response.destroy();
            reject(new Error(`the server answered a redirect (${status}), which is not followed`));
            return;
          }
          readBody(response, request.maxBytes).then(
            (text) => resolve({ status, statusText: response.statusMessage ?? "", header: (name) => headerOf(response, name), text }),
            reject,
          );
        },
      );
      outgoing.on("error", reject);
      outgoing.end(request.body);
    });
}

function headerOf(response: IncomingMessage, name: string): string | null {
  const value = response.headers[name.toLowerCase()];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(", ") : value;
}

/**
 * The body as text, or undefined once it grows past `maxBytes` (the connection is then dropped).
 * Settles exactly once: a body that closes before its end, for whatever reason, is an error.
 */
function readBody(response: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    if (Number(response.headers["content-length"] ?? "0") > maxBytes) {
      response.destroy();
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (finish: () => void): void => {
      if (settled) return;
      settled = true;
      finish();
    };
    response.on("data", (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size <= maxBytes) chunks.push(chunk);
      else {
        settle(() => resolve(undefined));
        response.destroy();
      }
    });
    response.on("end", () => settle(() => resolve(new TextDecoder().decode(Buffer.concat(chunks, size)))));
    response.on("error", (error) => settle(() => reject(error)));
    response.on("close", () => settle(() => reject(new Error("the connection closed before the answer ended"))));
  });
}

/** An exchange through the `fetch` a caller gives (a proxy's, a test's): the same bounds, the same refusal of redirects. */
export function fetchExchange(fetchFunction: typeof globalThis.fetch): Exchange {
  return async (url, request) => {
    const init: RequestInit = { method: request.method, headers: request.headers, signal: request.signal, redirect: "error" };
    if (request.body !== undefined) init.body = request.body;
    const response = await fetchFunction(url, init);
    const text = await readBounded(response, request.maxBytes, request.signal);
    return { status: response.status, statusText: response.statusText, header: (name) => response.headers.get(name), text };
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
