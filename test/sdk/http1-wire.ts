// Random HTTP/1.1 responses as bytes, with the reading each must have, and mutations of them that
// make them hostile or ambiguous: for the tests of the SDK's HTTP/1.1 client (packages/sdk/src/http1*.ts).
import fc from "fast-check";

/** One response's bytes on the wire and what reading them must give. */
export interface Wire {
  readonly bytes: Buffer;
  readonly status: number;
  readonly statusText: string;
  readonly fields: ReadonlyMap<string, readonly string[]>;
  readonly body: Buffer;
  readonly reusable: boolean;
  /** The body ends when the connection closes: the reader answers at `end()`, not at a `push`. */
  readonly closeDelimited: boolean;
}

const TOKEN_CHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
export const token = fc.string({ unit: fc.constantFrom(...TOKEN_CHARS), minLength: 1, maxLength: 10 });
/** The fields that frame a response or say whether its connection lives: set apart, never random. */
const FRAMING = new Set(["content-length", "transfer-encoding", "connection"]);
const fieldName = token.filter((name) => !FRAMING.has(name.toLowerCase()));
const char = (min: number, max: number): fc.Arbitrary<string> => fc.integer({ min, max }).map((code) => String.fromCharCode(code));
const valueChar = fc.oneof(
  { weight: 8, arbitrary: char(0x21, 0x7e) },
  { weight: 2, arbitrary: fc.constantFrom(" ", "\t") },
  { weight: 1, arbitrary: char(0x80, 0xff) },
);
const ows = fc.constantFrom("", "", " ", "\t", "  ", " \t ");
/** Spaces and tabs around a value are not part of it. */
const trimOws = (value: string): string => value.replace(/^[ \t]+|[ \t]+$/g, "");
const fieldValue = fc.string({ unit: valueChar, maxLength: 24 }).map(trimOws);

interface Field {
  readonly name: string;
  readonly value: string;
  readonly line: string;
}

const field: fc.Arbitrary<Field> = fc
  .tuple(fieldName, fieldValue, ows, ows)
  .map(([name, value, before, after]) => ({ name, value, line: `${name}:${before}${value}${after}` }));
const framingField = (name: string, value: string): fc.Arbitrary<Field> =>
  // No tab after a length or a coding: Node.js's client reads them otherwise, and the SDK's refuses them (http1.test.ts).
  fc
    .tuple(
      fc.constantFrom(name, name.toUpperCase(), name[0]!.toUpperCase() + name.slice(1)),
      ows,
      name === "connection" ? ows : fc.constantFrom("", " ", "  "),
    )
    .map(([spelled, before, after]) => ({
      name: spelled,
      value,
      line: `${spelled}:${before}${value}${after}`,
    }));

const reason = fc.string({ unit: valueChar, maxLength: 20 });
const statusLine = (version: string, status: number, text: string, bare: boolean): string =>
  text === "" && bare ? `HTTP/${version} ${status}` : `HTTP/${version} ${status} ${text}`;

const informational = fc
  .tuple(fc.constantFrom(100, 102, 103), reason, fc.array(field, { maxLength: 3 }))
  .map(([status, text, fields]) => `${statusLine("1.1", status, text, false)}\r\n${fields.map((f) => `${f.line}\r\n`).join("")}\r\n`);

export const bodyBytes: fc.Arbitrary<Buffer> = fc.oneof(
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  fc.string({ unit: "binary", maxLength: 120 }).map((text) => Buffer.from(text, "utf8")),
  fc.constant(Buffer.from("héllo wörld ✓ 𝄞", "utf8")),
);

const hex = (size: number, upper: boolean, zeros: number): string =>
  "0".repeat(zeros) + (upper ? size.toString(16).toUpperCase() : size.toString(16));
const quoted = fc
  .array(fc.oneof(char(0x21, 0x21), char(0x23, 0x5b), char(0x5d, 0x7e), fc.constant(" "), fc.constantFrom('\\"', "\\\\")), { maxLength: 8 })
  .map((parts) => `"${parts.join("")}"`);
const extension = fc.oneof(
  token.map((name) => `;${name}`),
  fc.tuple(token, token).map(([name, value]) => `;${name}=${value}`),
  fc.tuple(token, quoted).map(([name, value]) => `;${name}=${value}`),
);
const extensions = fc.array(extension, { maxLength: 2 }).map((list) => list.join(""));

/** A body in chunks of random sizes, each size in random case with leading zeros and extensions, then trailers. */
const chunked = (body: Buffer): fc.Arbitrary<Buffer> =>
  fc
    .record({
      cuts: fc.array(fc.nat({ max: Math.max(body.length, 1) }), { maxLength: 6 }),
      sizes: fc.array(fc.tuple(fc.boolean(), fc.nat({ max: 2 }), extensions), { minLength: 8, maxLength: 8 }),
      trailers: fc.array(field, { maxLength: 3 }),
    })
    .map(({ cuts, sizes, trailers }) => {
      const points = [...new Set([0, ...cuts.filter((cut) => cut < body.length), body.length])].sort((a, b) => a - b);
      const parts: Buffer[] = [];
      for (let i = 0; i + 1 < points.length; i += 1) {
        const piece = body.subarray(points[i]!, points[i + 1]!);
        if (piece.length === 0) continue;
        const [upper, zeros, ext] = sizes[i % sizes.length]!;
        parts.push(Buffer.from(`${hex(piece.length, upper, zeros)}${ext}\r\n`, "latin1"), piece, Buffer.from("\r\n"));
      }
      const [, zeros, ext] = sizes[7]!;
      parts.push(Buffer.from(`${"0".repeat(zeros + 1)}${ext}\r\n${trailers.map((f) => `${f.line}\r\n`).join("")}\r\n`, "latin1"));
      return Buffer.concat(parts);
    });

type Framing = "length" | "chunked" | "close" | "none";

/** A well-formed response (informational heads, status line, fields, a body framed one of the ways allowed) and its reading. */
export const wellFormed: fc.Arbitrary<Wire> = fc
  .record({
    informational: fc.array(informational, { maxLength: 3 }),
    version: fc.constantFrom("1.1", "1.1", "1.1", "1.0"),
    status: fc.oneof(fc.constantFrom(200, 204, 304, 404, 500), fc.integer({ min: 200, max: 599 })),
    text: reason,
    bare: fc.boolean(),
    fields: fc.array(field, { maxLength: 8 }),
    framing: fc.constantFrom<Framing>("length", "chunked", "close"),
    connection: fc.constantFrom(undefined, "close", "keep-alive", "Keep-Alive", "foo, close"),
    at: fc.nat(),
    body: bodyBytes,
    noneField: fc.constantFrom(undefined, "content-length", "transfer-encoding"),
  })
  .chain((w) => {
    const framing: Framing = w.status === 204 || w.status === 304 ? "none" : w.framing;
    const body = framing === "none" ? Buffer.alloc(0) : w.body;
    const framingFields: fc.Arbitrary<Field>[] = [];
    if (framing === "length") framingFields.push(framingField("content-length", String(body.length)));
    if (framing === "chunked") framingFields.push(framingField("transfer-encoding", "chunked"));
    if (framing === "none" && w.noneField === "content-length") framingFields.push(framingField("content-length", String(w.body.length)));
    if (framing === "none" && w.noneField === "transfer-encoding") framingFields.push(framingField("transfer-encoding", "chunked"));
    if (w.connection !== undefined) framingFields.push(framingField("connection", w.connection));
    return fc.tuple(
      fc.constant(w),
      fc.constant(framing),
      fc.constant(body),
      fc.tuple(...framingFields),
      framing === "chunked" ? chunked(body) : fc.constant(body),
    );
  })
  .map(([w, framing, body, framingFields, encoded]) => {
    const fields = [...w.fields];
    for (const [i, one] of framingFields.entries()) fields.splice((w.at + i) % (fields.length + 1), 0, one);
    const head = `${w.informational.join("")}${statusLine(w.version, w.status, w.text, w.bare)}\r\n${fields.map((f) => `${f.line}\r\n`).join("")}\r\n`;
    const read = new Map<string, string[]>();
    for (const one of fields) read.set(one.name.toLowerCase(), [...(read.get(one.name.toLowerCase()) ?? []), one.value]);
    const tokens = (w.connection ?? "").split(",").map((t) => t.trim().toLowerCase());
    const reusable = framing !== "close" && !tokens.includes("close") && (w.version === "1.1" || tokens.includes("keep-alive"));
    return {
      bytes: Buffer.concat([Buffer.from(head, "latin1"), encoded]),
      status: w.status,
      statusText: w.text,
      fields: read,
      body,
      reusable,
      closeDelimited: framing === "close",
    };
  });

/** Splits bytes at random points into pieces (one byte each up to the whole). */
export const pieces = (bytes: Buffer): fc.Arbitrary<Buffer[]> =>
  fc.oneof(
    fc.constant([...bytes].map((byte) => Buffer.from([byte]))),
    fc.array(fc.nat({ max: Math.max(bytes.length, 1) }), { maxLength: 12 }).map((cuts) => {
      const points = [...new Set([0, ...cuts.filter((cut) => cut < bytes.length), bytes.length])].sort((a, b) => a - b);
      const parts: Buffer[] = [];
      for (let i = 0; i + 1 < points.length; i += 1) parts.push(bytes.subarray(points[i]!, points[i + 1]!));
      return parts.length === 0 ? [bytes] : parts;
    }),
  );

/** One way to make a response hostile or ambiguous, applied to its bytes read as latin1 text. */
export type Mutation = (text: string) => string;

const atLine = (text: string, n: number, make: (line: string) => string): string => {
  const headEnd = text.indexOf("\r\n\r\n");
  if (headEnd < 0) return text;
  const lines = text.slice(0, headEnd).split("\r\n");
  const at = 1 + (n % Math.max(lines.length - 1, 1));
  if (at >= lines.length) return text;
  lines[at] = make(lines[at]!);
  return `${lines.join("\r\n")}${text.slice(headEnd)}`;
};
/** Adds a field at the end of the (first) head. */
const addField = (text: string, line: string): string => {
  const headEnd = text.indexOf("\r\n\r\n");
  return headEnd < 0 ? text : `${text.slice(0, headEnd)}\r\n${line}${text.slice(headEnd)}`;
};

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.nat({ max: 20 }).map((n) => (text: string) => addField(text, `content-length: ${n}`)),
  fc.nat({ max: 20 }).map((n) => (text: string) => addField(addField(text, `Content-Length: ${n}`), `content-length: ${n}`)),
  fc.nat({ max: 20 }).map((n) => (text: string) => addField(text, `content-length: ${n}, ${n}`)),
  fc.constant((text: string) => addField(text, "transfer-encoding: chunked")),
  fc.constant((text: string) => addField(text, "Transfer-Encoding: gzip, chunked")),
  fc.constant((text: string) => addField(text, "transfer-encoding: chunked, chunked")),
  fc.constant((text: string) => addField(text, "transfer-encoding: identity")),
  fc.constantFrom("zz", "-1", "0x5", " 5", "5 ", "+5", "ffffffffffffffff", "").map((size) => (text: string) => {
    const headEnd = text.indexOf("\r\n\r\n");
    const line = text.indexOf("\r\n", headEnd + 4);
    return headEnd < 0 || line < 0 ? text : `${text.slice(0, headEnd + 4)}${size}${text.slice(line)}`;
  }),
  fc.nat().map((n) => (text: string) => atLine(text, n, (line) => line.replace(":", " :"))),
  fc.nat().map((n) => (text: string) => atLine(text, n, (line) => `${line}\r\n folded`)),
  fc.nat().map((n) => (text: string) => atLine(text, n, (line) => `${line}\n`)),
  fc.nat().map((n) => (text: string) => atLine(text, n, (line) => `${line}\rx`)),
  fc.nat().map((n) => (text: string) => {
    const all = [...text.matchAll(/\r\n/g)];
    if (all.length === 0) return text;
    const at = all[n % all.length]!.index;
    return `${text.slice(0, at)}\n${text.slice(at + 2)}`;
  }),
  fc.tuple(fc.nat(), fc.constantFrom("\0", "\x7f", "\x01", "\x1b")).map(([n, c]) => (text: string) => {
    const at = n % (text.length + 1);
    return `${text.slice(0, at)}${c}${text.slice(at)}`;
  }),
  fc.integer({ min: 16 * 1024 - 64, max: 17 * 1024 }).map((size) => (text: string) => addField(text, `x-huge: ${"a".repeat(size)}`)),
  fc.integer({ min: 1000, max: 3000 }).map((size) => (text: string) => {
    const headEnd = text.indexOf("\r\n\r\n");
    const line = text.indexOf("\r\n", headEnd + 4);
    return headEnd < 0 || line < 0 ? text : `${text.slice(0, line)};${"e".repeat(size)}${text.slice(line)}`;
  }),
  fc.nat().map((n) => (text: string) => text.slice(0, n % (text.length + 1))),
  fc.string({ unit: "binary-ascii", minLength: 1, maxLength: 20 }).map((garbage) => (text: string) => `${text}${garbage}`),
  fc.constant((text: string) => `${text}HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nallow`),
  fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([n, byte]) => (text: string) => {
    if (text.length === 0) return text;
    const at = n % text.length;
    return `${text.slice(0, at)}${String.fromCharCode(byte)}${text.slice(at + 1)}`;
  }),
  fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([n, byte]) => (text: string) => {
    const at = n % (text.length + 1);
    return `${text.slice(0, at)}${String.fromCharCode(byte)}${text.slice(at)}`;
  }),
  fc.constant((text: string) => text.replace("HTTP/1.1 ", "HTTP/1.1  ")),
  fc.constant((text: string) => text.replace(/^HTTP\/1\.[01]/, "HTTP/2.0")),
  fc.constant((text: string) => `HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\nconnection: upgrade\r\n\r\n${text}`),
);

/** Well-formed responses, and ones with one to three mutations. */
export const hostile: fc.Arbitrary<Buffer> = fc.oneof(
  wellFormed.map((wire) => wire.bytes),
  fc.tuple(wellFormed, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([wire, mutations]) =>
    Buffer.from(
      mutations.reduce((text, mutate) => mutate(text), wire.bytes.toString("latin1")),
      "latin1",
    ),
  ),
);
