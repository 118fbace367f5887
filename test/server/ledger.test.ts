// The ledger's canonical serialisation and link hash: the exact bytes every chain is hashed over.

import { canonicalJson, GENESIS_HASH, linkHash } from "@agent-authority/server";
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
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 0, y: undefined }], c: "x" }, e: undefined })).toBe('{"a":{"c":"x","d":[1,{"z":0}]},"b":1}');
  });

  it("equals the plain definition and parses back to an equal value", () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      const text = canonicalJson(value);
      expect(text).toBe(reference(value));
      expect(canonicalJson(JSON.parse(text))).toBe(text);
    }), { numRuns: 300 });
  });
});

describe("linkHash", () => {
  it("is SHA-256 over the previous hash, a newline and the record, in hex", () => {
    expect(GENESIS_HASH).toBe("0".repeat(64));
    expect(linkHash(GENESIS_HASH, "{}")).toMatch(/^[0-9a-f]{64}$/);
    expect(linkHash(GENESIS_HASH, "{}")).not.toBe(linkHash(linkHash(GENESIS_HASH, "{}"), "{}"));
  });
});
