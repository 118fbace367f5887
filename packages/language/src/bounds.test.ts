// The bounds of partial evaluation and lint on the policies that once broke them, counted in sizes and steps.
import { describe, expect, it } from "vitest";
import { alternationFamily, negationFamily, twoConjunctions } from "../test-support/hostile-bounds.js";
import { approverCost } from "./approver-cost.js";
import { checkPolicy } from "./check.js";
import { lintWithSteps } from "./lint.js";
import { LIMITS, utf8Length } from "./limits.js";
import { parsePolicy } from "./parse.js";
import { and, formulaSize, search, unsatisfiable, type Formula } from "./residual.js";
import { SAMPLE_ENVIRONMENT } from "../test-support/arbitraries.js";
import { compiled } from "../test-support/fixtures.js";
import { compilePolicy, type CompiledPolicy } from "./policy.js";

const env = SAMPLE_ENVIRONMENT;

/** The string literals of `text`, a fresh string, and null: the approvers a brute-force oracle tries. */
function approversOf(text: string): (string | null)[] {
  const literals = [...text.matchAll(/"([^"\\]*)"/g)].map((m) => m[1]!);
  return [null, "\ue123fresh", ...new Set(literals)];
}

/** Checks that `residual` holds for exactly the approvers (of `approversOf`) for which `policy` holds. */
function expectAgreement(policy: CompiledPolicy, residual: string): void {
  const r = compiled(residual);
  for (const approver of approversOf(policy.text)) {
    if (approver === null) continue;
    const whole = policy.evaluate({ ...env, approver });
    const part = r.evaluate({ ...env, approver });
    expect(part.ok && part.value, `${approver}`).toBe(whole.ok && whole.value);
  }
}

describe("finding 1: residuals of the exponential families", () => {
  /** The most levels that compile: the nesting limit (64) comes before the size limit. */
  const largest = (family: (n: number) => string): number => {
    let n = 1;
    while (compilePolicy(family(n + 1)).ok) n++;
    return n;
  };

  for (const [label, family] of [
    ["!(p || approver == c) && approver != b", negationFamily],
    ["(p && approver != b) || approver == c", alternationFamily],
  ] as const) {
    for (const n of [14, 16, 18, largest(family)]) {
      it(`${label}, ${n} levels: gated with a residual no longer than the policy, agreeing with it on every literal approver`, () => {
        const text = family(n);
        const policy = compiled(text);
        const parsed = parsePolicy(text);
        if (!parsed.ok) throw new Error(JSON.stringify(parsed.diagnostics));
        expect(approverCost(parsed.ast).steps).toBeLessThanOrEqual(LIMITS.approverSearchStepsMax);
        const decision = policy.decide(env);
        expect(decision.outcome).toBe("gated");
        if (decision.outcome !== "gated") return;
        // Once 6.1 million characters at 14 levels; the bound is the policy's own canonical text.
        expect(utf8Length(decision.residual)).toBeLessThanOrEqual(utf8Length(policy.text));
        expectAgreement(policy, decision.residual);
      });
    }
  }

  it("a failing approver-free part stays in the residual as it is written, so the residual keeps its meaning without growing", () => {
    const text = 'approver != "" && args.n > 3 || "" == approver || approver == ""';
    const policy = compiled(text);
    const decision = policy.decide(env);
    expect(decision).toEqual({ outcome: "gated", residual: 'approver != "" && args.n > 3 || approver == "" || approver == ""' });
    expectAgreement(policy, (decision as { residual: string }).residual);
  });

  it("a failing part states the values of the names it read, so it fails again in another link's environment (no fail-open in a chain)", () => {
    const policy = compiled('approver == "a" || spent_minor * 1000000000 >= 0');
    const decision = policy.decide({ ...env, spent_minor: 9_007_199_254_740 });
    expect(decision).toEqual({ outcome: "gated", residual: 'approver == "a" || 9007199254740 * 1000000000 >= 0' });
    // Decided for a delegation chain, the residual meets the leaf's environment, where `spent_minor` is 0.
    const residual = compiled((decision as { residual: string }).residual);
    expect(residual.evaluate({ ...env, spent_minor: 0, approver: "b" })).toMatchObject({ ok: false, error: { code: "integer-overflow" } });
    expect(policy.evaluate({ ...env, spent_minor: 0, approver: "b" })).toEqual({ ok: true, value: true });
  });

  it("a list from `args` that fails part way keeps its test as written: true for the approvers before the failure", () => {
    const policy = compiled('approver in args.l || approver == "b"');
    const decision = policy.decide({ ...env, args: { l: ["a", 3] } });
    expect(decision).toEqual({ outcome: "gated", residual: 'approver in args.l || approver == "b"' });
    expect(policy.evaluate({ ...env, args: { l: ["a", 3] }, approver: "a" })).toEqual({ ok: true, value: true });
    const negated = compiled("!(approver in args.l) && amount_minor > 0");
    expect(negated.decide({ ...env, args: { l: ["a", 3] } })).toMatchObject({ outcome: "deny", error: { code: "runtime-type" } });
  });
});

describe("the approver search limits, at their edges", () => {
  const cost = (text: string) => {
    const parsed = parsePolicy(text, { skipTextLimit: true });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.diagnostics));
    expect(checkPolicy(parsed.ast).diagnostics).toEqual([]);
    return approverCost(parsed.ast);
  };
  const orChain = (parts: string[]): string => parts.join(" || ");
  const literalList = (n: number): string => `approver in [${Array.from({ length: n }, (_, i) => `"${i}"`).join(", ")}]`;
  const atoms = (f: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${f}(approver, "${f[0]}${i}")`);
  const lists = ["approver in args.a", "approver in args.b", "approver in args.c"];
  const eqs = (n: number): string[] => Array.from({ length: n }, (_, i) => `approver == "e${i}"`);

  it(`${LIMITS.approverCandidatesMax} candidates and ${LIMITS.approverSearchStepsMax} steps are within the limits, one more candidate is not`, () => {
    const at = [...lists, literalList(953), ...eqs(7), ...atoms("startsWith", 7), ...atoms("endsWith", 7)];
    expect(cost(orChain(at))).toEqual({ candidates: 4096, residualNodes: 64, steps: 262_144 });
    const past = cost(orChain([...lists, literalList(954), ...eqs(7), ...atoms("startsWith", 7), ...atoms("endsWith", 7)]));
    expect(past.candidates).toBe(LIMITS.approverCandidatesMax + 1);
  });

  it("the step limit refuses a policy under the candidate limit, and the refusal names the code and the whole policy", () => {
    const under = orChain([...atoms("startsWith", 40), ...atoms("endsWith", 39)]);
    const over = orChain([...atoms("startsWith", 40), ...atoms("endsWith", 39), 'approver == "x"']);
    expect(cost(under)).toMatchObject({ candidates: 41 * 40, steps: 41 * 40 * 157 });
    expect(cost(under).steps).toBeLessThanOrEqual(LIMITS.approverSearchStepsMax);
    expect(cost(over).candidates).toBeLessThanOrEqual(LIMITS.approverCandidatesMax);
    expect(cost(over).steps).toBeGreaterThan(LIMITS.approverSearchStepsMax);
    expect(compilePolicy(under).ok).toBe(true);
    const refused = compilePolicy(over);
    expect(refused.ok).toBe(false);
    if (!refused.ok)
      expect(refused.diagnostics.map((d) => [d.code, d.span.start, d.span.end])).toEqual([["approver-search-too-large", 0, over.length]]);
  });
});

describe("the search at decision time", () => {
  it("stops at LIMITS.approverSearchStepsMax tests on a residual no compiled policy has (a conjoined chain) and then claims nothing", () => {
    const atoms: Formula[] = Array.from({ length: 3000 }, (_, i) => ({ k: "eq", value: `e${i}` }));
    const nobody = atoms.reduce((a, b) => and(a, b));
    const found = search(nobody);
    expect(found.tried).toBe(Math.floor(LIMITS.approverSearchStepsMax / formulaSize(nobody)));
    expect(found).toMatchObject({ witness: undefined, none: false, everyone: false });
    expect(unsatisfiable(nobody)).toBe(false);
  });
});

describe("finding 2: lint's checks are bounded by a step budget", () => {
  const lint = (text: string, budget?: number) => {
    const parsed = parsePolicy(text);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.diagnostics));
    return lintWithSteps(parsed.ast, checkPolicy(parsed.ast).types, budget);
  };

  it("13 + 13 conjuncts: a few hundred steps (once about 52 s of implication tests), and no warning", () => {
    const text = twoConjunctions(13);
    expect(utf8Length(text)).toBe(428);
    const result = lint(text);
    expect(result.warnings).toEqual([]);
    expect(result.exhausted).toBe(false);
    expect(result.steps).toBeLessThan(2_000);
  });

  it("the largest two-conjunction policy under 4 KiB stays within the budget", () => {
    let n = 13;
    while (utf8Length(twoConjunctions(n + 1)) <= LIMITS.policyBytesMax) n++;
    const result = lint(twoConjunctions(n));
    expect(result.steps).toBeLessThanOrEqual(LIMITS.lintStepsMax);
  });

  it("LIMITS.lintStepsMax at its edge: a policy that needs exactly the budget is linted in full, one step more and the checks go silent", () => {
    const text = Array.from({ length: 200 }, (_, i) => `tool == "t${i}"`).join(" || ");
    const needed = lint(text, Number.MAX_SAFE_INTEGER);
    expect(needed.exhausted).toBe(false);
    expect(needed.steps).toBeGreaterThan(LIMITS.lintStepsMax);
    const byDefault = lint(text);
    expect(byDefault).toMatchObject({ exhausted: true });
    expect(byDefault.steps).toBeLessThanOrEqual(LIMITS.lintStepsMax);
    expect(lint(text, needed.steps)).toMatchObject({ exhausted: false, warnings: needed.warnings });
    expect(lint(text, needed.steps - 1).exhausted).toBe(true);
  });

  it("when the budget runs out the checks stay silent: no claim they did not prove, and no step past the budget", () => {
    const text = Array.from({ length: 120 }, (_, i) => `amount_minor < ${1000 - i}`).join(" || ");
    const full = lint(text);
    expect(full.warnings.filter((w) => w.code === "redundant-disjunct").length).toBe(119);
    const cut = lint(text, 50);
    expect(cut.exhausted).toBe(true);
    expect(cut.steps).toBeLessThanOrEqual(50);
    for (const w of cut.warnings) expect(full.warnings).toContainEqual(w);
    expect(cut.warnings.length).toBeLessThan(full.warnings.length);
  });
});

describe("finding 6: a warning is true of every action, under the null and error rules", () => {
  const codes = (text: string): string[] => {
    const result = compilePolicy(text);
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    return result.warnings.map((w) => w.code);
  };

  it("a disjunct before one that may fail is not redundant: with `args.n` absent, removing it turns allow into deny", () => {
    const text = "amount_minor < 50 || args.n > 3 || amount_minor < 100";
    expect(codes(text)).toEqual([]);
    const policy = compiled(text);
    const without = compiled("args.n > 3 || amount_minor < 100");
    expect(policy.evaluate({ ...env, amount_minor: 30, approver: null })).toEqual({ ok: true, value: true });
    expect(without.evaluate({ ...env, amount_minor: 30, approver: null }).ok).toBe(false);
    // With nothing that can fail between them, the claim stands.
    expect(codes("amount_minor < 50 || uses > 3 || amount_minor < 100")).toEqual(["redundant-disjunct"]);
  });

  it("`args.x == args.x` and `size(args.l) >= 0` are not called always true: both fail on some actions", () => {
    expect(codes("args.x == args.x")).toEqual([]);
    expect(codes("size(args.l) >= 0")).toEqual([]);
    expect(compiled("args.x == args.x").evaluate({ ...env, args: { x: { a: 1 } }, approver: null }).ok).toBe(false);
    expect(compiled("size(args.l) >= 0").evaluate({ ...env, approver: null }).ok).toBe(false);
    // On names that are never null, never mistyped, the claims stand.
    expect(codes("tool == tool")).toEqual(["constant-condition"]);
    expect(codes("size(tool) >= 0")).toEqual(["constant-condition"]);
  });

  it("a disjunct that never holds but may fail is not called redundant", () => {
    expect(codes('size(args.l) < 0 || tool == "a"')).toEqual(["impossible-comparison"]);
    expect(codes('uses < 0 || tool == "a"')).toEqual(["impossible-comparison", "redundant-disjunct"]);
  });

  it("`a || b` is implied through `b` only when `a` cannot fail", () => {
    expect(codes('uses < 3 && tool == "a" || (args.n > 3 || uses < 5) && tool == "a"')).toEqual([]);
    expect(codes('uses < 3 && tool == "a" || (hour_utc > 5 || uses < 5) && tool == "a"')).toEqual(["redundant-disjunct"]);
  });
});
