// The CST parser: spans, errors as values, the nesting bound and the generated CST types.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cstTypesText } from "./cst-types.js";
import { parseCst, NESTING_DEPTH_MAX } from "./parser.js";
import { lineColumn } from "./span.js";

describe("parseCst", () => {
  it("parses a policy into a CST without errors", () => {
    const result = parseCst("amount_minor <= 50000 && (amount_minor < 10000 || approver != null)");
    expect(result.lexErrors).toEqual([]);
    expect(result.parseErrors).toEqual([]);
    expect(result.cst?.name).toBe("policy");
  });

  it("keeps `//` comments apart from the tokens, and reads `//` inside a string as text", () => {
    const result = parseCst('// head\ntool == "a//b" // tail\n&& uses == 1');
    expect(result.parseErrors).toEqual([]);
    expect(result.comments).toEqual([
      { start: 0, end: 7 },
      { start: 23, end: 30 },
    ]);
    expect(result.tokens.map((t) => t.image)).toEqual(["tool", "==", '"a//b"', "&&", "uses", "==", "1"]);
  });

  it("reports an unexpected character with a half-open span", () => {
    const result = parseCst("tool == #");
    expect(result.lexErrors).toEqual([{ code: "unexpected-character", message: "unexpected character `#`", span: { start: 8, end: 9 } }]);
  });

  it("reports an unterminated string", () => {
    expect(parseCst('tool == "abc').lexErrors.map((e) => [e.code, e.span])).toEqual([["unterminated-string", { start: 8, end: 12 }]]);
  });

  it("reports the offending token and the end of input", () => {
    expect(parseCst("a == == b").parseErrors.map((e) => [e.code, e.span])).toEqual([["unexpected-token", { start: 5, end: 7 }]]);
    expect(parseCst("a &&").parseErrors.map((e) => [e.code, e.span])).toEqual([["unexpected-end", { start: 4, end: 4 }]]);
    expect(parseCst("a b").parseErrors.map((e) => [e.code, e.span])).toEqual([["unexpected-token", { start: 2, end: 3 }]]);
  });

  it("bounds nesting before parsing, at and past the edge", () => {
    const atEdge = `${"(".repeat(NESTING_DEPTH_MAX)}x${")".repeat(NESTING_DEPTH_MAX)}`;
    expect(parseCst(atEdge).parseErrors).toEqual([]);
    const past = `${"(".repeat(NESTING_DEPTH_MAX + 1)}x${")".repeat(NESTING_DEPTH_MAX + 1)}`;
    expect(parseCst(past).parseErrors.map((e) => [e.code, e.span])).toEqual([["nesting-too-deep", { start: 64, end: 65 }]]);
    expect(parseCst(`${"!".repeat(NESTING_DEPTH_MAX)}x`).parseErrors).toEqual([]);
    expect(parseCst(`${"!".repeat(NESTING_DEPTH_MAX + 1)}x`).parseErrors.map((e) => e.code)).toEqual(["nesting-too-deep"]);
    expect(parseCst(`${"!".repeat(100_000)}x`).parseErrors.map((e) => e.code)).toEqual(["nesting-too-deep"]);
  });

  it("never throws on odd input", () => {
    for (const text of ["", ")", "(((", '"', "\\", "a.", "f(,)", "[1,]", "\u0000", "-", "a.b.(c)"]) {
      expect(() => parseCst(text)).not.toThrow();
    }
  });

  it("converts offsets to lines and columns", () => {
    expect(lineColumn("a\nbc\r\nd", 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumn("a\nbc\r\nd", 3)).toEqual({ line: 2, column: 2 });
    expect(lineColumn("a\nbc\r\nd", 6)).toEqual({ line: 3, column: 1 });
  });
});

describe("generated CST types", () => {
  it("match the committed src/cst.generated.ts (regenerate with scripts/generate-cst-types.mjs)", () => {
    const committed = readFileSync(new URL("./cst.generated.ts", import.meta.url), "utf8");
    expect(committed).toBe(cstTypesText());
  });
});
