// A policy's tree run as a table of tests (table.ts, decision 0151), held to the closures it
// replaces on random policies, actions and budgets: the same values, failures, units charged and
// readings of `approver`; and a policy's evaluate, decide and decideLink with tables and the one
// walk of both approvers held to the same policy run by closures and the residual pass.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { approverEnvironment, environment, typedExprs } from "../test-support/arbitraries.js";
import { type BinaryOperator, type Expr, mentionsApprover } from "./ast.js";
import { checkPolicy } from "./check.js";
import { compileChecked, compileLogicTable, compileNonNullApprover } from "./compile.js";
import { formatExpr } from "./format.js";
import { parsePolicy } from "./parse.js";
import { compilePolicy, costMeter, decideLink, withClosures, withResidualPass } from "./policy.js";
import { runTable } from "./table.js";
import { type Evaluated, Failure, type Meter, NEVER_CHARGED } from "./values.js";

const params = (runs: number): fc.Parameters<unknown> => ({ numRuns: runs, seed: Number(process.env["FC_SEED"] ?? 20261129) });
const S = { start: 0, end: 0 };
const bin = (op: BinaryOperator, left: Expr, right: Expr): Expr => ({ kind: "binary", op, left, right, span: S });
const name = (n: string): Expr => ({ kind: "name", name: n, path: [], span: S });
const int = (value: number): Expr => ({ kind: "int", value, span: S });
const str = (value: string): Expr => ({ kind: "string", value, span: S });
const nil: Expr = { kind: "null", span: S };
const list = (elements: Expr[]): Expr => ({ kind: "list", elements, span: S });
const strings = ["", "a", "ab", "EUR", "mon", "pay", "b"];

/** Every string name a test reads: a name read as another would give another value for some action. */
const STRING_NAMES = ["tool", "currency", "weekday_utc", "agent", "principal", "audience", "approver"];

/** A name compared with a literal, either side, by every operator a test has: the table's own rows. */
const testExpr: fc.Arbitrary<Expr> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom<BinaryOperator>("<", "<=", ">", ">=", "==", "!="),
      fc.constantFrom("amount_minor", "uses", "spent_minor", "hour_utc"),
      fc.oneof(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 100_000 })),
      fc.boolean(),
    )
    .map(([op, n, k, flip]) => (flip ? bin(op, int(k), name(n)) : bin(op, name(n), int(k)))),
  fc
    .tuple(fc.constantFrom<BinaryOperator>("==", "!="), fc.constantFrom(...STRING_NAMES), fc.boolean())
    .chain(([op, n, flip]) => fc.constantFrom(...strings.map(str), nil).map((k) => (flip ? bin(op, k, name(n)) : bin(op, name(n), k)))),
  fc
    .tuple(fc.constantFrom(...STRING_NAMES), fc.array(fc.constantFrom(...strings), { maxLength: 3 }))
    .map(([n, xs]) => bin("in", name(n), list(xs.map(str)))),
  fc
    .tuple(fc.constantFrom("uses", "hour_utc"), fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 3 }))
    .map(([n, xs]) => bin("in", name(n), list(xs.map(int)))),
  fc
    .tuple(
      fc.constantFrom("startsWith", "endsWith"),
      fc.constantFrom(...STRING_NAMES.filter((n) => n !== "approver")),
      fc.constantFrom(...strings),
    )
    .map(([callee, n, k]): Expr => ({ kind: "call", callee, args: [name(n), str(k)], span: S, calleeSpan: S })),
);

/** Logical trees of tests and of the typed generator's conditions (which may fail, charge or not be conditions). */
const tableExprs = fc.letrec<{ b: Expr }>((tie) => ({
  b: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    testExpr,
    testExpr,
    testExpr,
    typedExprs.b,
    fc.constant(name("args")).map((): Expr => ({ kind: "name", name: "args", path: ["b"], span: S })),
    tie("b").map((operand): Expr => ({ kind: "unary", op: "!", operand, span: S })),
    fc.tuple(fc.constantFrom<BinaryOperator>("&&", "||"), tie("b"), tie("b")).map(([op, l, r]) => bin(op, l, r)),
  ),
})).b;

/** Trees of tests in which `approver` is compared with null alone: decided by one walk of both approvers. */
const nullApproverExprs = fc.letrec<{ b: Expr }>((tie) => ({
  b: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc
      .tuple(fc.constantFrom<BinaryOperator>("==", "!="), fc.boolean())
      .map(([op, flip]) => (flip ? bin(op, nil, name("approver")) : bin(op, name("approver"), nil))),
    testExpr.filter((e) => !mentionsApprover(e)),
    testExpr.filter((e) => !mentionsApprover(e)),
    tie("b").map((operand): Expr => ({ kind: "unary", op: "!", operand, span: S })),
    fc.tuple(fc.constantFrom<BinaryOperator>("&&", "||"), tie("b"), tie("b")).map(([op, l, r]) => bin(op, l, r)),
  ),
})).b;

/** Actions whose names meet the tests' literals (ints of 0 to 12 as often as not), and an approver, a null one or none. */
const actionArb = fc
  .tuple(
    environment,
    fc.constantFrom("pay", "ab", "a", "b"),
    fc.constantFrom<string | null | undefined>("a", "ab", null, undefined),
    fc.tuple(fc.constantFrom("a", "ab", "b", "pay"), fc.constantFrom("a", "ab", "b", "EUR"), fc.constantFrom("a", "ab", "", "mon")),
    fc.option(fc.tuple(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 12 }))),
  )
  .map(([env, tool, approver, [agent, principal, audience], small]) => {
    const ints = small === null ? {} : { amount_minor: small[0], spent_minor: small[1], uses: small[2] };
    const names = { ...env, ...ints, tool, agent, principal, audience };
    return approver === undefined ? names : { ...names, approver };
  });

const budgetArb = fc.oneof(fc.integer({ min: 0, max: 120 }), fc.constant(262_144));

const meterOf = (limit: number): Meter => ({ spent: 0, limit, urls: undefined, approverRead: false });

/** A value or failure as the tests compare it: a failure by its diagnostic. */
const seen = (v: Evaluated): unknown => (v instanceof Failure ? { failure: v.diagnostic } : { value: v });

describe("a policy's tree as a table of tests", () => {
  it("gives the closures' value or failure, charges and reads of approver, and can fail where they can", () => {
    const rows = { value: 0, failure: 0, charged: 0, approverRead: 0 };
    fc.assert(
      fc.property(tableExprs, actionArb, budgetArb, fc.boolean(), (expr, env, limit, nonNull) => {
        const parsed = parsePolicy(formatExpr(expr), { skipTextLimit: true });
        if (!parsed.ok) return;
        const { types, diagnostics } = checkPolicy(parsed.ast);
        if (diagnostics.length > 0) return;
        const table = compileLogicTable(parsed.ast, types, { nonNull, rows: true });
        const closures = nonNull ? compileNonNullApprover(parsed.ast, types) : compileChecked(parsed.ast, types);
        expect(table.canFail).toBe(closures.canFail);
        const a = meterOf(limit);
        const b = meterOf(limit);
        const v = runTable(table.table, env, a);
        expect(seen(v)).toEqual(seen(closures.fn(env, b)));
        expect({ spent: a.spent, approverRead: a.approverRead }).toEqual({ spent: b.spent, approverRead: b.approverRead });
        if (!table.canFail) expect(seen(runTable(table.table, env, NEVER_CHARGED))).toEqual(seen(v));
        rows[v instanceof Failure ? "failure" : "value"] += 1;
        if (a.spent > 0) rows.charged += 1;
        if (a.approverRead) rows.approverRead += 1;
      }),
      params(4000),
    );
    expect(Math.min(rows.value, rows.failure, rows.charged, rows.approverRead)).toBeGreaterThan(50);
  });

  it("evaluates and decides as the closures and the residual pass: outcome, residual, error and units charged", () => {
    const walked = { allow: 0, deny: 0, gated: 0, exceeded: 0 };
    fc.assert(
      fc.property(fc.oneof(tableExprs, nullApproverExprs), fc.oneof(actionArb, approverEnvironment), budgetArb, (expr, env, limit) => {
        const compiled = compilePolicy(formatExpr(expr), { origin: "stored" });
        if (!compiled.ok) return;
        const policy = compiled.policy;
        const general = withResidualPass(withClosures(policy));
        const [fast, slow] = [costMeter(limit), costMeter(limit)];
        const outcome = policy.decide(env, fast);
        expect(outcome).toEqual(general.decide(env, slow));
        expect(fast.spent).toBe(slow.spent);
        expect(decideLink(policy, env)).toEqual(decideLink(general, env));
        const approved = { ...env, approver: "approver" in env && typeof env.approver === "string" ? env.approver : "a" };
        const [one, other] = [costMeter(limit), costMeter(limit)];
        expect(policy.evaluate(approved, one)).toEqual(general.evaluate(approved, other));
        expect(one.spent).toBe(other.spent);
        if (walksBoth(policy))
          walked[outcome.outcome === "deny" ? (outcome.error === undefined ? "deny" : "exceeded") : outcome.outcome] += 1;
      }),
      params(4000),
    );
    // The one walk of both approvers reached every outcome.
    expect(Math.min(walked.allow, walked.deny, walked.gated, walked.exceeded)).toBeGreaterThan(20);
  });
});

/** Whether `policy`, decided once, decides by one walk of its table (policy.ts `decideSafe` with no `nonNull` tree). */
function walksBoth(policy: object): boolean {
  const p = policy as { twoValues: boolean; nonNull: unknown };
  return p.twoValues && p.nonNull === null;
}
