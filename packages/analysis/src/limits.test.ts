// The analysis's limits at their edges: a budget that runs out answers `unknown`, a witness the evaluator does not confirm is never shown.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANALYSIS_LIMITS, createAnalyzer, diffPolicies, nearestAllowed, proveLint, type Analyzer } from "./index.js";

let analyzer: Analyzer;
beforeAll(async () => {
  analyzer = await createAnalyzer({ questionCpuMs: 1_500, solverCallCpuMs: 500 });
});
afterAll(async () => {
  await analyzer.close();
});

/** Factoring a product of two large primes: past any small budget for the solver's non-linear arithmetic. */
const HARD = "amount_minor > 1 && uses > 1 && amount_minor * uses == 2499997400000387";

describe("analysis limits", () => {
  it("a budget may be lowered, never raised past ANALYSIS_LIMITS", async () => {
    expect(analyzer.budget).toMatchObject({ questionCpuMs: 1_500, solverCallCpuMs: 500, questionWork: ANALYSIS_LIMITS.questionWork });
    expect(Object.isFrozen(ANALYSIS_LIMITS)).toBe(true);
    const huge = 10 ** 12;
    const wide = await createAnalyzer({
      questionWork: huge,
      solverCallWork: huge,
      questionCpuMs: huge,
      solverCallCpuMs: huge,
      questionMs: huge,
    });
    expect(wide.budget).toEqual({
      questionWork: ANALYSIS_LIMITS.questionWork,
      solverCallWork: ANALYSIS_LIMITS.solverCallWork,
      questionCpuMs: ANALYSIS_LIMITS.questionCpuMs,
      solverCallCpuMs: ANALYSIS_LIMITS.solverCallCpuMs,
      questionMs: ANALYSIS_LIMITS.questionMs,
    });
    await wide.close();
  });

  it("a question past its budget answers `unknown` with the reason, and lint stays silent", async () => {
    // The factoring is within a second's reach of the solver now: a budget of a few milliseconds is past it.
    const hurried = await createAnalyzer({ questionCpuMs: 20, solverCallCpuMs: 5 });
    try {
      const r = await diffPolicies(hurried, "false", HARD);
      expect(r.relation).toBe("unknown");
      expect(r.reason).toMatch(/budget/);
      expect(await proveLint(hurried, HARD)).toEqual([]);
    } finally {
      await hurried.close();
    }
  });

  it("work is counted in the solver's own units: a question past them is `unknown` however fast the machine, and answers the same each time", async () => {
    const frugal = await createAnalyzer({ solverCallWork: 50 });
    try {
      const answers: Awaited<ReturnType<typeof diffPolicies>>[] = [];
      for (let i = 0; i < 3; i++) answers.push(await diffPolicies(frugal, "false", HARD));
      expect(answers[0]!.relation).toBe("unknown");
      expect(answers[0]!.reason).toMatch(/budget \(its work ran out\)/);
      expect(answers[1]).toEqual(answers[0]);
      expect(answers[2]).toEqual(answers[0]);
    } finally {
      await frugal.close();
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
