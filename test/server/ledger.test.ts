// The ledger's canonical serialisation and link hash: the exact bytes every chain is hashed over.

import { canonicalJson, canonicalMerge, CanonicalText, GENESIS_HASH, linkHash } from "@agent-authority/server";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

/** The definition, written plainly: sorted keys at every level, no whitespace, undefined members dropped. */
function reference(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : reference(v))).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${reference(v)}`).join(",")}}`;
}

describe("canonicalJson", () => {
  it("sorts keys at every level and drops undefined members", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 0, y: undefined }], c: "x" }, e: undefined })).toBe(
      '{"a":{"c":"x","d":[1,{"z":0}]},"b":1}',
    );
  });

  it("equals the plain definition and parses back to an equal value", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(text).toBe(reference(value));
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it("writes objects built in key order, out of order, or with keys objects enumerate first exactly as defined", () => {
    // Array-index keys ("10" before "9" by code unit, but enumerated 9 first), `__proto__` as an own
    // key, undefined members and deep nesting all take the member-by-member path or a sorted copy.
    const key = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom("0", "9", "10", "__proto__", "a", "b", "B", ""));
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof(
        { depthSize: "small" },
        fc.constantFrom(null, true, 0, -0, 1.5, "x", undefined),
        fc.array(tie("tree"), { maxLength: 4 }),
        fc.array(fc.tuple(key, tie("tree")), { maxLength: 5 }).map((entries) => {
          const out: Record<string, unknown> = {};
          for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
          return out;
        }),
      ),
    }));
    fc.assert(
      fc.property(tree, (value) => {
        expect(canonicalJson(value)).toBe(reference(value));
      }),
      { numRuns: 500 },
    );
    const deep: unknown[] = [];
    let cursor = deep;
    for (let i = 0; i < 100; i += 1) cursor.push((cursor = []));
    expect(canonicalJson({ b: deep, a: 1 })).toBe(reference({ b: deep, a: 1 }));
    expect(canonicalJson({ 10: "x", 9: "y", a: { d: 1, c: 2 } })).toBe('{"10":"x","9":"y","a":{"c":2,"d":1}}');
  });
});

describe("canonicalMerge", () => {
  it("writes the record of a body and its sealed fields exactly as canonicalJson writes their merge", () => {
    const key = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom("seq", "kind", "gates", "10", "9", "__proto__", ""));
    const record = fc.array(fc.tuple(key, fc.oneof(fc.jsonValue(), fc.constant(undefined))), { maxLength: 8 }).map((entries) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      return out;
    });
    fc.assert(
      fc.property(record, record, fc.jsonValue(), (body, fields, other) => {
        expect(canonicalMerge(body, fields)).toBe(reference({ ...body, ...fields }));
        // The same names again, other values: the order found for these names is reused.
        const again: Record<string, unknown> = {};
        for (const k of Object.keys(body))
          Object.defineProperty(again, k, {
            value: body[k] === undefined ? undefined : other,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        expect(canonicalMerge(again, fields)).toBe(reference({ ...again, ...fields }));
      }),
      { numRuns: 500 },
    );
    expect(canonicalMerge({ b: 1, seq: 0, a: undefined }, { seq: 2, a: [{ y: 1, x: 2 }] })).toBe('{"a":[{"x":2,"y":1}],"b":1,"seq":2}');
  });

  it("writes each of many merges interleaved, of bodies whose names repeat, extend or reorder another's, as canonicalJson writes it", () => {
    // More kinds of body than the sorts kept, met in any order: a kept sort serves only the same names in the same order.
    const names = fc.constantFrom(
      ["b", "a"],
      ["b", "a", "c"],
      ["a", "b"],
      ["b"],
      ["c", "b", "a", "d"],
      ["d", "a"],
      ["e", "c"],
      ["a", "b", "c", "d", "e", "f"],
    );
    const bodies = fc.array(fc.tuple(names, fc.integer()), { minLength: 1, maxLength: 40 });
    fc.assert(
      fc.property(bodies, (merges) => {
        for (const [keys, value] of merges) {
          const body = Object.fromEntries(keys.map((key, i) => [key, value + i]));
          expect(canonicalMerge(body, { seq: value })).toBe(reference({ ...body, seq: value }));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("copies a member given as canonical text as it is, the same record as the value would give", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue(), { maxKeys: 6 }), fc.jsonValue(), (body, value) => {
        const asText = canonicalMerge(body, { gates: new CanonicalText(canonicalJson(value)) });
        expect(asText).toBe(canonicalMerge(body, { gates: value }));
        expect(asText).toBe(reference({ ...body, gates: value }));
      }),
      { numRuns: 300 },
    );
  });
});

describe("linkHash", () => {
  it("is SHA-256 over the previous hash, a newline and the record, in hex", () => {
    expect(GENESIS_HASH).toBe("0".repeat(64));
    expect(linkHash(GENESIS_HASH, "{}")).toMatch(/^[0-9a-f]{64}$/);
    expect(linkHash(GENESIS_HASH, "{}")).not.toBe(linkHash(linkHash(GENESIS_HASH, "{}"), "{}"));
    // A fixed vector: the chains already sealed must keep verifying.
    expect(linkHash(GENESIS_HASH, '{"a":"é"}')).toBe("6068d9d0ed366959da9c4e710ab356526d2235bd0ed5f3d0e22f86ac2cb30fa2");
  });
});
