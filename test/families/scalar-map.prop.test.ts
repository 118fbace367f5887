// Property: for every scalar style the yaml library writes, each character of a string maps back to
// the same character in the source (escapes and folded breaks map to where they are written).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Document, isScalar, parseDocument, Scalar } from "yaml";
import { mapScalar } from "@agent-authority/families";

const STYLES = [Scalar.PLAIN, Scalar.QUOTE_SINGLE, Scalar.QUOTE_DOUBLE, Scalar.BLOCK_LITERAL, Scalar.BLOCK_FOLDED] as const;

/** Policy-like text: names, operators, quotes, backslashes, spaces and line breaks. */
const policyText = fc
  .array(
    fc.constantFrom("amount_minor", " ", "  ", "&&", "||", "<=", '"x"', "'", "\\", "\n", "\n\n", "tool", "é", "[1, 2]", "\t", "#", ": "),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(""));

describe("mapScalar (property)", () => {
  it("maps every character to itself in the source, in order, for every style", () => {
    fc.assert(
      fc.property(
        policyText,
        fc.constantFrom(...STYLES),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 20, max: 80 }),
        (value, style, depth, lineWidth) => {
          const scalar = new Scalar(value);
          scalar.type = style;
          let contents: unknown = { policy: scalar };
          for (let i = 0; i < depth; i += 1) contents = { grant: contents };
          const source = new Document(contents).toString({ lineWidth, minContentWidth: 10 });
          const doc = parseDocument(source);
          let node: unknown = doc.contents;
          for (let i = 0; i < depth; i += 1) node = (node as { get(k: string, keep: boolean): unknown }).get("grant", true);
          const found = (node as { get(k: string, keep: boolean): unknown }).get("policy", true);
          if (!isScalar(found) || found.value !== value) return; // the library chose another representation
          const map = mapScalar(source, found);
          if (!map.exact) {
            // Only an explicit indentation indicator (written for leading spaces) may fall back.
            expect(source.slice(found.range![0], found.range![0] + 3)).toMatch(/^[|>][-+]?\d|^[|>]\d/);
            return;
          }
          let previous = -1;
          for (let i = 0; i < value.length; i += 1) {
            const at = map.sourceOffset(i);
            expect(at).toBeGreaterThanOrEqual(previous);
            expect(at).toBeGreaterThanOrEqual(found.range![0]);
            expect(at).toBeLessThan(found.range![1]);
            previous = at;
            const ch = value[i]!;
            const written = source[at]!;
            // A character is written as itself unless it is escaped, a doubled quote, or a folded break.
            if (written !== "\\" && !(ch === "'" && style === Scalar.QUOTE_SINGLE) && ch !== "\n" && ch !== " " && ch !== "\t") {
              expect(written, `${JSON.stringify(value)} as ${style} at ${i}`).toBe(ch);
            }
          }
        },
      ),
      { numRuns: Number(process.env["FC_RUNS"] ?? 400), seed: Number(process.env["FC_SEED"] ?? 20260105) },
    );
  });
});
