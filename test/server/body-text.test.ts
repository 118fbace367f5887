// The body parser's short cut for the rule of text: it walks a parsed body only when the raw text
// holds a `\u` escape. Over raw JSON text that spells each character either raw or escaped, the
// parser refuses exactly the bodies whose parsed value holds NUL or a lone surrogate.

import { findUnstorableText } from "@agent-authority/api";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseJsonBody } from "../../server/src/http/body.js";

const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));

/** A JSON string literal whose characters are written raw or as `\u` escapes, at random. */
const literal = fc.array(fc.tuple(anyUnit, fc.boolean()), { maxLength: 12 }).map(
  (chars) =>
    `"${chars
      .map(([c, escaped]) => {
        const code = c.charCodeAt(0);
        const mustEscape = c === '"' || c === "\\" || code < 0x20;
        return escaped || mustEscape ? `\\u${code.toString(16).padStart(4, "0")}` : c;
      })
      .join("")}"`,
);

describe("parseJsonBody and the rule of text", () => {
  it("refuses exactly the bodies whose parsed strings hold NUL or a lone surrogate", () => {
    fc.assert(
      fc.property(literal, literal, (name, value) => {
        const raw = Buffer.from(`{${name}: [${value}]}`, "utf8");
        const parsed: unknown = JSON.parse(raw.toString("utf8"));
        const fault = findUnstorableText(parsed);
        let refused: unknown;
        try {
          parseJsonBody(raw, "application/json");
        } catch (error) {
          refused = error;
        }
        expect((refused as { code?: string } | undefined)?.code).toBe(fault === undefined ? undefined : "invalid_text");
      }),
      { numRuns: 3_000 },
    );
  });

  it("reads a raw NUL as malformed JSON, not as text", () => {
    expect(() => parseJsonBody(Buffer.from('"a\u0000b"', "utf8"), "application/json")).toThrow(
      expect.objectContaining({ code: "malformed_json" }),
    );
  });
});
