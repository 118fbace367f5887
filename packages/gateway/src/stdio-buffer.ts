// A stdio read buffer that drops one oversized message instead of the whole connection (upstreams and the host).
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { GATEWAY_LIMITS } from "./limits.js";

/** JSON-RPC's "internal error": what the call whose result was too large receives instead. */
const INTERNAL_ERROR = -32603;
/** Bytes of an oversized line kept to find its id (a response ends with `"id":…}` as the MCP SDK writes it). */
const TAIL_BYTES = 256;

/**
 * The MCP SDK's read buffer closes the connection, and so the upstream, when one line passes its
 * limit: every other call in flight fails with it. This one skips the oversized line up to its
 * newline and answers that one request with an error, when its id can be read from the line's end;
 * a line whose id cannot be read still closes the connection, as before (the upstream restarts).
 */
export class BoundedReadBuffer {
  #chunks: Buffer[] = [];
  #size = 0;
  #skipping = false;
  #tail: Buffer = Buffer.alloc(0);
  #head: Buffer = Buffer.alloc(0);
  readonly #lines: (string | JSONRPCMessage)[] = [];

  /**
   * `oversized` decides what a skipped line becomes, given its id (undefined when none can be
   * read): a message to read in its place, nothing, or a thrown error, which closes the connection.
   * By default (an upstream's answers) a line with an id becomes that request's error, and one
   * without closes the connection.
   */
  constructor(
    private readonly maxLineBytes: number = GATEWAY_LIMITS.upstreamMessageBytesMax,
    private readonly oversized: (id: string | number | undefined, maxLineBytes: number) => JSONRPCMessage | undefined = failTheCall,
  ) {}

  append(chunk: Buffer): void {
    let rest = chunk;
    for (;;) {
      const newline = rest.indexOf(10);
      const piece = newline < 0 ? rest : rest.subarray(0, newline);
      if (this.#skipping) this.#tail = lastBytes(Buffer.concat([this.#tail, piece]));
      else if (this.#size + piece.length > this.maxLineBytes) {
        this.#head = Buffer.concat([...this.#chunks.slice(0, 2), piece]).subarray(0, TAIL_BYTES);
        this.#tail = lastBytes(Buffer.concat([...this.#chunks.slice(-2), piece]));
        this.#chunks = [];
        this.#size = 0;
        this.#skipping = true;
      } else {
        this.#chunks.push(piece);
        this.#size += piece.length;
      }
      if (newline < 0) return;
      this.#endLine();
      rest = rest.subarray(newline + 1);
    }
  }

  #endLine(): void {
    if (this.#skipping) {
      this.#skipping = false;
      const id = idAtStart(this.#head.toString("utf8")) ?? idAtEnd(this.#tail.toString("utf8"));
      this.#tail = Buffer.alloc(0);
      this.#head = Buffer.alloc(0);
      const replacement = this.oversized(id, this.maxLineBytes);
      if (replacement !== undefined) this.#lines.push(replacement);
      return;
    }
    const line = Buffer.concat(this.#chunks).toString("utf8").replace(/\r$/, "");
    this.#chunks = [];
    this.#size = 0;
    this.#lines.push(line);
  }

  readMessage(): JSONRPCMessage | null {
    const next = this.#lines.shift();
    if (next === undefined) return null;
    return typeof next === "string" ? parseMessage(next) : next;
  }

  clear(): void {
    this.#chunks = [];
    this.#size = 0;
    this.#skipping = false;
    this.#lines.length = 0;
  }
}

/**
 * One line as a JSON-RPC message: parsed once, its envelope checked, nothing copied. The MCP SDK's
 * own reader also validates the whole message against its union schema, which copies it; the
 * protocol layer then validates it again by kind (request, notification, response) and the
 * handler validates its params or result, so that first copy is work done three times
 * (docs/decisions/1902-gateway-own-work-halved.md). A line that is not a JSON-RPC 2.0 object
 * throws, as the SDK's reader does: the transport reports it and skips the line.
 */
export function parseMessage(line: string): JSONRPCMessage {
  const message: unknown = JSON.parse(line);
  if (typeof message !== "object" || message === null || Array.isArray(message) || (message as { jsonrpc?: unknown }).jsonrpc !== "2.0")
    throw new Error("a line is not a JSON-RPC 2.0 message");
  return message as JSONRPCMessage;
}

/** The default for an upstream's answers: an oversized result fails its own call; one without an id closes the connection. */
function failTheCall(id: string | number | undefined, maxLineBytes: number): JSONRPCMessage {
  if (id === undefined) throw new Error(`an upstream message is over ${maxLineBytes} bytes and names no request`);
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: INTERNAL_ERROR,
      message: `the upstream's result is over the transport limit of ${maxLineBytes} bytes; this call failed, the upstream still runs`,
    },
  };
}

function lastBytes(buffer: Buffer): Buffer {
  return buffer.length <= TAIL_BYTES ? buffer : buffer.subarray(buffer.length - TAIL_BYTES);
}

/** The JSON-RPC id of a line that begins with it (`{"jsonrpc":"2.0","id":7,…`), if it does. */
function idAtStart(head: string): string | number | undefined {
  const match = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,128}")\s*,/.exec(head);
  return match === null ? undefined : parseId(match[1]!);
}

function parseId(raw: string): string | number {
  return raw.startsWith('"') ? (JSON.parse(raw) as string) : Number(raw);
}

/** The JSON-RPC id of a response line from its last key (`…,"id":7}`), if it is there. */
function idAtEnd(tail: string): string | number | undefined {
  const match = /"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,128}")\s*\}\s*$/.exec(tail);
  return match === null ? undefined : parseId(match[1]!);
}

/**
 * Puts a BoundedReadBuffer in place of the transport's own. The field is internal to the MCP SDK
 * (pinned in package.json); if it is not there, the transport keeps its own buffer and an
 * oversized result closes the connection, which the restart then handles.
 */
export function boundReadBuffer(
  transport: StdioClientTransport | StdioServerTransport,
  oversized?: (id: string | number | undefined, maxLineBytes: number) => JSONRPCMessage | undefined,
): boolean {
  const internals = transport as unknown as { _readBuffer?: unknown };
  if (internals._readBuffer === undefined) return false;
  internals._readBuffer = new BoundedReadBuffer(GATEWAY_LIMITS.upstreamMessageBytesMax, oversized);
  return true;
}
