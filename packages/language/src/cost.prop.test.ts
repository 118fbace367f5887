// Hostile property tests of the cost model (issue 33): whatever the policy and however large the
// action, the work units charged stay within the static estimate and the budgets, and an
// evaluation past its budget never allows. Work is counted in units, never in time.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { approverExprs, SAMPLE_ENVIRONMENT, typedExprs } from "../test-support/arbitraries.js";
import { hostileArgs } from "../test-support/hostile.js";
import type { Expr } from "./ast.js";
import { FUNCTION_COSTS } from "./cost.js";
import { formatExpr } from "./format.js";
import { LIMITS } from "./limits.js";
import { compilePolicy, costMeter, decideChain, type CompiledPolicy } from "./policy.js";

const params = (runs: number): fc.Parameters<unknown> => ({ numRuns: runs, seed: Number(process.env["FC_SEED"] ?? 20261126) });
const { approver: _none, ...undecided } = SAMPLE_ENVIRONMENT;

/** The largest single charge an action can cause: the dearest function of its longest strings. */
const LARGEST_CHARGE = Math.max(...Object.values(FUNCTION_COSTS).map((cost) => cost([LIMITS.argsBytesMax, LIMITS.argsBytesMax])));

const longString = fc.integer({ min: 0, max: 60_000 }).map((n) => "é".repeat(n));
const stringList = fc
  .integer({ min: 0, max: 1_024 })
  .chain((n) => fc.constant(Array.from({ length: n }, (_, i) => `user${i}@example.com`)));
const listOfLists = fc.integer({ min: 1, max: 1_024 }).map((n) => Array.from({ length: n }, () => Array.from({ length: 27 }, () => 0)));

/** Actions up to about 64 KiB of JSON, and the hostile ones (deep, cyclic, too long). */
const largeArgs: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  hostileArgs,
  fc.record({ s: longString, l: stringList, n: fc.integer(), b: fc.boolean() }),
  fc.record({ l: listOfLists, s: fc.constantFrom("a", "ab"), o: fc.record({ x: longString }) }),
  listOfLists.map((l) => ({ l, a: l, b: structuredClone(l), s: "x".repeat(30_000) })),
);

/** Policies the generators draw, and the shapes of the issue, joined by `&&` or `||`. */
const ISSUE_SHAPES = [
  "args.l == args.l",
  "args.a == args.b",
  "approver in args.l",
  "args.s in args.l",
  'lower(args.s) == "x"',
  "size(args.s) > 2",
  "startsWith(args.s, args.s)",
];
const policyTexts: fc.Arbitrary<string> = fc.oneof(
  typedExprs.b.map((e: Expr) => formatExpr(e)),
  approverExprs.map((e: Expr) => formatExpr(e)),
  fc
    .tuple(fc.array(fc.constantFrom(...ISSUE_SHAPES), { minLength: 1, maxLength: 120 }), fc.constantFrom(" && ", " || "))
    .map(([parts, op]) => parts.join(op)),
);

function stored(text: string): CompiledPolicy | undefined {
  const result = compilePolicy(text, { origin: "stored" });
  return result.ok ? result.policy : undefined;
}

describe("the cost model on hostile policies and actions", () => {
  it("a policy that is issued is never charged more than its static estimate, which is within the budget", () => {
    fc.assert(
      fc.property(
        policyTexts,
        largeArgs,
        fc.option(fc.constantFrom("user3@example.com", "é".repeat(40_000)), { nil: null }),
        (text, args, approver) => {
          const result = compilePolicy(text);
          if (!result.ok) return;
          const policy = result.policy;
          expect(Math.max(policy.cost.evaluation, policy.cost.decision)).toBeLessThanOrEqual(LIMITS.evaluationUnitsMax);
          const evaluated = costMeter();
          const value = policy.evaluate({ ...SAMPLE_ENVIRONMENT, approver, args }, evaluated);
          const decided = costMeter();
          const outcome = policy.decide({ ...undecided, args }, decided);
          // A cyclic or over-long value fails on its own limits first; any other action stays within the estimate.
          expect(evaluated.spent).toBeLessThanOrEqual(policy.cost.evaluation);
          expect(decided.spent).toBeLessThanOrEqual(policy.cost.decision);
          if (!value.ok) expect(value.error.code).not.toBe("cost-exceeded");
          if (outcome.outcome === "deny") expect(outcome.error?.code).not.toBe("cost-exceeded");
        },
      ),
      params(400),
    );
  });

  it("a stored policy (issued before the budget) is cut short at its budget, and then never allows", () => {
    fc.assert(
      fc.property(policyTexts, largeArgs, (text, args) => {
        const policy = stored(text);
        if (policy === undefined) return;
        const meter = costMeter();
        const value = policy.evaluate({ ...SAMPLE_ENVIRONMENT, approver: "user1@example.com", args }, meter);
        expect(meter.spent).toBeLessThanOrEqual(LIMITS.evaluationUnitsMax + LARGEST_CHARGE);
        if (meter.spent > LIMITS.evaluationUnitsMax) expect(value).toMatchObject({ ok: false, error: { code: "cost-exceeded" } });
        const decided = costMeter();
        const outcome = policy.decide({ ...undecided, args }, decided);
        expect(decided.spent).toBeLessThanOrEqual(LIMITS.evaluationUnitsMax + LARGEST_CHARGE);
        if (decided.spent > LIMITS.evaluationUnitsMax) expect(outcome).toMatchObject({ outcome: "deny", error: { code: "cost-exceeded" } });
      }),
      params(300),
    );
  });

  it("a chain of up to 64 links shares one decision budget: never more, and past it the chain is neither allowed nor gated", () => {
    fc.assert(
      fc.property(fc.array(policyTexts, { minLength: 1, maxLength: 64 }), largeArgs, (texts, args) => {
        const policies = texts.map(stored).filter((p): p is CompiledPolicy => p !== undefined);
        const meter = costMeter();
        const outcome = decideChain(
          policies.map((policy) => ({ policy, env: { ...undecided, args } })),
          meter,
        );
        expect(meter.spent).toBeLessThanOrEqual(LIMITS.decisionUnitsMax + LARGEST_CHARGE + Math.ceil(LIMITS.approverSearchStepsMax / 8));
        if (meter.spent > LIMITS.decisionUnitsMax) expect(outcome.outcome).toBe("cost-exceeded");
      }),
      params(60),
    );
  });
});
