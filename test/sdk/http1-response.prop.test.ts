// The SDK's HTTP/1.1 response reader (packages/sdk/src/http1-response.ts): the same bytes read the
// same however they are split, every bound holds at its edge, and its work is linear in its input.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RESPONSE_LIMITS, ResponseError, ResponseReader, type Response } from "../../packages/sdk/src/http1-response.js";
import { pieces, wellFormed, type Wire } from "./http1-wire.js";

const MAX = 1024 * 1024;

/** Feeds the pieces in order; the response and the index of the piece that completed it (-1: `end()`). */
function feed(parts: readonly Buffer[], maxBytes = MAX, headRequest = false): { response: Response; at: number } {
  const reader = new ResponseReader(maxBytes, headRequest);
  for (const [at, part] of parts.entries()) {
    const response = reader.push(part);
    if (response !== undefined) return { response, at };
  }
  return { response: reader.end(), at: -1 };
}

/** What `feed` answers, or the error it throws. */
function outcome(parts: readonly Buffer[], maxBytes = MAX): Response | ResponseError {
  try {
    return feed(parts, maxBytes).response;
  } catch (error) {
    if (error instanceof ResponseError) return error;
    throw error;
  }
}

const ascii = (text: string): Buffer => Buffer.from(text, "latin1");
const bytewise = (bytes: Buffer): Buffer[] => [...bytes].map((byte) => Buffer.from([byte]));
const plain = (response: Response) => ({ ...response, fields: [...response.fields], body: response.body?.toString("hex") });

function expectReading(response: Response, wire: Wire): void {
  expect(response.status).toBe(wire.status);
  expect(response.statusText).toBe(wire.statusText);
  expect([...response.fields]).toEqual([...wire.fields]);
  expect(response.body?.equals(wire.body)).toBe(true);
  expect(response.reusable).toBe(wire.reusable);
}

describe("split invariance", () => {
  it("a well-formed response reads the same, and as encoded, however its bytes are split", () => {
    fc.assert(
      fc.property(
        wellFormed.chain((wire) => fc.tuple(fc.constant(wire), pieces(wire.bytes))),
        ([wire, parts]) => {
          const whole = feed([wire.bytes]);
          expectReading(whole.response, wire);
          const split = feed(parts);
          expect(plain(split.response)).toEqual(plain(whole.response));
          // Answered at its last byte, not before; a body read to the close is answered at the close.
          expect(split.at).toBe(wire.closeDelimited ? -1 : parts.length - 1);
          if (split.response.body !== undefined) expect(split.response.body.toString("utf8")).toBe(wire.body.toString("utf8"));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("any bytes, well formed or not, give the same answer or the same refusal however they are split", () => {
    const bytes = fc.oneof(
      wellFormed.map((wire) => wire.bytes),
      fc.uint8Array({ maxLength: 200 }).map((array) => Buffer.from(array)),
      wellFormed.chain((wire) =>
        fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([at, byte]) => {
          const copy = Buffer.from(wire.bytes);
          if (copy.length > 0) copy[at % copy.length] = byte;
          return copy;
        }),
      ),
    );
    fc.assert(
      fc.property(
        bytes.chain((data) => fc.tuple(fc.constant(data), pieces(data), fc.integer({ min: 0, max: 300 }))),
        ([data, parts, maxBytes]) => {
          const whole = outcome([data], maxBytes);
          const split = outcome(parts, maxBytes);
          if (whole instanceof ResponseError) expect(split).toBeInstanceOf(ResponseError);
          else {
            expect(split).not.toBeInstanceOf(ResponseError);
            // Bytes after a framed body that come in a later piece are not seen by the reader, which
            // answers when the body ends: only then may the split read be reusable where the whole one
            // is not. The connection drops itself when such bytes arrive while idle (http1.test.ts).
            if (whole.reusable) expect((split as Response).reusable).toBe(true);
            expect({ ...plain(split as Response), reusable: null }).toEqual({ ...plain(whole), reusable: null });
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("a size line of exactly its bound split after its CR reads as one fed whole (found by hand: it was refused)", () => {
    const line = `5;${"e".repeat(RESPONSE_LIMITS.chunkLineBytesMax - 2)}`;
    const bytes = ascii(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${line}\r\nhello\r\n0\r\n\r\n`);
    const cut = bytes.indexOf(`${line}\r`) + line.length + 1;
    expect(feed([bytes]).response.body?.toString()).toBe("hello");
    expect(feed([bytes.subarray(0, cut), bytes.subarray(cut)]).response.body?.toString()).toBe("hello");
  });
});

describe("refusals", () => {
  const refuses = (text: string): void => {
    expect(() => feed([ascii(text)])).toThrow(ResponseError);
    expect(() => feed(bytewise(ascii(text)))).toThrow(ResponseError);
  };

  it.each([
    ["a length and a transfer coding", "HTTP/1.1 200 OK\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n5\r\nallow\r\n0\r\n\r\n"],
    ["two different lengths", "HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\nallow!"],
    ["two equal lengths (Node.js refuses them too)", "HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 5\r\n\r\nallow"],
    ["a list of lengths", "HTTP/1.1 200 OK\r\ncontent-length: 5, 5\r\n\r\nallow"],
    ["a signed length", "HTTP/1.1 200 OK\r\ncontent-length: +5\r\n\r\nallow"],
    ["a tab after a length (Node.js refuses it)", "HTTP/1.1 200 OK\r\ncontent-length: 5 \t\r\n\r\nallow"],
    [
      "a tab after chunked (Node.js reads the body to the close)",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\t\r\n\r\n5\r\nallow\r\n0\r\n\r\n",
    ],
    // Found by the differential property (http1.test.ts, shrunk): Node.js's client refuses them.
    ["a malformed length on a 204, after a 1xx", "HTTP/1.1 100 \r\n!:  !\x80\r\n\r\nHTTP/1.1 204 \r\ncontent-length:! 22\r\n\r\n"],
    ["a list of lengths on a 304", "HTTP/1.1 304 \r\ncontent-length: 0, 0\r\n\r\n"],
    ["two lengths on a 1xx", "HTTP/1.1 100 \r\nContent-Length: 0\r\ncontent-length: 0\r\n\r\nHTTP/1.1 200 \r\ncontent-length:0\r\n\r\n"],
    ["gzip, chunked", "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n5\r\nallow\r\n0\r\n\r\n"],
    ["chunked twice", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ntransfer-encoding: chunked\r\n\r\n5\r\nallow\r\n0\r\n\r\n"],
    ["identity", "HTTP/1.1 200 OK\r\ntransfer-encoding: identity\r\n\r\nallow"],
    ["a space before the colon", "HTTP/1.1 200 OK\r\ncontent-length : 5\r\n\r\nallow"],
    ["a folded line", "HTTP/1.1 200 OK\r\nx-a: b\r\n c\r\ncontent-length: 5\r\n\r\nallow"],
    ["a bare LF in a field", "HTTP/1.1 200 OK\r\nx-a: b\ncontent-length: 5\r\n\r\nallow"],
    ["a bare CR in a field", "HTTP/1.1 200 OK\r\nx-a: b\rc\r\ncontent-length: 5\r\n\r\nallow"],
    ["a NUL in a field", "HTTP/1.1 200 OK\r\nx-a: b\0\r\ncontent-length: 5\r\n\r\nallow"],
    ["a NUL in the reason", "HTTP/1.1 200 O\0K\r\ncontent-length: 5\r\n\r\nallow"],
    ["a space before the size", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n 5\r\nallow\r\n0\r\n\r\n"],
    ["a space after the size", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5 \r\nallow\r\n0\r\n\r\n"],
    ["a size in 0x", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0x5\r\nallow\r\n0\r\n\r\n"],
    ["a size too long for a number", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nfffffffffffffffff\r\nallow\r\n0\r\n\r\n"],
    ["an extension with a tab", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;a=b\tc\r\nallow\r\n0\r\n\r\n"],
    ["an extension without a name", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;\r\nallow\r\n0\r\n\r\n"],
    ["a chunk longer than its size", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\nallow\r\n0\r\n\r\n"],
    ["a trailer without a colon", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nallow\r\n0\r\nxyz\r\n\r\n"],
    ["101", "HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nallow"],
    ["HTTP/2.0", "HTTP/2.0 200 OK\r\ncontent-length: 5\r\n\r\nallow"],
    ["two spaces after the version", "HTTP/1.1  200 OK\r\ncontent-length: 5\r\n\r\nallow"],
    ["a two-digit status", "HTTP/1.1 20 OK\r\ncontent-length: 5\r\n\r\nallow"],
    ["status 099", "HTTP/1.1 099 OK\r\ncontent-length: 5\r\n\r\nallow"],
  ])("refuses %s, whole or a byte at a time", (_name, text) => refuses(text));

  it("refuses a head that ends in bare LFs when the connection closes", () => {
    const reader = new ResponseReader(MAX);
    expect(reader.push(ascii("HTTP/1.1 200 OK\ncontent-length: 5\n\nallow"))).toBeUndefined();
    expect(() => reader.end()).toThrow(ResponseError);
  });

  it("refuses a body cut short by the close, length or chunked", () => {
    for (const text of [
      "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nallow",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nallow\r\n",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nallow\r\n0\r\n",
      "HTTP/1.1 200 OK\r\n",
    ]) {
      const reader = new ResponseReader(MAX);
      expect(reader.push(ascii(text))).toBeUndefined();
      expect(() => reader.end()).toThrow(ResponseError);
    }
  });

  it("reads bytes after a framed body as not reusable, never as a second answer", () => {
    const { response } = feed([ascii("HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\ndenyHTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nallow")]);
    expect(response.body?.toString()).toBe("deny");
    expect(response.reusable).toBe(false);
  });

  it("reads no body after a HEAD, a 204 or a 304, whatever their fields say", () => {
    expect(feed([ascii("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n")], MAX, true).response).toMatchObject({
      status: 200,
      reusable: true,
    });
    expect(feed([ascii("HTTP/1.1 204 No Content\r\ncontent-length: 5\r\n\r\nallow")]).response).toMatchObject({
      status: 204,
      reusable: false,
    });
    expect(feed([ascii("HTTP/1.1 304 Not Modified\r\ntransfer-encoding: chunked\r\n\r\n")]).response.body?.length).toBe(0);
  });
});

describe("bounds at their edges", () => {
  const { headBytesMax, fieldsMax, informationalMax, chunkLineBytesMax, trailerBytesMax } = RESPONSE_LIMITS;

  /** A head of exactly `size` bytes, its CRLF CRLF included, padded in one field. */
  const headOf = (size: number, rest = "content-length: 0\r\n"): string => {
    const start = "HTTP/1.1 200 OK\r\n";
    const pad = size - start.length - rest.length - "x-pad: \r\n\r\n".length;
    return `${start}${rest}x-pad: ${"p".repeat(pad)}\r\n\r\n`;
  };

  it("accepts a head of exactly headBytesMax bytes and refuses one byte more, whole or a byte at a time", () => {
    expect(Buffer.byteLength(headOf(headBytesMax))).toBe(headBytesMax);
    for (const split of [(b: Buffer) => [b], bytewise]) {
      expect(feed(split(ascii(headOf(headBytesMax)))).response.status).toBe(200);
      expect(() => feed(split(ascii(headOf(headBytesMax + 1))))).toThrow(/head is over its bound/);
    }
  });

  it("refuses a head without its end as soon as it is over its bound, holding no more than the bound", () => {
    const reader = new ResponseReader(MAX);
    const bytes = ascii(`HTTP/1.1 200 OK\r\nx-pad: ${"p".repeat(headBytesMax)}`);
    let refusedAt = -1;
    for (let i = 0; i < bytes.length && refusedAt < 0; i += 1) {
      try {
        reader.push(bytes.subarray(i, i + 1));
      } catch (error) {
        expect(error).toBeInstanceOf(ResponseError);
        refusedAt = i + 1;
      }
    }
    expect(refusedAt).toBe(headBytesMax + 1);
    // One piece over the bound is refused at once, not kept.
    expect(() => new ResponseReader(MAX).push(bytes)).toThrow(/head is over its bound/);
  });

  it("accepts fieldsMax fields and refuses one more", () => {
    const fields = (n: number): string => Array.from({ length: n - 1 }, (_, i) => `x-${i}: ${i}\r\n`).join("");
    expect(feed([ascii(`HTTP/1.1 200 OK\r\ncontent-length: 0\r\n${fields(fieldsMax)}\r\n`)]).response.fields.size).toBe(fieldsMax);
    expect(() => feed([ascii(`HTTP/1.1 200 OK\r\ncontent-length: 0\r\n${fields(fieldsMax + 1)}\r\n`)])).toThrow(/too many fields/);
  });

  it("skips informationalMax informational heads and refuses one more", () => {
    const final = "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nallow";
    const early = (n: number): string => "HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n".repeat(n);
    for (const split of [(b: Buffer) => [b], bytewise]) {
      expect(feed(split(ascii(`${early(informationalMax)}${final}`))).response.body?.toString()).toBe("allow");
      expect(() => feed(split(ascii(`${early(informationalMax + 1)}${final}`)))).toThrow(/too many informational/);
    }
  });

  it("accepts a chunk's size line of chunkLineBytesMax bytes and refuses one byte more", () => {
    const chunkedWith = (line: string): string => `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${line}\r\nallow\r\n0\r\n\r\n`;
    const line = (size: number): string => `5;${"e".repeat(size - 2)}`;
    for (const split of [(b: Buffer) => [b], bytewise]) {
      expect(feed(split(ascii(chunkedWith(line(chunkLineBytesMax))))).response.body?.toString()).toBe("allow");
      expect(() => feed(split(ascii(chunkedWith(line(chunkLineBytesMax + 1)))))).toThrow(/size line is over its bound/);
    }
    // Without its end: refused once more than the bound and a CR are held.
    const reader = new ResponseReader(MAX);
    reader.push(ascii(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${line(chunkLineBytesMax)}\r`));
    expect(() => reader.push(ascii("x"))).toThrow(/size line is over its bound/);
  });

  it("accepts trailers of trailerBytesMax bytes (every CRLF counted) and refuses one byte more", () => {
    /** Trailers of exactly `size` bytes: one field padded, then the empty line. */
    const withTrailers = (size: number): string => {
      const pad = size - "x-t: \r\n\r\n".length;
      return `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nallow\r\n0\r\nx-t: ${"t".repeat(pad)}\r\n\r\n`;
    };
    for (const split of [(b: Buffer) => [b], bytewise]) {
      expect(feed(split(ascii(withTrailers(trailerBytesMax)))).response.body?.toString()).toBe("allow");
      expect(() => feed(split(ascii(withTrailers(trailerBytesMax + 1))))).toThrow(/trailers are over their bound/);
    }
  });

  it("reads a body of exactly maxBytes and answers one byte more with no body: length, chunked and close", () => {
    const body = "a".repeat(100);
    const framed = (text: string): Record<string, string> => ({
      length: `HTTP/1.1 200 OK\r\ncontent-length: ${text.length}\r\n\r\n${text}`,
      chunked: `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${text.length.toString(16)}\r\n${text}\r\n0\r\n\r\n`,
      streamed: `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${"1\r\na\r\n".repeat(text.length)}0\r\n\r\n`,
    });
    for (const split of [(b: Buffer) => [b], bytewise]) {
      for (const text of Object.values(framed(body))) {
        const { response } = feed(split(ascii(text)), 100);
        expect(response.body?.toString()).toBe(body);
        expect(response.reusable).toBe(true);
      }
      for (const text of Object.values(framed(`${body}a`))) {
        const { response } = feed(split(ascii(text)), 100);
        expect(response).toMatchObject({ status: 200, body: undefined, reusable: false });
      }
    }
    // A length declared over the bound is answered at the head, no byte of the body read.
    const declared = new ResponseReader(100).push(ascii("HTTP/1.1 200 OK\r\ncontent-length: 101\r\n\r\n"));
    expect(declared).toMatchObject({ body: undefined, reusable: false });
    // Chunked: answered as soon as the body is one byte over, before its end came.
    const streaming = new ResponseReader(100);
    expect(streaming.push(ascii(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1000\r\n${body}`))).toBeUndefined();
    expect(streaming.push(ascii("a"))).toMatchObject({ body: undefined, reusable: false });
    // Read to the close: answered when it goes over, before the close.
    const closing = new ResponseReader(100);
    expect(closing.push(ascii(`HTTP/1.1 200 OK\r\n\r\n${body}`))).toBeUndefined();
    expect(closing.end().body?.toString()).toBe(body);
    const over = new ResponseReader(100);
    expect(over.push(ascii(`HTTP/1.1 200 OK\r\n\r\n${body}a`))).toMatchObject({ body: undefined, reusable: false });
  });
});

describe("work bounded", () => {
  /** The bytes the reader copies and searches while reading `parts`: its work, counted, not timed. */
  function bytesTouched(parts: readonly Buffer[]): number {
    let touched = 0;
    const prototype = Buffer.prototype;
    const { concat } = Buffer;
    const { indexOf, includes, copy } = prototype;
    Buffer.concat = (list, total) => {
      touched += list.reduce((sum, one) => sum + one.length, 0);
      return concat(list, total);
    };
    prototype.indexOf = function (this: Buffer, value: unknown, offset?: unknown, encoding?: unknown) {
      // A search reads up to its match, or to the end when there is none.
      const from = typeof offset === "number" ? offset : 0;
      const found = Reflect.apply(indexOf, this, [value, offset, encoding]) as number;
      touched += found < 0 ? this.length - from : found - from + 4;
      return found;
    } as typeof indexOf;
    prototype.includes = function (this: Buffer, ...args: unknown[]) {
      touched += this.length;
      return Reflect.apply(includes, this, args) as boolean;
    } as typeof includes;
    prototype.copy = function (this: Buffer, ...args: unknown[]) {
      touched += this.length;
      return Reflect.apply(copy, this, args) as number;
    } as typeof copy;
    try {
      feed(parts);
    } finally {
      Buffer.concat = concat;
      Object.assign(prototype, { indexOf, includes, copy });
    }
    return touched;
  }

  const bigHead = `HTTP/1.1 200 OK\r\ncontent-length: 5\r\nx-pad: ${"p".repeat(RESPONSE_LIMITS.headBytesMax - 100)}\r\n\r\nallow`;
  const bigTrailers = `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${`5;${"e".repeat(1000)}\r\nallow\r\n`.repeat(20)}0\r\nx-t: ${"t".repeat(RESPONSE_LIMITS.trailerBytesMax - 100)}\r\n\r\n`;

  it("reads a body of 100,000 one-byte chunks right however it is split, into one buffer of at most twice its bytes", () => {
    const body = Buffer.from(Array.from({ length: 100_000 }, (_, i) => 97 + (i % 26)));
    let wire = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
    for (const byte of body) wire += `1\r\n${String.fromCharCode(byte)}\r\n`;
    const bytes = ascii(`${wire}0\r\n\r\n`);
    for (const size of [bytes.length, 7]) {
      const parts = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
      const read = feed(parts).response.body!;
      expect(read.equals(body)).toBe(true);
      // One buffer grown by doubling, not one object per chunk: at most twice the body's bytes.
      expect(read.buffer.byteLength).toBeLessThanOrEqual(2 * body.length);
    }
  });

  it.each([
    ["a 16 KiB head", bigHead],
    ["1 KiB size lines and 16 KiB of trailers", bigTrailers],
  ])("reads %s fed a byte at a time with work linear in its bytes", (_name, text) => {
    const bytes = ascii(text);
    expect(feed([bytes]).response.status).toBe(200);
    const whole = bytesTouched([bytes]);
    const bytewiseWork = bytesTouched(bytewise(bytes));
    // A re-scan of what is held at each byte would touch ~n²/2 bytes (over 10⁸ here): this allows 32n.
    expect(bytewiseWork).toBeLessThan(32 * bytes.length);
    expect(whole).toBeLessThan(8 * bytes.length);
  });
});
