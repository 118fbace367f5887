// Partial evaluation over `approver`: the condition under which a non-null approver satisfies the
// policy, as a formula over approver atoms, and the exact decision of whether one exists.
import type { Span } from "@agent-authority/grammar";
import type { Expr, ExprOf } from "./ast.js";
import { mentionsApprover } from "./ast.js";
import type { Diagnostic } from "./diagnostic.js";
import type { EvalEnv, Evaluator } from "./compile.js";
import { formatExpr } from "./format.js";
import { LIMITS } from "./limits.js";
import { describe, FAIL, fail, failure, type Value } from "./values.js";

/** A boolean formula over a non-null `approver`; atoms hold run-time constants. */
export type Formula =
  | boolean
  | { readonly k: "eq"; readonly value: string }
  | { readonly k: "in"; readonly values: readonly string[]; readonly lookup?: ReadonlySet<string> }
  | { readonly k: "startsWith"; readonly value: string }
  | { readonly k: "endsWith"; readonly value: string }
  | { readonly k: "not"; readonly a: Formula }
  | { readonly k: "and"; readonly a: Formula; readonly b: Formula }
  | { readonly k: "or"; readonly a: Formula; readonly b: Formula };

export function not(a: Formula): Formula {
  if (typeof a === "boolean") return !a;
  if (a.k === "not") return a.a;
  return { k: "not", a };
}
export function and(a: Formula, b: Formula): Formula {
  if (a === false || b === false) return false;
  if (a === true) return b;
  if (b === true) return a;
  return { k: "and", a, b };
}
export function or(a: Formula, b: Formula): Formula {
  if (a === true || b === true) return true;
  if (a === false) return b;
  if (b === false) return a;
  // a || (!a && y) is a || y: the shape short-circuit `||` and `&&` produce where nothing fails.
  if (typeof b !== "boolean" && b.k === "and" && sameFormula(b.a, not(a))) return or(a, b.b);
  return { k: "or", a, b };
}

/** Structural equality of formulas. */
export function sameFormula(a: Formula, b: Formula): boolean {
  if (a === b) return true;
  if (typeof a === "boolean" || typeof b === "boolean" || a.k !== b.k) return false;
  switch (a.k) {
    case "eq":
    case "startsWith":
    case "endsWith":
      return a.value === (b as { value: string }).value;
    case "in": {
      const bv = (b as { values: readonly string[] }).values;
      return a.values.length === bv.length && a.values.every((v, i) => v === bv[i]);
    }
    case "not":
      return sameFormula(a.a, (b as { a: Formula }).a);
    default:
      return sameFormula(a.a, (b as { a: Formula }).a) && sameFormula(a.b, (b as { b: Formula }).b);
  }
}

/**
 * For a boolean node, when it is true (`t`) and when it is false (`f`) for a non-null approver.
 * Neither holds where evaluation fails; a failure is fail-closed, so it is not true.
 */
export interface TruthConditions {
  readonly t: Formula;
  readonly f: Formula;
}
export type PartialEvaluator = (env: EvalEnv, errors: Diagnostic[]) => TruthConditions;

const TRUE: TruthConditions = { t: true, f: false };
const FALSE: TruthConditions = { t: false, f: true };
const FAILED: TruthConditions = { t: false, f: false };

/** The outcome of an approver-free condition, from its compiled evaluator. */
function constant(fn: Evaluator, env: EvalEnv, errors: Diagnostic[], span: Span): TruthConditions {
  const v = fn(env);
  if (v === true) return TRUE;
  if (v === false) return FALSE;
  if (v !== FAIL) fail("runtime-type", `expected a condition, not \`${describe(v)}\``, span);
  if (failure.diagnostic !== undefined) errors.push(failure.diagnostic);
  return FAILED;
}

/**
 * Compiles the truth conditions of a checked boolean expression. `evaluatorOf` gives the compiled
 * evaluator of any approver-free subexpression. Relies on INVARIANT (approver-atoms) of check.ts.
 */
export function compileTruth(e: Expr, evaluatorOf: (e: Expr) => Evaluator): PartialEvaluator {
  if (!mentionsApprover(e)) {
    const fn = evaluatorOf(e);
    return (env, errors) => constant(fn, env, errors, e.span);
  }
  if (e.kind === "unary") {
    const inner = compileTruth(e.operand, evaluatorOf);
    return (env, errors) => {
      const c = inner(env, errors);
      return { t: c.f, f: c.t };
    };
  }
  if (e.kind === "binary" && (e.op === "&&" || e.op === "||")) {
    const left = compileTruth(e.left, evaluatorOf);
    const right = compileTruth(e.right, evaluatorOf);
    if (e.op === "&&") {
      return (env, errors) => {
        const a = left(env, errors);
        if (a.t === false) return a; // Short-circuit: the right side is never evaluated.
        const b = right(env, errors);
        return { t: and(a.t, b.t), f: or(a.f, and(a.t, b.f)) };
      };
    }
    return (env, errors) => {
      const a = left(env, errors);
      if (a.f === false) return a;
      const b = right(env, errors);
      return { t: or(a.t, and(a.f, b.t)), f: and(a.f, b.f) };
    };
  }
  return compileAtom(e, evaluatorOf);
}

/** An approver atom: `approver ==`/`!=`/`in` something, or `startsWith`/`endsWith(approver, …)`. */
function compileAtom(e: Expr, evaluatorOf: (e: Expr) => Evaluator): PartialEvaluator {
  if (e.kind === "call") {
    const other = evaluatorOf(e.args[1]!);
    const k = e.callee === "startsWith" ? "startsWith" : "endsWith";
    return (env, errors) => {
      const v = other(env);
      if (v === FAIL) return failed(errors);
      if (typeof v !== "string") return failed(errors, fail("runtime-type", `\`${k}\` takes strings, not \`${describe(v)}\``, e.span));
      const atom: Formula = { k, value: v };
      return { t: atom, f: not(atom) };
    };
  }
  const b = e as ExprOf<"binary">;
  const approverLeft = b.left.kind === "name" && b.left.name === "approver";
  const other = evaluatorOf(approverLeft ? b.right : b.left);
  if (b.op === "in") {
    return (env, errors) => {
      const v = other(env);
      if (v === FAIL) return failed(errors);
      return membership(v, b.span, errors);
    };
  }
  const negate = b.op === "!=";
  return (env, errors) => {
    const v = other(env);
    if (v === FAIL) return failed(errors);
    if (v === null) return negate ? TRUE : FALSE;
    if (typeof v !== "string") return failed(errors, fail("runtime-type", `cannot compare \`string\` with \`${describe(v)}\``, b.span));
    const atom: Formula = { k: "eq", value: v };
    return negate ? { t: not(atom), f: atom } : { t: atom, f: not(atom) };
  };
}

/** `approver in list` is `approver == a || approver == b || …`, left to right. */
function membership(list: Value, span: Span, errors: Diagnostic[]): TruthConditions {
  if (!Array.isArray(list)) return failed(errors, fail("runtime-type", `\`in\` needs a list, not \`${describe(list)}\``, span));
  if (list.length > LIMITS.listElementsMax) {
    return failed(errors, fail("list-too-long", `list of ${list.length} elements is longer than ${LIMITS.listElementsMax}`, span));
  }
  const values: string[] = [];
  for (const element of list) {
    if (element === null || element === undefined) continue;
    if (typeof element !== "string") {
      // Evaluation fails here unless an earlier element matched.
      errors.push({ code: "runtime-type", severity: "error", message: `cannot compare \`string\` with \`${describe(element)}\``, span });
      return { t: values.length === 0 ? false : { k: "in", values }, f: false };
    }
    if (!values.includes(element)) values.push(element);
  }
  // A long list gets a set, so trying thousands of candidates stays linear.
  const atom: Formula = values.length === 0 ? false : values.length > 16 ? { k: "in", values, lookup: new Set(values) } : { k: "in", values };
  return { t: atom, f: not(atom) };
}

function failed(errors: Diagnostic[], _signal?: typeof FAIL): TruthConditions {
  if (failure.diagnostic !== undefined) errors.push(failure.diagnostic);
  return FAILED;
}

/** Whether a non-null `approver` satisfies `f`. */
export function holds(f: Formula, approver: string): boolean {
  if (typeof f === "boolean") return f;
  switch (f.k) {
    case "eq":
      return approver === f.value;
    case "in":
      return f.lookup !== undefined ? f.lookup.has(approver) : f.values.includes(approver);
    case "startsWith":
      return approver.startsWith(f.value);
    case "endsWith":
      return approver.endsWith(f.value);
    case "not":
      return !holds(f.a, approver);
    case "and":
      return holds(f.a, approver) && holds(f.b, approver);
    case "or":
      return holds(f.a, approver) || holds(f.b, approver);
  }
}

/**
 * A finite set of approvers that represents every non-null string for `f`: some string satisfies
 * `f` (or falsifies it) exactly when some candidate does.
 *
 * INVARIANT (candidates-complete): the candidates are every constant of an `eq`/`in` atom, and
 * `p + x + s` for every prefix constant `p` (or "") and suffix constant `s` (or ""), where `x` is
 * a character that occurs in no constant. Why this suffices: a satisfying string `w` satisfies
 * one conjunct of `f`'s disjunctive normal form. If that conjunct requires `w == c`, then `c` is a
 * candidate. Otherwise let `p` be its longest required prefix and `s` its longest required suffix
 * (every required prefix is a prefix of `w`, so they are nested; likewise suffixes). `p + x + s`
 * has every required prefix and suffix; it equals no constant (they lack `x`); and a forbidden
 * prefix `r` of it would, lacking `x`, be a prefix of `p` and hence of `w`, a contradiction.
 *
 * The set is bounded by LIMITS.approverCandidatesMax. Past that bound, or when the constants use
 * every UTF-16 code unit so that no `x` exists, the set is marked incomplete: a search over it can
 * still find a witness, but can no longer prove that none exists.
 */
export function candidates(f: Formula): { readonly list: readonly string[]; readonly complete: boolean } {
  const equal = new Set<string>();
  const prefixes = new Set<string>([""]);
  const suffixes = new Set<string>([""]);
  const visit = (g: Formula): void => {
    if (typeof g === "boolean") return;
    switch (g.k) {
      case "eq":
        equal.add(g.value);
        return;
      case "in":
        for (const v of g.values) equal.add(v);
        return;
      case "startsWith":
        prefixes.add(g.value);
        return;
      case "endsWith":
        suffixes.add(g.value);
        return;
      case "not":
        visit(g.a);
        return;
      default:
        visit(g.a);
        visit(g.b);
    }
  };
  visit(f);
  const max = LIMITS.approverCandidatesMax;
  const list = [...equal].slice(0, max);
  let complete = equal.size <= max;
  const x = freshCharacter([equal, prefixes, suffixes]);
  if (x === undefined) return { list, complete: false };
  outer: for (const p of prefixes) {
    for (const s of suffixes) {
      if (list.length >= max) {
        complete = false;
        break outer;
      }
      list.push(p + x + s);
    }
  }
  return { list, complete };
}

/** A UTF-16 code unit used by no string of `groups` (private-use ones first), if there is one. */
function freshCharacter(groups: readonly Set<string>[]): string | undefined {
  const used = new Set<number>();
  for (const group of groups) for (const value of group) for (let i = 0; i < value.length; i++) used.add(value.charCodeAt(i));
  for (let n = 0; n < 0x10000; n++) {
    const code = (0xe000 + n) & 0xffff;
    if (!used.has(code)) return String.fromCharCode(code);
  }
  return undefined;
}

/**
 * Searches for a non-null approver satisfying `f`: the witness if one is found, otherwise whether
 * the search was exhaustive (so that no approver satisfies `f` at all).
 */
export function findApprover(f: Formula): { readonly witness: string } | { readonly witness: undefined; readonly exhaustive: boolean } {
  if (f === false) return { witness: undefined, exhaustive: true };
  if (f === true) return { witness: "\ue000" };
  const { list, complete } = candidates(f);
  for (const c of list) if (holds(f, c)) return { witness: c };
  return { witness: undefined, exhaustive: complete };
}

/** A non-null approver satisfying `f`, if the search finds one. */
export function satisfiable(f: Formula): string | undefined {
  return findApprover(f).witness;
}

/** Whether no non-null approver satisfies `f`, proven by an exhaustive search. */
export function unsatisfiable(f: Formula): boolean {
  const found = findApprover(f);
  return found.witness === undefined && found.exhaustive;
}

/** Whether every non-null approver satisfies `f`, proven: never claimed when the search was cut short. */
export function valid(f: Formula): boolean {
  if (typeof f === "boolean") return f;
  return unsatisfiable(not(f));
}

const NO_SPAN: Span = { start: 0, end: 0 };

/** The residual as an expression over `approver`, for printing. */
export function formulaToExpr(f: Formula): Expr {
  const approver: Expr = { kind: "name", name: "approver", path: [], span: NO_SPAN };
  const str = (value: string): Expr => ({ kind: "string", value, span: NO_SPAN });
  const bin = (op: "==" | "!=" | "in" | "&&" | "||", left: Expr, right: Expr): Expr => ({ kind: "binary", op, left, right, span: NO_SPAN });
  if (typeof f === "boolean") return { kind: "bool", value: f, span: NO_SPAN };
  switch (f.k) {
    case "eq":
      return bin("==", approver, str(f.value));
    case "in":
      return bin("in", approver, { kind: "list", elements: f.values.map(str), span: NO_SPAN });
    case "startsWith":
    case "endsWith":
      return { kind: "call", callee: f.k, args: [approver, str(f.value)], span: NO_SPAN, calleeSpan: NO_SPAN };
    case "not":
      if (typeof f.a !== "boolean" && f.a.k === "eq") return bin("!=", approver, str(f.a.value));
      return { kind: "unary", op: "!", operand: formulaToExpr(f.a), span: NO_SPAN };
    case "and":
      return bin("&&", formulaToExpr(f.a), formulaToExpr(f.b));
    case "or":
      return bin("||", formulaToExpr(f.a), formulaToExpr(f.b));
  }
}

/**
 * The canonical text of a residual. The formula speaks of a non-null approver, so "any approver"
 * (the formula `true`) prints as `approver != null`.
 */
export function residualText(f: Formula): string {
  return f === true ? "approver != null" : formatExpr(formulaToExpr(f));
}
