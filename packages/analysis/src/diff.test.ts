// The semantic diff on a corpus of classic rewrites: each proved equivalent, or refuted by a witness both evaluators agree on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compilePolicy } from "@agent-authority/language";
import { createAnalyzer, diffPolicies, type Analyzer, type DiffResult } from "./index.js";

let analyzer: Analyzer;
beforeAll(async () => {
  analyzer = await createAnalyzer();
});
afterAll(async () => {
  await analyzer.close();
});

/** Every witness is a complete input on which the two policies decide as the witness says. */
function expectWitnessesHold(old: string, next: string, result: DiffResult): void {
  const a = compilePolicy(old);
  const b = compilePolicy(next);
  if (!a.ok || !b.ok) throw new Error("corpus policies compile");
  for (const d of [...result.widening, ...result.narrowing]) {
    expect(Object.keys(d.input)).toContain("approver");
    const va = a.policy.evaluate(d.input);
    const vb = b.policy.evaluate(d.input);
    expect(va.ok && va.value).toBe(d.old);
    expect(vb.ok && vb.value).toBe(d.new);
  }
}

async function diff(old: string, next: string): Promise<DiffResult> {
  const result = await diffPolicies(analyzer, old, next);
  expectWitnessesHold(old, next, result);
  return result;
}

describe("classic rewrites", () => {
  const equivalent: readonly [string, string, string][] = [
    ["De Morgan over &&", '!(tool == "a" && amount_minor < 5)', 'tool != "a" || amount_minor >= 5'],
    ["`in` and `||`", 'tool in ["a", "b"]', 'tool == "a" || tool == "b"'],
    ["the hour's domain", 'hour_utc <= 23 && tool == "x"', 'tool == "x"'],
    ["the weekday's domain", 'weekday_utc in ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]', "true"],
    [
      "a sum below the edge is ordered as its parts",
      "amount_minor < 1000 && amount_minor + 1 > 10",
      "amount_minor < 1000 && amount_minor > 9",
    ],
    ["null guards are the same", "args.n != null && args.n > 3", "args.n > 3"],
    ["size counts code points", 'size(tool) == 1 && tool == "😀"', 'tool == "😀"'],
  ];
  for (const [name, a, b] of equivalent) {
    it(`${name}: equivalent`, async () => {
      const r = await diff(a, b);
      expect(r).toEqual({ relation: "equivalent", widening: [], narrowing: [] });
    });
  }

  it("De Morgan done wrong widens, and the witness is one name away from the default action", async () => {
    const r = await diff('!(tool == "a" && amount_minor < 5)', 'tool != "a" && amount_minor >= 5');
    expect(r.relation).toBe("narrows");
    expect(r.narrowing).toHaveLength(1);
  });

  it("raising a limit widens, with the smallest witness", async () => {
    const r = await diff("amount_minor <= 100", "amount_minor <= 200");
    expect(r.relation).toBe("widens");
    expect(r.widening[0]!.input.amount_minor).toBeGreaterThan(100);
    expect(r.widening[0]!.input.amount_minor).toBeLessThanOrEqual(200);
  });

  it("a multiplication at the edge of the safe range fails closed: `x * 2 > 10` is not `x > 5`", async () => {
    const r = await diff("amount_minor * 2 > 10", "amount_minor > 5");
    expect(r.relation).toBe("widens");
    expect(r.widening[0]!.input.amount_minor * 2).toBeGreaterThan(Number.MAX_SAFE_INTEGER);
  });

  it("overflow at the edge of the safe range: `x + 1 > 10` refuses the largest safe integer, `x > 9` allows it", async () => {
    const r = await diff("amount_minor + 1 > 10", "amount_minor > 9");
    expect(r.relation).toBe("widens");
    expect(r.widening[0]!.input.amount_minor).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("an error on either side of a comparison refuses: `!(args.n > 3)` is not `args.n <= 3` when absent", async () => {
    const r = await diff("!(args.n > 3)", "args.n == null || args.n <= 3");
    expect(r.relation).toBe("widens");
    expect(r.widening[0]!.input.args).toEqual({});
  });

  it("a string that starts with a directory is not within it", async () => {
    const r = await diff('pathWithin(args.path, "/notes")', 'startsWith(args.path, "/notes")');
    expect(["widens", "incomparable", "unknown"]).toContain(r.relation);
    if (r.relation !== "unknown") expect(r.widening.length).toBe(1);
  });

  it("code-point order: an astral character sorts above every BMP character", async () => {
    const r = await diff('tool < "\\uffff"', 'tool < "😀"');
    expect(r.relation).toBe("widens");
    expect(r.widening[0]!.input.tool.codePointAt(0)!).toBeGreaterThanOrEqual(0xffff);
  });

  it("an approver condition: only a named approver widens to any approver", async () => {
    const r = await diff('approver == "cfo@example.com"', "approver != null");
    expect(r.relation).toBe("widens");
    expect(typeof r.widening[0]!.input.approver).toBe("string");
  });

  it("the same path functions on both sides are equivalent without knowing what they do", async () => {
    const r = await diff('pathWithin(args.path, "/a") && tool == "x"', 'tool == "x" && pathWithin(args.path, "/a")');
    expect(r.relation).toBe("equivalent");
  });
});
