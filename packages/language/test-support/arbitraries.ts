// fast-check generators of policy trees and environments for the property tests.
import fc from "fast-check";
import type { BinaryOperator, Expr } from "../src/ast.js";
import type { PolicyEnvironment } from "../src/environment.js";

/** One fixed environment, for tests that need a plausible decision context and nothing more. */
export const SAMPLE_ENVIRONMENT: PolicyEnvironment = Object.freeze({
  amount_minor: 20000,
  currency: "EUR",
  tool: "payments.transfer",
  approver: null,
  agent: "agent-7",
  principal: "alice@example.com",
  audience: "payments",
  uses: 3,
  spent_minor: 0,
  hour_utc: 14,
  weekday_utc: "wed",
  args: {},
});

const S = { start: 0, end: 0 };
const int = (value: number): Expr => ({ kind: "int", value, span: S });
const str = (value: string): Expr => ({ kind: "string", value, span: S });
const name = (n: string, path: string[] = []): Expr => ({ kind: "name", name: n, path, span: S });
const bin = (op: BinaryOperator, left: Expr, right: Expr): Expr => ({ kind: "binary", op, left, right, span: S });
const call = (callee: string, args: Expr[]): Expr => ({ kind: "call", callee, args, span: S, calleeSpan: S });
const not = (operand: Expr): Expr => ({ kind: "unary", op: "!", operand, span: S });
const neg = (operand: Expr): Expr => ({ kind: "unary", op: "-", operand, span: S });
const list = (elements: Expr[]): Expr => ({ kind: "list", elements, span: S });

const keywords = new Set(["true", "false", "null", "in"]);
const identifier = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/).filter((s) => !keywords.has(s));
const operators: BinaryOperator[] = ["||", "&&", "==", "!=", "<", "<=", ">", ">=", "in", "+", "-", "*"];

/** Any tree the grammar can express, well typed or not (for the formatter). */
export const anyExpr: fc.Arbitrary<Expr> = fc.letrec<{ e: Expr }>((tie) => ({
  e: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.nat({ max: Number.MAX_SAFE_INTEGER }).map(int),
    fc.string({ unit: "binary", maxLength: 6 }).map(str),
    fc.boolean().map((value): Expr => ({ kind: "bool", value, span: S })),
    fc.constant<Expr>({ kind: "null", span: S }),
    fc.tuple(identifier, fc.array(identifier, { maxLength: 2 })).map(([n, p]) => name(n, p)),
    fc.tuple(identifier, fc.array(tie("e"), { maxLength: 3 })).map(([c, a]) => call(c, a)),
    fc.array(tie("e"), { maxLength: 3 }).map(list),
    tie("e").map(not),
    tie("e").map(neg),
    fc.tuple(fc.constantFrom(...operators), tie("e"), tie("e")).map(([op, l, r]) => bin(op, l, r)),
  ),
})).e;

const strings = ["", "a", "b", "ab", "ba", "aa", "A", "é", "😀", "mon"];

/** Well-typed-leaning trees over the whole environment, with `args` values of any type (for evaluation). */
export const typedExprs = fc.letrec<{ b: Expr; i: Expr; s: Expr; l: Expr }>((tie) => ({
  b: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.boolean().map((value): Expr => ({ kind: "bool", value, span: S })),
    fc.constant(name("args", ["b"])),
    fc.tuple(fc.constantFrom<BinaryOperator>("<", "<=", ">", ">=", "==", "!="), tie("i"), tie("i")).map(([op, l, r]) => bin(op, l, r)),
    fc.tuple(fc.constantFrom<BinaryOperator>("<", "<=", ">", ">=", "==", "!="), tie("s"), tie("s")).map(([op, l, r]) => bin(op, l, r)),
    fc.tuple(tie("s"), tie("l")).map(([l, r]) => bin("in", l, r)),
    fc.tuple(tie("i"), tie("l")).map(([l, r]) => bin("in", l, r)),
    fc.tuple(fc.constantFrom("startsWith", "endsWith"), tie("s"), tie("s")).map(([c, a, b]) => call(c, [a, b])),
    fc
      .tuple(
        fc.constantFrom(name("args", ["n"]), name("args", ["s"]), name("args", ["o", "x"])),
        fc.constantFrom<Expr>({ kind: "null", span: S }, str("a"), int(1)),
      )
      .map(([l, r]) => bin("==", l, r)),
    tie("b").map(not),
    fc.tuple(fc.constantFrom<BinaryOperator>("&&", "||", "==", "!="), tie("b"), tie("b")).map(([op, l, r]) => bin(op, l, r)),
  ),
  i: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(fc.integer({ min: 0, max: 20 }), fc.constantFrom(Number.MAX_SAFE_INTEGER, 2 ** 40)).map(int),
    fc.constantFrom(
      name("amount_minor"),
      name("uses"),
      name("spent_minor"),
      name("hour_utc"),
      name("args", ["n"]),
      name("args", ["o", "x"]),
    ),
    tie("i").map(neg),
    fc.tuple(fc.constantFrom<BinaryOperator>("+", "-", "*"), tie("i"), tie("i")).map(([op, l, r]) => bin(op, l, r)),
    fc.oneof(tie("s"), tie("l")).map((a) => call("size", [a])),
  ),
  s: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(...strings).map(str),
    fc.constantFrom(name("tool"), name("weekday_utc"), name("args", ["s"]), name("args", ["n"])),
    tie("s").map((a) => call("lower", [a])),
  ),
  l: fc.oneof(
    fc.array(fc.constantFrom(...strings).map(str), { maxLength: 3 }).map(list),
    fc.array(fc.integer({ min: 0, max: 5 }).map(int), { minLength: 1, maxLength: 3 }).map(list),
    fc.constant(name("args", ["l"])),
  ),
}));

const jsonValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -3, max: 20 }),
  fc.constantFrom(...strings),
  fc.boolean(),
  fc.constant(null),
  fc.constant(1.5),
  fc.constant(Number.MAX_SAFE_INTEGER),
  fc.array(fc.oneof(fc.constantFrom(...strings), fc.integer({ min: 0, max: 5 }), fc.constant(null)), { maxLength: 3 }),
  fc.constant({ x: 1 }),
);

/** An environment: the fixed names plus `args` whose fields may be absent or of any type. */
export const environment = fc.record({
  amount_minor: fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.constant(Number.MAX_SAFE_INTEGER)),
  currency: fc.constantFrom("EUR", "USD"),
  tool: fc.constantFrom(...strings),
  agent: fc.constant("agent-1"),
  principal: fc.constant("alice"),
  audience: fc.constant("payments"),
  uses: fc.integer({ min: 0, max: 10 }),
  spent_minor: fc.integer({ min: 0, max: 100_000 }),
  hour_utc: fc.integer({ min: 0, max: 23 }),
  weekday_utc: fc.constantFrom("mon", "tue", "wed", "thu", "fri", "sat", "sun"),
  args: fc.record(
    { n: jsonValue, s: jsonValue, b: fc.oneof(fc.boolean(), jsonValue), l: jsonValue, o: fc.oneof(jsonValue, fc.record({ x: jsonValue })) },
    { requiredKeys: [] },
  ),
});

/** Constants of approver atoms: short strings over {a, b}, so a universe of strings over {a, b, z} up to length 5 is exhaustive. */
const approverConstants = ["", "a", "b", "ab", "ba", "aa"];

/** Every string over {a, b, z} of length 0 to 5: a finite universe of approvers for the oracle. */
export const approverUniverse: readonly string[] = (() => {
  const out: string[] = [""];
  let layer = [""];
  for (let n = 1; n <= 5; n++) {
    layer = layer.flatMap((s) => ["a", "b", "z"].map((c) => s + c));
    out.push(...layer);
  }
  return out;
})();

/** Conditions over `approver` mixed with approver-free conditions (for partial evaluation). */
export const approverExprs = fc.letrec<{ b: Expr }>((tie) => {
  const c = fc.constantFrom(...approverConstants).map(str);
  const atom = fc.oneof(
    c.map((x) => bin("==", name("approver"), x)),
    c.map((x) => bin("!=", name("approver"), x)),
    c.map((x) => bin("==", x, name("approver"))),
    fc.constantFrom<BinaryOperator>("==", "!=").map((op) => bin(op, name("approver"), { kind: "null", span: S })),
    fc.array(c, { maxLength: 3 }).map((xs) => bin("in", name("approver"), list(xs))),
    fc.constant(bin("in", name("approver"), name("args", ["l"]))),
    fc.constant(bin("==", name("approver"), name("args", ["s"]))),
    fc.tuple(fc.constantFrom("startsWith", "endsWith"), c).map(([f, x]) => call(f, [name("approver"), x])),
    fc.constant(call("startsWith", [name("approver"), name("args", ["s"])])),
  );
  const free = fc.oneof(
    fc.boolean().map((value): Expr => ({ kind: "bool", value, span: S })),
    fc.integer({ min: 0, max: 100_000 }).map((n) => bin("<", name("amount_minor"), int(n))),
    fc.constant(bin(">", name("args", ["n"]), int(3))),
    fc.constant(name("args", ["b"])),
  );
  return {
    b: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      atom,
      atom,
      free,
      tie("b").map(not),
      fc.tuple(fc.constantFrom<BinaryOperator>("&&", "||"), tie("b"), tie("b")).map(([op, l, r]) => bin(op, l, r)),
    ),
  };
}).b;

const approverJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...approverConstants),
  fc.constant(null),
  fc.integer({ min: 0, max: 5 }),
  fc.boolean(),
);

/** Environments for partial evaluation: `args.s`, `args.l`, `args.n`, `args.b` drawn to matter. */
export const approverEnvironment = fc.record({
  amount_minor: fc.integer({ min: 0, max: 100_000 }),
  currency: fc.constant("EUR"),
  tool: fc.constant("pay"),
  agent: fc.constant("agent-1"),
  principal: fc.constant("alice"),
  audience: fc.constant("payments"),
  uses: fc.constant(0),
  spent_minor: fc.constant(0),
  hour_utc: fc.constant(12),
  weekday_utc: fc.constant("mon" as const),
  args: fc.record(
    { s: approverJson, l: fc.oneof(fc.array(approverJson, { maxLength: 3 }), approverJson), n: approverJson, b: approverJson },
    { requiredKeys: [] },
  ),
});
