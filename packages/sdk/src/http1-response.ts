// Reads one HTTP/1.1 response from the bytes of a connection, as they arrive, with every part
// bounded: the head, the number of its fields, a chunk's size line, the trailers, the body. Pure:
// it is fed bytes and answers what it has read; the connection (http1.ts) does the I/O. Anything
// that RFC 9112 does not allow, or that could be read two ways (a length and a chunked coding
// together, two lengths, a folded line), is an error, never a guess. So is what RFC 9112 allows but
// Node.js's client (the SDK's before this one) refuses or reads otherwise: a response is never read
// here one way and there another (test/sdk/http1.test.ts holds the two to the same readings).

/** The bounds of one response. The body's own bound is the caller's (`maxBytes`). */
export const RESPONSE_LIMITS = {
  /** The status line and the fields, as Node.js's own client bounds them (`maxHeaderSize`). */
  headBytesMax: 16 * 1024,
  /** Fields in one head. */
  fieldsMax: 100,
  /** Informational (1xx) heads skipped before the final one. */
  informationalMax: 8,
  /** One chunk's size line, extensions included, its CRLF not. */
  chunkLineBytesMax: 1024,
  /** The trailer section after the last chunk, every CRLF included (the last empty line's too). */
  trailerBytesMax: 16 * 1024,
} as const;

/** A response read whole, or read as far as the body's bound when `body` is undefined. */
export interface Response {
  readonly status: number;
  readonly statusText: string;
  /** Field values by lower-case name, in the order they came. */
  readonly fields: ReadonlyMap<string, readonly string[]>;
  /** The body; undefined when it is longer than the caller's bound (it was not read to its end). */
  readonly body: Buffer | undefined;
  /** Whether the connection may carry another request: framed body read to its end, nothing after it, kept alive. */
  readonly reusable: boolean;
}

/** A response that cannot be read as HTTP/1.1 allows. */
export class ResponseError extends Error {}

const CR = 13;
const LF = 10;
/** A field name (RFC 9110 token): linear, no backtracking. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A character a field value may not hold (RFC 9110 field-value: HTAB, SP, VCHAR, obs-text). */
const NOT_FIELD_CHAR = /[^\t\x20-\x7e\x80-\xff]/;
const DIGITS = /^[0-9]{1,15}$/;
/**
 * A chunk's extensions (RFC 9112 chunk-ext without its optional spaces): `;name` or `;name=token` or
 * `;name="quoted"`. Linear: a token, a quote and a semicolon never begin the same way.
 */
const CHUNK_EXTENSIONS =
  /^(?:;[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:=(?:[!#$%&'*+\-.^_`|~0-9A-Za-z]+|"(?:[\t \x21\x23-\x5b\x5d-\x7e]|\\[\t \x21-\x7e])*"))?)*$/;
const HEX = /^[0-9A-Fa-f]{1,13}$/;

type Framing =
  | { readonly kind: "none" }
  | { readonly kind: "length"; readonly length: number }
  | { readonly kind: "chunked" }
  | { readonly kind: "close" };

interface Head {
  readonly version: "1.0" | "1.1";
  readonly status: number;
  readonly statusText: string;
  readonly fields: Map<string, string[]>;
}

/**
 * Feeds the bytes of one response, in as many pieces as they come. `push` answers the response once
 * it is complete (and whether bytes came after it), `end` when the connection closed; both throw
 * ResponseError for a response that is not well formed or is over a bound.
 */
export class ResponseReader {
  readonly #maxBytes: number;
  readonly #headRequest: boolean;
  /**
   * The bytes of a head or a chunk's line whose end has not come yet, kept in a buffer that grows by
   * doubling: a piece is copied once and searched once (its first bytes with the last of those
   * before it), so a head fed a byte at a time costs as much as one fed whole.
   */
  readonly #pending = new GrowingBytes();
  #informational = 0;
  #head: Head | undefined;
  #framing: Framing | undefined;
  /**
   * The body read so far, in one buffer: a body of a million one-byte chunks is one object, not a
   * million, so what a hostile server can make the client hold is bounded by the body's bytes.
   */
  readonly #body = new GrowingBytes();
  /** Bytes of the body (length framing) or of the current chunk still to come. */
  #remaining = 0;
  #chunkState: "size" | "data" | "crlf" | "trailers" = "size";
  #trailerBytes = 0;

  /** `headRequest`: the request was HEAD, so the response has no body whatever its fields say. */
  constructor(maxBytes: number, headRequest = false) {
    this.#maxBytes = maxBytes;
    this.#headRequest = headRequest;
  }

  /** Reads a piece; answers the response once it is whole (or over the body's bound), else undefined. */
  push(chunk: Buffer): Response | undefined {
    let data = chunk;
    if (this.#pending.length > 0) {
      const kept = this.#pending.view();
      // A chunk's closing CRLF: at most one byte of it is kept.
      const end = this.#head === undefined ? "\r\n\r\n" : this.#chunkState === "crlf" ? "" : "\r\n";
      if (end !== "" && !endsWithin(kept, chunk, end)) {
        this.#unfinished(this.#pending.length + chunk.length);
        this.#keep(chunk);
        return undefined;
      }
      data = Buffer.concat([kept, chunk]);
      this.#pending.clear();
    }
    while (this.#head === undefined) {
      const end = data.indexOf("\r\n\r\n");
      if (end < 0) {
        this.#unfinished(data.length);
        this.#keep(data);
        return undefined;
      }
      if (end + 4 > RESPONSE_LIMITS.headBytesMax) throw new ResponseError("the response's head is over its bound");
      const head = parseHead(data.toString("latin1", 0, end));
      data = data.subarray(end + 4);
      if (head.status >= 100 && head.status < 200) {
        if (head.status === 101) throw new ResponseError("the server switched protocols, which was not asked");
        this.#informational += 1;
        if (this.#informational > RESPONSE_LIMITS.informationalMax) throw new ResponseError("too many informational responses");
        // It has no body, but its framing fields are held to the same rules (two lengths, a length and
        // a coding): Node.js's client refuses such a head, and a malformed one is not passed over.
        framingOf(head, false);
        continue;
      }
      this.#head = head;
      this.#framing = framingOf(head, this.#headRequest);
      if (this.#framing.kind === "length") {
        if (this.#framing.length > this.#maxBytes) return this.#answer(undefined, false);
        this.#remaining = this.#framing.length;
      }
    }
    return this.#readBody(data);
  }

  /** The connection closed: the response if a body read to the close completes it; otherwise an error. */
  end(): Response {
    if (this.#head !== undefined && this.#framing?.kind === "close") return this.#answer(this.#whole(), false);
    throw new ResponseError("the connection closed before the answer ended");
  }

  #readBody(data: Buffer): Response | undefined {
    const framing = this.#framing!;
    switch (framing.kind) {
      case "none":
        return this.#answer(Buffer.alloc(0), data.length === 0);
      case "length": {
        const taken = Math.min(this.#remaining, data.length);
        if (taken > 0) this.#take(data.subarray(0, taken));
        this.#remaining -= taken;
        if (this.#remaining > 0) return undefined;
        return this.#answer(this.#whole(), data.length === taken);
      }
      case "close":
        if (data.length > 0 && !this.#take(data)) return this.#answer(undefined, false);
        return undefined;
      case "chunked":
        return this.#readChunks(data);
    }
  }

  /** Keeps a piece of the body; false once the body is over the caller's bound. */
  #take(piece: Buffer): boolean {
    if (this.#body.length + piece.length > this.#maxBytes) return false;
    this.#body.append(piece);
    return true;
  }

  #readChunks(input: Buffer): Response | undefined {
    let data = input;
    while (data.length > 0) {
      if (this.#chunkState === "data") {
        const taken = Math.min(this.#remaining, data.length);
        if (!this.#take(data.subarray(0, taken))) return this.#answer(undefined, false);
        this.#remaining -= taken;
        data = data.subarray(taken);
        if (this.#remaining === 0) this.#chunkState = "crlf";
        continue;
      }
      if (this.#chunkState === "crlf") {
        if (data.length < 2) break;
        if (data[0] !== CR || data[1] !== LF) throw new ResponseError("a chunk does not end where its size says");
        data = data.subarray(2);
        this.#chunkState = "size";
        continue;
      }
      const line = data.indexOf("\r\n");
      if (line < 0) {
        this.#unfinished(data.length);
        break;
      }
      if (this.#chunkState === "size" && line > RESPONSE_LIMITS.chunkLineBytesMax)
        throw new ResponseError("a chunk's size line is over its bound");
      const text = data.toString("latin1", 0, line);
      data = data.subarray(line + 2);
      if (this.#chunkState === "size") {
        const size = chunkSize(text);
        if (size > 0) {
          this.#remaining = size;
          this.#chunkState = "data";
        } else this.#chunkState = "trailers";
        continue;
      }
      // A trailer section's fields are read to their end and set aside: nothing here uses them.
      this.#trailerBytes += line + 2;
      if (this.#trailerBytes > RESPONSE_LIMITS.trailerBytesMax) throw new ResponseError("the trailers are over their bound");
      if (line === 0) return this.#answer(this.#whole(), data.length === 0);
      parseField(text);
    }
    if (data.length > 0) this.#keep(data);
    return undefined;
  }

  /**
   * Refuses an unfinished head or line of `bytes` bytes, its end not seen yet, once whatever comes
   * next would leave it over its bound: the same bytes are refused however they are split.
   */
  #unfinished(bytes: number): void {
    if (this.#head === undefined) {
      // The head ends with its CRLF CRLF, at most headBytesMax bytes with it.
      if (bytes > RESPONSE_LIMITS.headBytesMax) throw new ResponseError("the response's head is over its bound");
    } else if (this.#chunkState === "size") {
      // A size line of at most chunkLineBytesMax bytes before its CRLF; the last byte kept may be its CR.
      if (bytes > RESPONSE_LIMITS.chunkLineBytesMax + 1) throw new ResponseError("a chunk's size line is over its bound");
    } else if (this.#chunkState === "trailers") {
      // The trailer section with every CRLF, its last empty line's included, at most trailerBytesMax bytes.
      if (this.#trailerBytes + bytes + 1 > RESPONSE_LIMITS.trailerBytesMax) throw new ResponseError("the trailers are over their bound");
    }
  }

  /** Keeps bytes whose end has not come (within their bound, #unfinished): copied once. */
  #keep(piece: Buffer): void {
    this.#pending.append(piece);
  }

  #whole(): Buffer {
    return this.#body.view();
  }

  #answer(body: Buffer | undefined, nothingAfter: boolean): Response {
    const head = this.#head!;
    const framing = this.#framing!;
    return {
      status: head.status,
      statusText: head.statusText,
      fields: head.fields,
      body,
      reusable: body !== undefined && nothingAfter && framing.kind !== "close" && keptAlive(head),
    };
  }
}

/** Bytes appended piece by piece into one buffer grown by doubling: each piece is copied once. */
class GrowingBytes {
  #buffer = Buffer.alloc(0);
  #length = 0;

  get length(): number {
    return this.#length;
  }

  append(piece: Buffer): void {
    const needed = this.#length + piece.length;
    if (needed > this.#buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, 2 * this.#buffer.length, 256));
      this.#buffer.copy(grown, 0, 0, this.#length);
      this.#buffer = grown;
    }
    piece.copy(this.#buffer, this.#length);
    this.#length = needed;
  }

  /** The bytes appended since the last clear, as a view of the buffer (not a copy). */
  view(): Buffer {
    return this.#buffer.subarray(0, this.#length);
  }

  clear(): void {
    this.#length = 0;
  }
}

/**
 * Whether `end` occurs in `kept` followed by `chunk`, given that it does not occur in `kept` alone:
 * only the junction and `chunk` are searched, never `kept` again.
 */
function endsWithin(kept: Buffer, chunk: Buffer, end: string): boolean {
  const overlap = Math.min(kept.length, end.length - 1);
  const junction = Buffer.concat([kept.subarray(kept.length - overlap), chunk.subarray(0, end.length - 1)]);
  return junction.includes(end) || chunk.includes(end);
}

function parseHead(text: string): Head {
  const lines = text.split("\r\n");
  const statusLine = lines[0]!;
  // "HTTP/1.1 200 OK": the version, one space, three digits, then nothing or one space and a reason.
  const version = statusLine.startsWith("HTTP/1.1 ") ? "1.1" : statusLine.startsWith("HTTP/1.0 ") ? "1.0" : undefined;
  const code = statusLine.slice(9, 12);
  if (version === undefined || !/^[1-9][0-9]{2}$/.test(code) || (statusLine.length > 12 && statusLine[12] !== " "))
    throw new ResponseError("the response does not begin with an HTTP/1.1 status line");
  const statusText = statusLine.slice(13);
  if (NOT_FIELD_CHAR.test(statusText)) throw new ResponseError("the status line holds a control character");
  if (lines.length - 1 > RESPONSE_LIMITS.fieldsMax) throw new ResponseError("the response has too many fields");
  const fields = new Map<string, string[]>();
  for (let i = 1; i < lines.length; i += 1) {
    const [name, value] = parseField(lines[i]!);
    const values = fields.get(name);
    if (values === undefined) fields.set(name, [value]);
    else values.push(value);
  }
  return { version, status: Number(code), statusText, fields };
}

/** One field line: a token, a colon, the value without the spaces around it. A bare CR or LF, or a fold, is refused. */
function parseField(line: string): [string, string] {
  const colon = line.indexOf(":");
  const name = colon < 0 ? "" : line.slice(0, colon);
  if (!TOKEN.test(name)) throw new ResponseError("a field of the response is not well formed");
  const value = line.slice(colon + 1);
  if (NOT_FIELD_CHAR.test(value)) throw new ResponseError(`the field ${name} holds a control character`);
  const lower = name.toLowerCase();
  // A tab after a framing field's value (RFC 9110 allows it) is where Node.js's client, the SDK's
  // client before this one, reads otherwise: it refuses `content-length: 5<TAB>`, and reads a body
  // under `transfer-encoding: chunked<TAB>` to the close, chunk sizes and all. Refused here, so that
  // no body is read one way here and another way there.
  if ((lower === "content-length" || lower === "transfer-encoding") && trailingTab(value))
    throw new ResponseError(`the field ${name} ends in a tab, which readers read two ways`);
  return [lower, trimSpaces(value)];
}

function trailingTab(value: string): boolean {
  for (let end = value.length - 1; end >= 0; end -= 1) {
    const code = value.charCodeAt(end);
    if (code === 9) return true;
    if (code !== 32) return false;
  }
  return false;
}

function trimSpaces(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9)) start += 1;
  while (end > start && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) end -= 1;
  return value.slice(start, end);
}

/** How the body is delimited (RFC 9112 section 6.3), refusing every ambiguous case. */
function framingOf(head: Head, headRequest: boolean): Framing {
  const encoding = head.fields.get("transfer-encoding");
  const lengths = head.fields.get("content-length");
  if (encoding !== undefined && lengths !== undefined) throw new ResponseError("the response has both a length and a transfer coding");
  // The fields are held to their rules even where they frame nothing (a HEAD's answer, a 204, a 304):
  // Node.js's client refuses a malformed length there too.
  if (encoding !== undefined && (encoding.length !== 1 || encoding[0]!.toLowerCase() !== "chunked"))
    throw new ResponseError("the response has a transfer coding other than chunked");
  // One field with one number: a list or a repeated field, even of equal lengths, is refused as
  // Node.js's client refuses it (the SDK's client before this one), rather than reconciled.
  if (lengths !== undefined && (lengths.length !== 1 || !DIGITS.test(lengths[0]!)))
    throw new ResponseError("the response's length is not one number");
  if (headRequest || head.status === 204 || head.status === 304) return { kind: "none" };
  if (encoding !== undefined) return { kind: "chunked" };
  if (lengths === undefined) return { kind: "close" };
  return { kind: "length", length: Number(lengths[0]) };
}

function chunkSize(line: string): number {
  const semicolon = line.indexOf(";");
  // No space around the size or in the extensions (RFC 9112 allows some, Node.js's client refuses them: so does this one).
  const size = semicolon < 0 ? line : line.slice(0, semicolon);
  if (!HEX.test(size)) throw new ResponseError("a chunk's size is not a hexadecimal number");
  if (semicolon >= 0 && !CHUNK_EXTENSIONS.test(line.slice(semicolon))) throw new ResponseError("a chunk's extension is not well formed");
  return Number.parseInt(size, 16);
}

/** Whether the server keeps the connection open: HTTP/1.1 unless it says `close`, HTTP/1.0 only when it says `keep-alive`. */
function keptAlive(head: Head): boolean {
  let keepAlive = false;
  for (const value of head.fields.get("connection") ?? [])
    for (const token of value.split(",")) {
      const option = trimSpaces(token).toLowerCase();
      if (option === "close") return false;
      if (option === "keep-alive") keepAlive = true;
    }
  return head.version === "1.1" || keepAlive;
}
