// The rule of text: exactly NUL and lone surrogates are refused, wherever they sit in a body.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findUnstorableText, unstorableCharacter } from "./index.js";

const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
const anyText = fc.oneof(fc.string({ unit: anyUnit, maxLength: 24 }), fc.string({ unit: "binary", maxLength: 24 }));

/** An independent oracle of well-formed UTF-16: URI encoding throws on a lone surrogate. */
function wellFormed(text: string): boolean {
  try {
    encodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

describe("unstorableCharacter", () => {
  it("refuses a string exactly when it holds NUL or is not well-formed UTF-16", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const storable = wellFormed(text) && !text.includes("\u0000");
        expect(unstorableCharacter(text) === undefined).toBe(storable);
        // Whatever is accepted survives UTF-8, the form both stores keep text in.
        if (storable) expect(new TextDecoder().decode(new TextEncoder().encode(text))).toBe(text);
      }),
      { numRuns: 2_000 },
    );
  });

  it("names the offending character's offset", () => {
    expect(unstorableCharacter("ab\u0000")).toEqual({ reason: "nul", offset: 2 });
    expect(unstorableCharacter("😀\ud800")).toEqual({ reason: "lone_surrogate", offset: 2 });
    expect(unstorableCharacter("\udc00😀")).toEqual({ reason: "lone_surrogate", offset: 0 });
    expect(unstorableCharacter("e\u0301 \u202e שלום 👩‍👩‍👧 \uffff")).toBeUndefined();
  });
});

describe("findUnstorableText", () => {
  it("points at the string or member name that holds the character", () => {
    expect(findUnstorableText({ a: [1, { "b/c": "x\u0000" }] })).toMatchObject({ pointer: "/a/1/b~1c", reason: "nul" });
    expect(findUnstorableText({ args: { "k\ud800": 1 } })).toMatchObject({ pointer: "/args/k\ud800", reason: "lone_surrogate" });
    expect(findUnstorableText("\u0000")).toMatchObject({ pointer: "/" });
    expect(findUnstorableText({ a: ["ok", 2, null, true], "~": "fine" })).toBeUndefined();
  });
});
