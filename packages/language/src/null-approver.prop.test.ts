// A policy that compares `approver` with `null` alone and cannot fail is decided by two values,
// its own and its non-null tree's, instead of the residual pass (decision 0150). Held here to the
// residual pass on random policies (which may fail or charge, and then take it), actions and
// budgets: the same outcome, residual and error, and the same units charged.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { environment, typedExprs } from "../test-support/arbitraries.js";
import type { BinaryOperator, Expr } from "./ast.js";
import type { TypeTable } from "./check.js";
import { compileChecked, compileNonNullApprover } from "./compile.js";
import { formatExpr } from "./format.js";
import { compilePolicy, costMeter, decideLink, withResidualPass } from "./policy.js";

const params = (runs: number): fc.Parameters<unknown> => ({ numRuns: runs, seed: Number(process.env["FC_SEED"] ?? 20261129) });
const S = { start: 0, end: 0 };
const bin = (op: BinaryOperator, left: Expr, right: Expr): Expr => ({ kind: "binary", op, left, right, span: S });
const approver: Expr = { kind: "name", name: "approver", path: [], span: S };
const nil: Expr = { kind: "null", span: S };

/** `approver == null`, `null != approver`, …: the only atoms these policies have. */
const nullAtom = fc
  .tuple(fc.constantFrom<BinaryOperator>("==", "!="), fc.boolean())
  .map(([op, left]) => (left ? bin(op, approver, nil) : bin(op, nil, approver)));

/** Approver-free parts that charge units on a string from `args`, or fail on another type. */
const args = (key: string): Expr => ({ kind: "name", name: "args", path: [key], span: S });
const call = (callee: string, a: Expr): Expr => ({ kind: "call", callee, args: [a], span: S, calleeSpan: S });
const charging = fc.constantFrom(
  bin(">", call("size", args("s")), { kind: "int", value: 3, span: S }),
  bin("==", call("lower", args("s")), { kind: "string", value: "a", span: S }),
  bin(">", args("n"), { kind: "int", value: 3, span: S }),
);

/** Conditions over a null-compared `approver` and typed approver-free parts (which may fail or charge). */
const nullApproverExprs = fc.letrec<{ b: Expr }>((tie) => ({
  b: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    nullAtom,
    nullAtom,
    typedExprs.b,
    charging,
    tie("b").map((operand): Expr => ({ kind: "unary", op: "!", operand, span: S })),
    fc.tuple(fc.constantFrom<BinaryOperator>("&&", "||"), tie("b"), tie("b")).map(([op, l, r]) => bin(op, l, r)),
  ),
})).b;

/** The conditions, and a part that charges or fails before or after one of them. */
const policyArb = fc.oneof(
  nullApproverExprs,
  fc
    .tuple(charging, nullApproverExprs, fc.constantFrom<BinaryOperator>("&&", "||"), fc.boolean())
    .map(([part, rest, op, first]) => (first ? bin(op, part, rest) : bin(op, rest, part))),
);

/** Strings long enough that a function of `args.s` runs a small budget out. */
const actionArb = fc.tuple(environment, fc.constantFrom(0, 1, 200, 5_000)).map(([env, n]) => ({
  ...env,
  args: n === 0 ? env.args : { ...env.args, s: "a".repeat(n) },
}));

/** Budgets from none left at all to the whole decision's. */
const budgetArb = fc.oneof(fc.integer({ min: 0, max: 120 }), fc.constant(262_144));

/** Whether the policy is decided by its two trees: neither can fail. */
function bothSafe(policy: object): boolean {
  const { ast, types } = policy as { ast: Expr; types: TypeTable };
  return !compileNonNullApprover(ast, types).canFail && !compileChecked(ast, types).canFail;
}

describe("a policy that compares approver with null alone and cannot fail", () => {
  it("decides as the residual pass: outcome, residual, error and units charged", () => {
    const safe = { allow: 0, deny: 0, gated: 0, exceeded: 0 };
    fc.assert(
      fc.property(policyArb, actionArb, budgetArb, (expr, env, limit) => {
        const compiled = compilePolicy(formatExpr(expr), { origin: "stored" });
        if (!compiled.ok) return;
        const policy = compiled.policy;
        const general = withResidualPass(policy);
        const fast = costMeter(limit);
        const slow = costMeter(limit);
        const outcome = policy.decide(env, fast);
        expect(outcome).toEqual(general.decide(env, slow));
        expect(fast.spent).toBe(slow.spent);
        expect(decideLink(policy, env)).toEqual(decideLink(general, env));
        if (bothSafe(policy)) safe[outcome.outcome === "deny" ? (outcome.error === undefined ? "deny" : "exceeded") : outcome.outcome] += 1;
      }),
      params(3000),
    );
    // The two trees reached every outcome: allow, deny, gated, and their budget run out.
    expect(Math.min(safe.allow, safe.deny, safe.gated, safe.exceeded)).toBeGreaterThan(20);
  });
});
