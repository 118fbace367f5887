// Hostile policies for the bound tests: the families that once grew residuals and lint exponentially,
// and fast-check generators of approver-heavy chains and disjunctions that test every claim.
import fc from "fast-check";
import type { BinaryOperator, Expr } from "../src/ast.js";

/** `p0 = approver == "a0"`, `p_i = !(p_{i-1} || approver == "c_i") && approver != "b_i"`. */
export function negationFamily(n: number): string {
  let p = 'approver == "a0"';
  for (let i = 1; i <= n; i++) p = `!(${p} || approver == "c${i}") && approver != "b${i}"`;
  return p;
}

/** `p0 = approver == "a0"`, `p_i = (p_{i-1} && approver != "b_i") || approver == "c_i"`. */
export function alternationFamily(n: number): string {
  let p = 'approver == "a0"';
  for (let i = 1; i <= n; i++) p = `(${p} && approver != "b${i}") || approver == "c${i}"`;
  return p;
}

/** `(args.a0 == 0 && … && args.a{n-1} == n-1) || (args.b0 == 0 && … )`: two long conjunctions. */
export function twoConjunctions(n: number): string {
  const side = (tag: string): string => Array.from({ length: n }, (_, i) => `args.${tag}${i} == ${i}`).join(" && ");
  return `(${side("a")}) || (${side("b")})`;
}

const S = { start: 0, end: 0 };
const str = (value: string): Expr => ({ kind: "string", value, span: S });
const int = (value: number): Expr => ({ kind: "int", value, span: S });
const name = (n: string, path: string[] = []): Expr => ({ kind: "name", name: n, path, span: S });
const bin = (op: BinaryOperator, left: Expr, right: Expr): Expr => ({ kind: "binary", op, left, right, span: S });
const not = (operand: Expr): Expr => ({ kind: "unary", op: "!", operand, span: S });
const call = (callee: string, args: Expr[]): Expr => ({ kind: "call", callee, args, span: S, calleeSpan: S });

const constants = ["", "a", "b", "ab", "ba", "x@example.com"];
const constant = fc.constantFrom(...constants).map(str);

/** An approver atom with literal constants only, so that the residual states no value from the action. */
const approverAtom: fc.Arbitrary<Expr> = fc.oneof(
  constant.map((c) => bin("==", name("approver"), c)),
  constant.map((c) => bin("!=", name("approver"), c)),
  fc.array(constant, { maxLength: 3 }).map((cs) => bin("in", name("approver"), { kind: "list", elements: cs, span: S })),
  fc.tuple(fc.constantFrom("startsWith", "endsWith"), constant).map(([f, c]) => call(f, [name("approver"), c])),
  fc.constantFrom<BinaryOperator>("==", "!=").map((op) => bin(op, name("approver"), { kind: "null", span: S })),
);

/** Approver-free conditions, some of which fail on an action whose `args` lack or mistype a field. */
const freeCondition: fc.Arbitrary<Expr> = fc.oneof(
  fc.integer({ min: 0, max: 100_000 }).map((n) => bin("<", name("amount_minor"), int(n))),
  fc.constant(bin(">", name("args", ["n"]), int(3))),
  fc.constant(name("args", ["b"])),
  fc.constant(bin("==", name("args", ["s"]), str("a"))),
);

/** One step of a chain: wraps the condition so far with a new atom or approver-free condition. */
const step: fc.Arbitrary<(p: Expr) => Expr> = fc.oneof(
  approverAtom.map((a) => (p: Expr) => not(bin("||", p, a))),
  approverAtom.map((a) => (p: Expr) => bin("&&", p, a)),
  approverAtom.map((a) => (p: Expr) => bin("||", p, a)),
  approverAtom.map((a) => (p: Expr) => bin("&&", not(p), a)),
  approverAtom.map((a) => (p: Expr) => bin("||", a, not(p))),
  freeCondition.map((f) => (p: Expr) => bin("&&", p, f)),
  freeCondition.map((f) => (p: Expr) => bin("||", f, p)),
  freeCondition.map((f) => (p: Expr) => not(bin("&&", f, p))),
);

/** Long chains of nested negations and alternations over `approver`: the shape of both families. */
export const approverChains: fc.Arbitrary<Expr> = fc
  .tuple(approverAtom, fc.array(step, { minLength: 1, maxLength: 40 }))
  .map(([first, steps]) => steps.reduce((p, f) => f(p), first));

/** Comparisons lint reasons about, over names that are never null and `args` fields that may be anything. */
const lintAtom: fc.Arbitrary<Expr> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom<BinaryOperator>("<", "<=", ">", ">=", "=="),
      fc.constantFrom("amount_minor", "hour_utc", "uses"),
      fc.integer({ min: -2, max: 120 }),
    )
    .map(([op, n, k]) => bin(op, name(n), int(k))),
  fc
    .tuple(fc.constantFrom<BinaryOperator>("<", ">", "==", ">="), fc.integer({ min: -2, max: 6 }))
    .map(([op, k]) => bin(op, name("args", ["n"]), int(k))),
  fc
    .tuple(fc.constantFrom<BinaryOperator>(">=", "<"), fc.integer({ min: -1, max: 2 }))
    .map(([op, k]) => bin(op, call("size", [name("args", ["l"])]), int(k))),
  fc
    .tuple(fc.constantFrom<BinaryOperator>(">=", "<"), fc.integer({ min: -1, max: 2 }))
    .map(([op, k]) => bin(op, call("size", [name("tool")]), int(k))),
  fc.constantFrom<BinaryOperator>("==", "!=", "<=").map((op) => bin(op, name("args", ["n"]), name("args", ["n"]))),
  fc.constantFrom<BinaryOperator>("==", "!=").map((op) => bin(op, name("tool"), name("tool"))),
  fc.constantFrom(...constants, "mon", "funday").map((c) => bin("==", name("tool"), str(c))),
  fc.constantFrom("mon", "funday").map((c) => bin("!=", name("weekday_utc"), str(c))),
  fc
    .array(fc.constantFrom("a", "b", "mon"), { maxLength: 3 })
    .map((cs) => bin("in", name("tool"), { kind: "list", elements: cs.map(str), span: S })),
  fc
    .array(fc.constantFrom("a", "b"), { maxLength: 2 })
    .map((cs) => bin("in", name("args", ["s"]), { kind: "list", elements: cs.map(str), span: S })),
  fc.constant(name("args", ["b"])),
  fc.boolean().map((value): Expr => ({ kind: "bool", value, span: S })),
);

/** Disjunctions and conjunctions of `lintAtom`s: the shapes of lint's redundancy and contradiction claims. */
export const lintShapes: fc.Arbitrary<Expr> = fc.letrec<{ e: Expr }>((tie) => ({
  e: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    lintAtom,
    lintAtom,
    fc.array(tie("e"), { minLength: 2, maxLength: 5 }).map((xs) => xs.reduce((a, b) => bin("||", a, b))),
    fc.array(tie("e"), { minLength: 2, maxLength: 4 }).map((xs) => xs.reduce((a, b) => bin("&&", a, b))),
    tie("e").map(not),
  ),
})).e;
