// Lint by proof: the contradictions the interval check misses, proved; what holds for some input is never called contradictory.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lintPolicy } from "@agent-authority/language";
import { createAnalyzer, proveLint, type Analyzer } from "./index.js";

let analyzer: Analyzer;
beforeAll(async () => {
  analyzer = await createAnalyzer();
});
afterAll(async () => {
  await analyzer.close();
});

const codes = async (text: string): Promise<string[]> => (await proveLint(analyzer, text)).map((d) => d.code);

describe("proved lint", () => {
  for (const text of [
    'startsWith(tool, "a.") && startsWith(tool, "b.")',
    'size(tool) < 2 && tool == "abc"',
    "amount_minor * 2 > 100 && amount_minor < 50",
    "hour_utc * 2 == 7",
  ]) {
    it(`\`${text}\` never allows, which the interval check cannot tell`, async () => {
      expect(lintPolicy(text).map((d) => d.code)).not.toContain("never-allows");
      const found = await proveLint(analyzer, text);
      expect(found.map((d) => d.code)).toEqual(["never-allows"]);
      expect(found[0]!.help).toMatch(/proved by the solver/);
    });
  }

  it("a policy some input satisfies is not called never-allows", async () => {
    expect(await codes('startsWith(tool, "a.") && startsWith(tool, "a.b")')).not.toContain("never-allows");
    expect(await codes("amount_minor * 2 > 100 && amount_minor < 52")).not.toContain("never-allows");
  });

  it("always-allows is proved, errors counted: `size(tool) >= 0` always holds, `args.n > 0 || args.n <= 0` does not", async () => {
    expect(await codes('size(tool) >= 0 || tool == "x"')).toContain("always-allows");
    expect(await codes("args.n > 0 || args.n <= 0")).toEqual([]);
    expect(await codes("true")).toEqual([]);
  });

  it("redundant-condition: a conjunct implied by another, but not one that guards an error", async () => {
    const found = await proveLint(analyzer, 'startsWith(tool, "pay.") && tool != "" && amount_minor < 10');
    expect(found.map((d) => [d.code, d.span.start])).toEqual([["redundant-condition", 28]]);
    expect(await codes("args.n != null && args.n > 3")).toEqual([]);
    expect(await codes("amount_minor < 10 || args.n > 3 || amount_minor < 5")).toEqual(["redundant-condition"]);
  });
});
