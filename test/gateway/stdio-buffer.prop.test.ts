// The upstream read buffer on hostile output: any split of the same bytes gives the same messages,
// an oversized line answers only its own request, and what is kept stays within the limit.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BoundedReadBuffer } from "@agent-authority/gateway";

const params = { numRuns: 300, seed: Number(process.env["FC_SEED"] ?? 20261126) };
const LIMIT = 1024;

function drain(buffer: BoundedReadBuffer): unknown[] {
  const out: unknown[] = [];
  for (let message = buffer.readMessage(); message !== null; message = buffer.readMessage()) out.push(message);
  return out;
}

/** Feeds `bytes` cut at `cuts`; answers the messages read, or the error that closes the connection. */
function feed(bytes: Buffer, cuts: number[]): unknown[] | string {
  const buffer = new BoundedReadBuffer(LIMIT);
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  const out: unknown[] = [];
  try {
    for (const at of [...points, bytes.length]) {
      buffer.append(bytes.subarray(from, at));
      from = at;
      out.push(...drain(buffer));
    }
  } catch (error) {
    return (error as Error).message;
  }
  return out;
}

const response = (id: number, size: number): string =>
  JSON.stringify({ result: { content: [{ type: "text", text: "y".repeat(size) }] }, jsonrpc: "2.0", id });

describe("BoundedReadBuffer", () => {
  it("reads the same messages however the bytes are split; an oversized response becomes an error for its id only", () => {
    const lines = fc.array(fc.tuple(fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 0, max: 3 * LIMIT })), {
      minLength: 1,
      maxLength: 6,
    });
    fc.assert(
      fc.property(lines, fc.array(fc.nat(), { maxLength: 12 }), (spec, cuts) => {
        const bytes = Buffer.from(spec.map(([id, size]) => `${response(id, size)}\n`).join(""));
        const read = feed(bytes, cuts);
        expect(read).toEqual(feed(bytes, []));
        expect(Array.isArray(read)).toBe(true);
        (read as { id: number; error?: { message: string }; result?: unknown }[]).forEach((message, i) => {
          const [id, size] = spec[i]!;
          expect(message.id).toBe(id);
          if (Buffer.byteLength(response(id, size)) > LIMIT)
            expect(message.error?.message).toContain(`over the transport limit of ${LIMIT} bytes`);
          else expect(message.result).toBeDefined();
        });
      }),
      params,
    );
  });

  it("a line at the limit is read, one byte more is refused", () => {
    const at = response(7, 0);
    const fill = LIMIT - Buffer.byteLength(at);
    const exact = response(7, fill);
    expect(Buffer.byteLength(exact)).toBe(LIMIT);
    expect(feed(Buffer.from(`${exact}\n`), [])).toEqual([JSON.parse(exact)]);
    const over = feed(Buffer.from(`${response(7, fill + 1)}\n`), []) as { id: number; error: unknown }[];
    expect(over[0]!.id).toBe(7);
    expect(over[0]!.error).toBeDefined();
  });

  it("an oversized line with no id at its end closes the connection, as the SDK's own buffer does", () => {
    const line = JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { data: "z".repeat(2 * LIMIT) } });
    expect(feed(Buffer.from(`${line}\n`), [100, 900])).toMatch(/over 1024 bytes and names no request/);
  });
});
