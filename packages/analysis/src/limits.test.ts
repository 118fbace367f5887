// The analysis's limits at their edges: a budget that runs out answers `unknown`, a witness the evaluator does not confirm is never shown.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANALYSIS_LIMITS, createAnalyzer, diffPolicies, nearestAllowed, proveLint, type Analyzer } from "./index.js";

let analyzer: Analyzer;
beforeAll(async () => {
  analyzer = await createAnalyzer({ questionMs: 1_500, solverCallMs: 500 });
});
afterAll(async () => {
  await analyzer.close();
});

/** Factoring a product of two large primes: past any small budget for the solver's non-linear arithmetic. */
const HARD = "amount_minor > 1 && uses > 1 && amount_minor * uses == 2499997400000387";

describe("analysis limits", () => {
  it("a budget may be lowered, never raised past ANALYSIS_LIMITS", async () => {
    expect(analyzer.budget).toEqual({ questionMs: 1_500, solverCallMs: 500 });
    expect(Object.isFrozen(ANALYSIS_LIMITS)).toBe(true);
    const wide = await createAnalyzer({ questionMs: 10 ** 9, solverCallMs: 10 ** 9 });
    expect(wide.budget).toEqual({ questionMs: ANALYSIS_LIMITS.questionMs, solverCallMs: ANALYSIS_LIMITS.solverCallMs });
    await wide.close();
  });

  it("a question past its budget answers `unknown` with the reason, and lint stays silent", async () => {
    // The factoring is within a second's reach of the solver now: a budget of a few milliseconds is past it.
    const hurried = await createAnalyzer({ questionMs: 20, solverCallMs: 5 });
    try {
      const r = await diffPolicies(hurried, "false", HARD);
      expect(r.relation).toBe("unknown");
      expect(r.reason).toMatch(/budget/);
      expect(await proveLint(hurried, HARD)).toEqual([]);
    } finally {
      await hurried.close();
    }
  });

  it('a witness the evaluator does not confirm is never shown: `lower(tool) == "A"` can hold only for an uninterpreted lower', async () => {
    const r = await diffPolicies(analyzer, "false", 'lower(tool) == "A"');
    expect(r).toEqual({
      relation: "unknown",
      widening: [],
      narrowing: [],
      reason: "the solver's candidate inputs were not confirmed by the evaluator (the policy uses a function the analysis approximates)",
    });
    const e = await nearestAllowed(analyzer, 'lower(tool) == "A"', {
      amount_minor: 0,
      currency: "",
      tool: "x",
      approver: null,
      agent: "",
      principal: "",
      audience: "",
      uses: 0,
      spent_minor: 0,
      hour_utc: 0,
      weekday_utc: "mon",
      args: {},
    });
    expect(e.kind).toBe("unknown");
  });

  it("a string literal above U+2FFFF, the solver's last character, is not analysed", async () => {
    const r = await diffPolicies(analyzer, 'tool == "\\ud880\\udc00"', "false");
    expect(r.relation).toBe("unknown");
    expect(r.reason).toContain("U+30000");
  });

  it("the last character the solver holds, U+2FFFF, is analysed", async () => {
    const r = await diffPolicies(analyzer, 'tool == "\\ud87f\\udfff"', "false");
    expect(r.relation).toBe("narrows");
    expect(r.narrowing[0]!.input.tool).toBe("\u{2ffff}");
  });
});
