// The SDK's own HTTP/1.1 client: one request at a time on a connection, kept alive between
// requests, each answer read whole by a bounded reader (http1-response.ts). It does what the SDK
// asks of Node.js's client and no more: no pipelining, no upgrade, no proxy, no compression. Its
// work per request is one write and the reads of the answer (decision 1953).
import { isIP, connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { ResponseReader, type Response } from "./http1-response.js";

export interface Http1Request {
  readonly method: string;
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
  /** Aborts the request: the connection is dropped and the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The time the request has, the whole answer's reading included: past it, the connection is
   * dropped and the promise rejects with an `AttemptTimedOut`. None when absent.
   */
  readonly timeoutMs?: number | undefined;
  /** The most bytes of a body read; a longer one is answered with `body` undefined. */
  readonly maxBytes: number;
}

/**
 * How long an idle kept-alive connection is kept: under the 5 s after which a Node.js server
 * closes one, so that a request is not sent on a connection the server is closing.
 */
export const IDLE_CONNECTION_MS = 4_000;

/** A request that had no whole answer within its `timeoutMs`. */
export class AttemptTimedOut extends Error {
  constructor(timeoutMs: number) {
    super(`no whole answer within ${timeoutMs} ms`);
    this.name = "AttemptTimedOut";
  }
}

/** Idle connections kept per origin; one more is closed rather than kept. */
export const IDLE_CONNECTIONS_MAX = 64;

/** A method or field name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What a field value sent may not hold: anything but HTAB and visible ASCII with spaces. */
const NOT_SENT_CHAR = /[^\t\x20-\x7e]/;

/** How often the pool closes the connections idle for IDLE_CONNECTION_MS: one timer for the pool, none per request. */
const SWEEP_MS = 1_000;

/**
 * The idle connections by origin, shared by every client as the global `fetch` shares its pool (a
 * client made per call still rides a kept-alive connection), and the sweep that closes those idle
 * too long, running only while any is idle.
 */
const pool: { readonly idle: Map<string, Connection[]>; sweep: ReturnType<typeof setInterval> | undefined } = {
  idle: new Map(),
  sweep: undefined,
};

/** Sends one request and reads its answer; rejects when no whole answer could be had. */
export function send(request: Http1Request): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    if (request.signal?.aborted === true) {
      reject(abortError(request.signal));
      return;
    }
    const text = requestText(request);
    const origin = `${request.url.protocol}//${request.url.host}`;
    const connection = takeIdle(origin) ?? new Connection(origin, open(request.url));
    const reader = new ResponseReader(request.maxBytes, request.method === "HEAD");
    connection.start(text, { reader, signal: request.signal, timeoutMs: request.timeoutMs, resolve, reject });
  });
}

/**
 * The origin's most recently parked connection that may carry a request. One the server closed
 * leaves the pool when its close is read, and one closing now is passed over. One idle for
 * IDLE_CONNECTION_MS or more is closed, whether or not the sweep has come yet: a request is never
 * sent on a connection the server may be closing.
 */
function takeIdle(origin: string): Connection | undefined {
  const waiting = pool.idle.get(origin);
  if (waiting === undefined) return undefined;
  const now = Date.now();
  let connection = waiting.pop();
  while (connection !== undefined && !connection.usableAt(now)) {
    connection.close();
    connection = waiting.pop();
  }
  if (waiting.length === 0) pool.idle.delete(origin);
  return connection;
}

/** Closes every connection idle for IDLE_CONNECTION_MS or more; stops once none is left idle. */
function sweep(): void {
  const now = Date.now();
  let kept = 0;
  const expired: Connection[] = [];
  for (const waiting of pool.idle.values())
    for (const connection of waiting) {
      if (connection.usableAt(now)) kept += 1;
      else expired.push(connection);
    }
  for (const connection of expired) connection.close();
  if (kept === 0 && pool.sweep !== undefined) {
    clearInterval(pool.sweep);
    pool.sweep = undefined;
  }
}

function open(url: URL): Socket {
  const secure = url.protocol === "https:";
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port === "" ? (secure ? 443 : 80) : Number(url.port);
  if (!secure) return netConnect({ host, port });
  // TLS is verified as Node.js verifies it: the system's and Node's roots, the name checked.
  return tlsConnect({ host, port, ...(isIP(host) === 0 ? { servername: host } : {}) });
}

/** The request's head and body as one text: one write. A method or field that could split the head is refused. */
function requestText(request: Http1Request): string {
  if (!TOKEN.test(request.method)) throw new TypeError("the request's method is not a token");
  let text = `${request.method} ${request.url.pathname}${request.url.search} HTTP/1.1\r\nhost: ${request.url.host}\r\n`;
  for (const [name, value] of Object.entries(request.headers)) {
    if (!TOKEN.test(name) || NOT_SENT_CHAR.test(value)) throw new TypeError(`the request's field ${JSON.stringify(name)} cannot be sent`);
    const lower = name.toLowerCase();
    if (lower === "host" || lower === "content-length" || lower === "connection" || lower === "transfer-encoding")
      throw new TypeError(`the request's field ${name} is the client's own`);
    text += `${name}: ${value}\r\n`;
  }
  if (request.body !== undefined) text += `content-length: ${Buffer.byteLength(request.body)}\r\n`;
  return `${text}\r\n${request.body ?? ""}`;
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error("the request was aborted");
}

interface Asked {
  readonly reader: ResponseReader;
  readonly signal: AbortSignal | undefined;
  readonly timeoutMs: number | undefined;
  readonly resolve: (response: Response) => void;
  readonly reject: (error: unknown) => void;
}

interface InFlight extends Asked {
  readonly onAbort: (() => void) | undefined;
  readonly timer: ReturnType<typeof setTimeout> | undefined;
}

/** One connection: at most one request in flight; idle in its origin's pool between requests. */
class Connection {
  readonly #origin: string;
  readonly #socket: Socket;
  #current: InFlight | undefined;
  /** When it was last parked (Date.now()). */
  #idleSince = 0;

  constructor(origin: string, socket: Socket) {
    this.#origin = origin;
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.#read(chunk));
    socket.on("error", (error: Error) => this.#fail(error));
    socket.on("close", () => this.#closed());
  }

  /** Whether it may carry a request at `now`: open, and idle for less than IDLE_CONNECTION_MS. */
  usableAt(now: number): boolean {
    return !this.#socket.destroyed && this.#socket.writable && now - this.#idleSince < IDLE_CONNECTION_MS;
  }

  close(): void {
    this.#socket.destroy();
  }

  start(text: string, asked: Asked): void {
    const { signal, timeoutMs } = asked;
    const onAbort = signal === undefined ? undefined : (): void => this.#fail(abortError(signal));
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => this.#fail(new AttemptTimedOut(timeoutMs)), timeoutMs);
    this.#current = { ...asked, onAbort, timer };
    if (onAbort !== undefined) signal!.addEventListener("abort", onAbort, { once: true });
    this.#socket.ref();
    this.#socket.write(text);
  }

  #read(chunk: Buffer): void {
    const current = this.#current;
    // Bytes while no request waits are nothing this client asked for: the connection is dropped.
    if (current === undefined) {
      this.#socket.destroy();
      return;
    }
    let response: Response | undefined;
    try {
      response = current.reader.push(chunk);
    } catch (error) {
      this.#fail(error);
      return;
    }
    if (response === undefined) return;
    this.#end(current);
    if (response.reusable) this.#park();
    else this.#socket.destroy();
    current.resolve(response);
  }

  #closed(): void {
    this.#unpark();
    const current = this.#current;
    if (current === undefined) return;
    this.#end(current);
    try {
      current.resolve(current.reader.end());
    } catch (error) {
      current.reject(error);
    }
  }

  #fail(error: unknown): void {
    const current = this.#current;
    this.#socket.destroy();
    if (current === undefined) return;
    this.#end(current);
    current.reject(error);
  }

  #end(current: InFlight): void {
    if (current.onAbort !== undefined) current.signal!.removeEventListener("abort", current.onAbort);
    clearTimeout(current.timer);
    this.#current = undefined;
  }

  /** Idle: kept for the next request of its origin, without keeping the process alive. */
  #park(): void {
    const waiting = pool.idle.get(this.#origin) ?? [];
    if (waiting.length >= IDLE_CONNECTIONS_MAX) {
      this.#socket.destroy();
      return;
    }
    waiting.push(this);
    pool.idle.set(this.#origin, waiting);
    this.#idleSince = Date.now();
    this.#socket.unref();
    if (pool.sweep === undefined) {
      pool.sweep = setInterval(sweep, SWEEP_MS);
      pool.sweep.unref();
    }
  }

  #unpark(): void {
    const waiting = pool.idle.get(this.#origin);
    const at = waiting?.indexOf(this) ?? -1;
    if (at < 0) return;
    waiting!.splice(at, 1);
    if (waiting!.length === 0) pool.idle.delete(this.#origin);
  }
}
