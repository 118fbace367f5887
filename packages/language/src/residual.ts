// Partial evaluation over `approver`: the policy's own tree with its known parts replaced by their
// values and folded without copying any subtree, and the exact decision of whether an approver exists.
import type { Span } from "@agent-authority/grammar";
import type { Expr, ExprOf } from "./ast.js";
import { mapChildren, mentionsApprover } from "./ast.js";
import type { Diagnostic } from "./diagnostic.js";
import type { EvalEnv, Evaluator } from "./compile.js";
import { ENVIRONMENT_TYPE_OF } from "./environment.js";
import { formatExpr } from "./format.js";
import { LIMITS, utf8Length } from "./limits.js";
import { charge, describe, fail, Failure, type Meter, type Value } from "./values.js";

/**
 * A part of the policy that failed at run time, kept as its own source with the names it reads
 * replaced by their values (`args` and `approver` stay): evaluated again on the same action it
 * fails again, so the residual's text keeps the policy's meaning without stating the failure some
 * other way, even where it is decided in another link's environment (a delegation chain). `unless`
 * is an atom that makes it true before it fails (`approver in l` where an element of `l` past the
 * approver's is not a string).
 */
export interface Failed {
  readonly k: "error";
  readonly expr: Expr;
  readonly env: EvalEnv;
  readonly unless?: Formula;
}

/**
 * A residual over a non-null `approver`, three-valued like evaluation itself: true, false, or a
 * failure. Atoms hold run-time constants; `partial` says that a subtree holds a failure leaf.
 */
export type Formula =
  | boolean
  | Failed
  | { readonly k: "eq"; readonly value: string; readonly source?: Source }
  | { readonly k: "in"; readonly values: readonly string[]; readonly lookup?: ReadonlySet<string>; readonly source?: Source }
  | { readonly k: "startsWith"; readonly value: string; readonly source?: Source }
  | { readonly k: "endsWith"; readonly value: string; readonly source?: Source }
  | { readonly k: "not"; readonly a: Formula; readonly partial: boolean }
  | { readonly k: "and"; readonly a: Formula; readonly b: Formula; readonly partial: boolean }
  | { readonly k: "or"; readonly a: Formula; readonly b: Formula; readonly partial: boolean };

/**
 * Where an atom's value came from, when it was read from `args`: the expression as written and
 * the environment it was read in. A residual too large with its values stated prints this instead,
 * a reference to the decision's own `args` (decision 0131).
 */
export interface Source {
  readonly expr: Expr;
  readonly env: EvalEnv;
}

/** Whether `f` fails for every approver. */
function fails(f: Formula): boolean {
  return typeof f !== "boolean" && f.k === "error" && f.unless === undefined;
}

/** Whether some approver can make `f` fail. */
export function isPartial(f: Formula): boolean {
  if (typeof f === "boolean") return false;
  if (f.k === "error") return true;
  return "partial" in f && f.partial;
}

// The three constructors fold only what left-to-right short-circuit evaluation allows, and each
// returns one of its operands or one new node above them: a residual is never larger than its tree.

export function not(a: Formula): Formula {
  if (typeof a === "boolean") return !a;
  // (`!` over a failure fails too, but stays, so that the residual reads as the policy does.)
  if (a.k === "not") return a.a;
  return { k: "not", a, partial: isPartial(a) };
}
export function and(a: Formula, b: Formula): Formula {
  if (a === false || fails(a)) return a;
  if (a === true) return b;
  if (b === true) return a;
  // `x && false` is false unless `x` fails first.
  if (b === false && !isPartial(a)) return false;
  return { k: "and", a, b, partial: isPartial(a) || isPartial(b) };
}
export function or(a: Formula, b: Formula): Formula {
  if (a === true || fails(a)) return a;
  if (a === false) return b;
  if (b === false) return a;
  if (b === true && !isPartial(a)) return true;
  return { k: "or", a, b, partial: isPartial(a) || isPartial(b) };
}

/**
 * One partial evaluation's own state, made by its caller and passed down to every node: its meter
 * of work units (evaluators charge it directly), the first run-time error met, and the lists read.
 */
export interface ResidualRun extends Meter {
  /** The first run-time error met while building the residual: the reason a denial gives. */
  error: Diagnostic | undefined;
  /**
   * The lists already read while one delegation chain is decided: every link of a chain reads the
   * same `args`, so `approver in args.l` on 64 links reads the list once. Made for one chain's
   * decision and dropped with it, so no list is trusted to be unchanged across decisions.
   */
  readonly lists: ListCache | undefined;
}

/** A run without a limit, for lint (its work is bounded by the policy's nodes). */
export function unmeteredRun(): ResidualRun {
  return { spent: 0, limit: Number.POSITIVE_INFINITY, error: undefined, lists: undefined, urls: undefined };
}

/** The residual of a condition: the formula, with the first run-time error met left in `run`. */
export type PartialEvaluator = (env: EvalEnv, run: ResidualRun) => Formula;

/** The value of an approver-free condition, from its compiled evaluator. */
function constant(fn: Evaluator, env: EvalEnv, run: ResidualRun, e: Expr): Formula {
  const v = fn(env, run);
  if (v === true || v === false) return v;
  return failed(run, e, env, v instanceof Failure ? v : fail("runtime-type", `expected a condition, not \`${describe(v)}\``, e.span));
}

/**
 * Compiles the residual of a checked boolean expression. `evaluatorOf` gives the compiled
 * evaluator of any approver-free subexpression. Relies on INVARIANT (approver-atoms) of check.ts.
 *
 * INVARIANT (residual-size): the residual is the policy's tree with subtrees removed (folded
 * away), approver-free subtrees that evaluated replaced by their value, and comparisons with
 * `approver` replaced by the same comparison with the other side's value; a part that fails is kept
 * as it is written, its names but `args` and `approver` replaced by their values. No constructor
 * copies a subtree. So its canonical text is never longer than the policy's, but for the values
 * it states in place of expressions.
 */
export function compileResidual(e: Expr, evaluatorOf: (e: Expr) => Evaluator): PartialEvaluator {
  if (!mentionsApprover(e)) {
    const fn = evaluatorOf(e);
    return (env, run) => constant(fn, env, run, e);
  }
  if (e.kind === "unary") {
    const inner = compileResidual(e.operand, evaluatorOf);
    return (env, run) => not(inner(env, run));
  }
  if (e.kind === "binary" && (e.op === "&&" || e.op === "||")) {
    const left = compileResidual(e.left, evaluatorOf);
    const right = compileResidual(e.right, evaluatorOf);
    const isAnd = e.op === "&&";
    return (env, run) => {
      const a = left(env, run);
      // Short-circuit: where the left side decides for every approver, the right one is never evaluated.
      if (a === !isAnd || fails(a)) return a;
      const b = right(env, run);
      return isAnd ? and(a, b) : or(a, b);
    };
  }
  return compileAtom(e, evaluatorOf);
}

/** An approver atom: `approver ==`/`!=`/`in` something, or `startsWith`/`endsWith(approver, …)`. */
function compileAtom(e: Expr, evaluatorOf: (e: Expr) => Evaluator): PartialEvaluator {
  if (e.kind === "call") {
    const otherExpr = e.args[1]!;
    const other = evaluatorOf(otherExpr);
    const k = e.callee === "startsWith" ? "startsWith" : "endsWith";
    const dynamic = readsArgs(otherExpr);
    return (env, run) => {
      const v = other(env, run);
      if (v instanceof Failure) return failed(run, e, env, v);
      if (typeof v !== "string") return failed(run, e, env, fail("runtime-type", `\`${k}\` takes strings, not \`${describe(v)}\``, e.span));
      return dynamic ? { k, value: v, source: { expr: otherExpr, env } } : { k, value: v };
    };
  }
  const b = e as ExprOf<"binary">;
  const approverLeft = b.left.kind === "name" && b.left.name === "approver";
  const otherExpr = approverLeft ? b.right : b.left;
  const other = evaluatorOf(otherExpr);
  const dynamic = readsArgs(otherExpr);
  if (b.op === "in") {
    return (env, run) => {
      const v = other(env, run);
      if (v instanceof Failure) return failed(run, b, env, v);
      return membership(v, b, env, run, dynamic ? { expr: otherExpr, env } : undefined);
    };
  }
  const negate = b.op === "!=";
  return (env, run) => {
    const v = other(env, run);
    if (v instanceof Failure) return failed(run, b, env, v);
    if (v === null) return negate;
    if (typeof v !== "string")
      return failed(run, b, env, fail("runtime-type", `cannot compare \`string\` with \`${describe(v)}\``, b.span));
    const atom: Formula = dynamic ? { k: "eq", value: v, source: { expr: otherExpr, env } } : { k: "eq", value: v };
    return negate ? not(atom) : atom;
  };
}

/**
 * Whether every `approver` in `e` is compared with the literal `null` (`approver != null`,
 * `null == approver`, …). Then each of its atoms folds to a truth value over a non-null approver,
 * so its residual, wherever nothing fails, is the one truth value of its evaluation with any
 * approver (policy.ts reads it so, from compile.ts `compileNonNullApprover`).
 */
export function onlyNullApprover(e: Expr): boolean {
  switch (e.kind) {
    case "name":
      return e.name !== "approver";
    case "binary":
      if ((e.op === "==" || e.op === "!=") && (isApprover(e.left) || isApprover(e.right)))
        return (isApprover(e.left) ? e.right : e.left).kind === "null";
      return onlyNullApprover(e.left) && onlyNullApprover(e.right);
    case "unary":
      return onlyNullApprover(e.operand);
    case "list":
      return e.elements.every(onlyNullApprover);
    case "call":
      return e.args.every(onlyNullApprover);
    default:
      return true;
  }
}

function isApprover(e: Expr): boolean {
  return e.kind === "name" && e.name === "approver";
}

/** Whether `e` reads a value from `args`. */
function readsArgs(e: Expr): boolean {
  if (e.kind === "name") return e.name === "args";
  let found = false;
  mapChildren(e, (x) => {
    found ||= readsArgs(x);
    return x;
  });
  return found;
}

/** `approver in list` is `approver == a || approver == b || …`, left to right. */
function membership(list: Value, e: ExprOf<"binary">, env: EvalEnv, run: ResidualRun, source: Source | undefined): Formula {
  const span = e.span;
  if (!Array.isArray(list)) return failed(run, e, env, fail("runtime-type", `\`in\` needs a list, not \`${describe(list)}\``, span));
  if (list.length > LIMITS.listElementsMax) {
    return failed(run, e, env, fail("list-too-long", `list of ${list.length} elements is longer than ${LIMITS.listElementsMax}`, span));
  }
  // One unit per element (INVARIANT (charged-before-work)); past the budget, the decision denies.
  const over = charge(run, list.length, span);
  if (over !== undefined) return failed(run, e, env, over);
  const read = stringsOf(list, run.lists);
  if (read.bad !== undefined) {
    // Evaluation fails here unless an earlier element matched.
    run.error ??= { code: "runtime-type", severity: "error", message: `cannot compare \`string\` with \`${describe(read.bad)}\``, span };
    const unless = inAtom(read.values);
    return unless === false ? { k: "error", expr: e, env } : { k: "error", expr: e, env, unless };
  }
  return inAtom(read.values, read.lookup, source);
}

/** The distinct strings of a list up to its first element that is neither a string nor null. */
interface ListStrings {
  readonly values: readonly string[];
  readonly lookup: ReadonlySet<string>;
  /** The first element that is neither a string nor null, if any. */
  readonly bad?: Value;
}

/** The lists one chain's decision has read (ResidualRun.lists). */
export type ListCache = Map<readonly Value[], ListStrings>;

function stringsOf(list: readonly Value[], listCache: ListCache | undefined): ListStrings {
  const cached = listCache?.get(list);
  if (cached !== undefined) return cached;
  const values: string[] = [];
  const lookup = new Set<string>();
  let bad: Value | undefined;
  for (const element of list) {
    if (element === null || element === undefined) continue;
    if (typeof element !== "string") {
      bad = element;
      break;
    }
    if (!lookup.has(element)) {
      lookup.add(element);
      values.push(element);
    }
  }
  const read: ListStrings = bad === undefined ? { values, lookup } : { values, lookup, bad };
  listCache?.set(list, read);
  return read;
}

function inAtom(values: readonly string[], lookup?: ReadonlySet<string>, source?: Source): Formula {
  // A long list gets a set, so trying thousands of candidates stays linear.
  if (values.length === 0) return false;
  const atom = values.length > 16 ? { k: "in" as const, values, lookup: lookup ?? new Set(values) } : { k: "in" as const, values };
  return source === undefined ? atom : { ...atom, source };
}

/** A failure leaf for `expr`, its reason recorded in `run`. */
function failed(run: ResidualRun, expr: Expr, env: EvalEnv, why: Failure): Formula {
  run.error ??= why.diagnostic;
  return { k: "error", expr, env };
}

/** The value of `f` for a non-null `approver`: true, false, or undefined where evaluation fails. */
export function valueFor(f: Formula, approver: string): boolean | undefined {
  if (typeof f === "boolean") return f;
  switch (f.k) {
    case "error":
      return f.unless !== undefined && holds(f.unless, approver) ? true : undefined;
    case "eq":
      return approver === f.value;
    case "in":
      return f.lookup !== undefined ? f.lookup.has(approver) : f.values.includes(approver);
    case "startsWith":
      return approver.startsWith(f.value);
    case "endsWith":
      return approver.endsWith(f.value);
    case "not": {
      const a = valueFor(f.a, approver);
      return a === undefined ? undefined : !a;
    }
    case "and": {
      const a = valueFor(f.a, approver);
      return a === true ? valueFor(f.b, approver) : a;
    }
    case "or": {
      const a = valueFor(f.a, approver);
      return a === false ? valueFor(f.b, approver) : a;
    }
  }
}

/** Whether a non-null `approver` makes `f` true. */
export function holds(f: Formula, approver: string): boolean {
  return valueFor(f, approver) === true;
}

/** Whether `a` and `b` are the same formula, node for node (failure leaves: the same part on the same action). */
export function sameFormula(a: Formula, b: Formula): boolean {
  if (a === b) return true;
  if (typeof a === "boolean" || typeof b === "boolean" || a.k !== b.k) return false;
  switch (a.k) {
    case "error":
      return (
        b.k === "error" &&
        a.expr === b.expr &&
        a.env === b.env &&
        (a.unless === b.unless || (a.unless !== undefined && b.unless !== undefined && sameFormula(a.unless, b.unless)))
      );
    case "eq":
    case "startsWith":
    case "endsWith":
      return a.value === (b as typeof a).value;
    case "in": {
      const other = (b as typeof a).values;
      return a.values.length === other.length && a.values.every((v, i) => v === other[i]);
    }
    case "not":
      return sameFormula(a.a, (b as typeof a).a);
    case "and":
    case "or":
      return sameFormula(a.a, (b as typeof a).a) && sameFormula(a.b, (b as typeof a).b);
  }
}

/** The number of nodes of `f` (a failure leaf is one: evaluation stops there). */
export function formulaSize(f: Formula): number {
  if (typeof f === "boolean") return 1;
  switch (f.k) {
    case "not":
      return 1 + formulaSize(f.a);
    case "and":
    case "or":
      return 1 + formulaSize(f.a) + formulaSize(f.b);
    case "error":
      return f.unless === undefined ? 1 : 2;
    default:
      return 1;
  }
}

/** The constants of `f`'s atoms, gathered in one walk. */
interface Constants {
  readonly equal: ReadonlySet<string>;
  readonly prefixes: Set<string>;
  readonly suffixes: Set<string>;
}

function constantsOf(f: Formula): Constants {
  const out = { equal: new Set<string>(), prefixes: new Set([""]), suffixes: new Set([""]) };
  // The constants in the order met: single values, and the lists of `in` atoms, one list (however
  // many atoms read it) used as it is when it is the only one, not copied.
  const met: (string | ReadonlySet<string> | readonly string[])[] = [];
  const lists = new Set<ReadonlySet<string> | readonly string[]>();
  const visit = (g: Formula): void => {
    if (typeof g === "boolean") return;
    switch (g.k) {
      case "eq":
        met.push(g.value);
        return;
      case "in": {
        const list = g.lookup ?? g.values;
        if (!lists.has(list)) met.push(list);
        lists.add(list);
        return;
      }
      case "startsWith":
        out.prefixes.add(g.value);
        return;
      case "endsWith":
        out.suffixes.add(g.value);
        return;
      case "not":
        visit(g.a);
        return;
      case "and":
      case "or":
        visit(g.a);
        visit(g.b);
        return;
      case "error":
        if (g.unless !== undefined) visit(g.unless);
        return;
    }
  };
  visit(f);
  if (met.length === 1 && typeof met[0] !== "string") {
    const only = met[0]!;
    return { ...out, equal: only instanceof Set ? only : new Set(only as readonly string[]) };
  }
  for (const item of met) {
    if (typeof item === "string") out.equal.add(item);
    else for (const v of item) out.equal.add(v);
  }
  return out;
}

/**
 * A finite set of approvers that represents every non-null string for `f`: some string makes
 * `f` true (or not true) exactly when some candidate does.
 *
 * INVARIANT (candidates-complete): the candidates are every constant of an `eq`/`in` atom, and
 * `p + x + s` for every prefix constant `p` (or "") and suffix constant `s` (or ""), where `x` is
 * a character that occurs in no constant. Why this suffices: whether `f` is true for a string
 * depends only on which atoms the string satisfies (a failure leaf does not depend on it at all),
 * so the set of strings making `f` true is a union of conjunctions of atoms and negated atoms. If
 * one of them requires `w == c`, then `c` is a candidate. Otherwise let `p` be its longest
 * required prefix and `s` its longest required suffix (every required prefix is a prefix of `w`,
 * so they are nested; likewise suffixes). `p + x + s` has every required prefix and suffix; it
 * equals no constant (they lack `x`); and a forbidden prefix `r` of it would, lacking `x`, be a
 * prefix of `p` and hence of `w`, a contradiction.
 *
 * The set is bounded by LIMITS.approverCandidatesMax (and a policy whose worst case exceeds it is
 * refused when it is written, see approver-cost.ts). Past that bound, or when the constants
 * use every UTF-16 code unit so that no `x` exists, the set is marked incomplete: a search over it
 * can still find a witness, but can no longer prove that none exists.
 */
export function candidates(
  f: Formula,
  max: number = LIMITS.approverCandidatesMax,
): { readonly list: readonly string[]; readonly complete: boolean } {
  const { equal, prefixes, suffixes } = constantsOf(f);
  // The fresh strings first: against a long list of constants one of them is the exception (or
  // the witness) a search looks for, so it stops after a few candidates instead of the whole list.
  const list: string[] = [];
  let complete = true;
  const x = freshCharacter([equal, prefixes, suffixes]);
  if (x === undefined) complete = false;
  else {
    outer: for (const p of prefixes) {
      for (const s of suffixes) {
        if (list.length >= max) {
          complete = false;
          break outer;
        }
        list.push(p + x + s);
      }
    }
  }
  for (const c of equal) {
    if (list.length >= max) {
      complete = false;
      break;
    }
    list.push(c);
  }
  return { list, complete };
}

/** A UTF-16 code unit used by no string of `groups` (private-use ones first), if there is one. */
function freshCharacter(groups: readonly ReadonlySet<string>[]): string | undefined {
  // Almost always the first private-use character is free: a native search of each string says so.
  for (let code = 0xe000; code < 0xe008; code++) {
    const c = String.fromCharCode(code);
    let free = true;
    for (const group of groups) {
      for (const value of group) {
        if (value.includes(c)) {
          free = false;
          break;
        }
      }
      if (!free) break;
    }
    if (free) return c;
  }
  const used = new Set<number>();
  for (const group of groups) for (const value of group) for (let i = 0; i < value.length; i++) used.add(value.charCodeAt(i));
  for (let n = 0; n < 0x10000; n++) {
    const code = (0xe000 + n) & 0xffff;
    if (!used.has(code)) return String.fromCharCode(code);
  }
  return undefined;
}

/** What trying every candidate showed: an approver making `f` true, and whether every approver does. */
export interface Search {
  readonly witness: string | undefined;
  /** No approver makes `f` true: the search was complete and found none. */
  readonly none: boolean;
  /** Every non-null approver makes `f` true: the search was complete and found no exception. */
  readonly everyone: boolean;
  /** Candidates tried. */
  readonly tried: number;
  /** Candidate × node tests made: what the cost model charges for the search. */
  readonly steps: number;
}

/**
 * Tries candidates until both a witness and an exception are found, or none is left. At most
 * LIMITS.approverSearchStepsMax candidate × node tests are made: a compiled policy never needs
 * more (approver-cost.ts refuses it), and a conjoined chain that would is cut short, fail closed.
 */
export function search(f: Formula): Search {
  if (f === false || fails(f)) return { witness: undefined, none: true, everyone: false, tried: 0, steps: 0 };
  if (f === true) return { witness: "\ue000", none: false, everyone: true, tried: 0, steps: 0 };
  const size = formulaSize(f);
  const most = Math.min(LIMITS.approverCandidatesMax, Math.floor(LIMITS.approverSearchStepsMax / size));
  const { list, complete } = candidates(f, most);
  let witness: string | undefined;
  let exception = false;
  let tried = 0;
  for (const c of list) {
    tried++;
    if (holds(f, c)) witness ??= c;
    else exception = true;
    if (witness !== undefined && exception) break;
  }
  return { witness, none: witness === undefined && complete, everyone: !exception && complete, tried, steps: tried * size };
}

/** Whether no non-null approver satisfies `f`, proven by an exhaustive search. */
export function unsatisfiable(f: Formula): boolean {
  return search(f).none;
}

const NO_SPAN: Span = Object.freeze({ start: 0, end: 0 });

/**
 * A residual as an expression, for printing: failure leaves print as they were written; with
 * `references`, so do atoms whose value was read from `args` (a reference to the decision's own
 * `args`, read on that action when an approver is admitted).
 */
export function formulaToExpr(f: Formula, references = false): Expr {
  const approver: Expr = { kind: "name", name: "approver", path: [], span: NO_SPAN };
  const str = (value: string): Expr => ({ kind: "string", value, span: NO_SPAN });
  const bin = (op: "==" | "!=" | "in" | "&&" | "||", left: Expr, right: Expr): Expr => ({ kind: "binary", op, left, right, span: NO_SPAN });
  if (typeof f === "boolean") return { kind: "bool", value: f, span: NO_SPAN };
  const other = (atom: { readonly value: string; readonly source?: Source }): Expr =>
    references && atom.source !== undefined ? withValues(atom.source.expr, atom.source.env) : str(atom.value);
  switch (f.k) {
    case "error":
      return withValues(f.expr, f.env);
    case "eq":
      return bin("==", approver, other(f));
    case "in":
      if (references && f.source !== undefined) return bin("in", approver, withValues(f.source.expr, f.source.env));
      return bin("in", approver, { kind: "list", elements: f.values.map(str), span: NO_SPAN });
    case "startsWith":
    case "endsWith":
      return { kind: "call", callee: f.k, args: [approver, other(f)], span: NO_SPAN, calleeSpan: NO_SPAN };
    case "not":
      if (typeof f.a !== "boolean" && f.a.k === "eq") return bin("!=", approver, other(f.a));
      return { kind: "unary", op: "!", operand: formulaToExpr(f.a, references), span: NO_SPAN };
    case "and":
      return bin("&&", formulaToExpr(f.a, references), formulaToExpr(f.b, references));
    case "or":
      return bin("||", formulaToExpr(f.a, references), formulaToExpr(f.b, references));
  }
}

/** Whether an atom of `f` holds a value read from `args`. */
function readsValues(f: Formula): boolean {
  if (typeof f === "boolean") return false;
  switch (f.k) {
    case "not":
      return readsValues(f.a);
    case "and":
    case "or":
      return readsValues(f.a) || readsValues(f.b);
    case "error":
      return false;
    default:
      return f.source !== undefined;
  }
}

/**
 * The bytes that stating the values of `f`'s atoms read from `args` adds to its text over their
 * references, at least (each string printed takes its length and two quotes, a list its brackets
 * and `, ` between elements), counted until it passes `max`; undefined when no atom read any.
 */
function statedValuesAtLeast(f: Formula, max: number): number | undefined {
  let total = 0;
  let any = false;
  const reference = (source: Source): number => utf8Length(formatExpr(withValues(source.expr, source.env)));
  const visit = (g: Formula): void => {
    if (total > max || typeof g === "boolean") return;
    switch (g.k) {
      case "eq":
      case "startsWith":
      case "endsWith":
        if (g.source !== undefined) {
          any = true;
          total += g.value.length + 2 - reference(g.source);
        }
        return;
      case "in":
        if (g.source !== undefined) {
          any = true;
          // `[` and `]`, each string quoted, and `, ` between them.
          total += 2 - reference(g.source) - 2;
          for (let i = 0; i < g.values.length && total <= max; i++) total += g.values[i]!.length + 4;
        }
        return;
      case "not":
        visit(g.a);
        return;
      case "and":
      case "or":
        visit(g.a);
        visit(g.b);
        return;
      case "error":
        return;
    }
  };
  visit(f);
  return any ? total : undefined;
}

/** `e` with every name but `args` and `approver` replaced by its value in `env` (an int or a string). */
function withValues(e: Expr, env: EvalEnv): Expr {
  if (e.kind !== "name") return mapChildren(e, (x) => withValues(x, env));
  // The names are the language's, not the object's own: an environment may compute them (engine `LinkEnvironment`).
  if (e.name === "args" || e.name === "approver" || !ENVIRONMENT_TYPE_OF.has(e.name)) return e;
  const value = (env as unknown as Record<string, unknown>)[e.name];
  if (typeof value === "string") return { kind: "string", value, span: e.span };
  if (typeof value !== "number") return e;
  // A negative value is the negation of its magnitude, as the parser would read it.
  const magnitude: Expr = { kind: "int", value: Math.abs(value), span: e.span };
  return value < 0 ? { kind: "unary", op: "-", operand: magnitude, span: e.span } : magnitude;
}

/**
 * The canonical text of a residual. The formula speaks of a non-null approver, so "any approver"
 * prints as `approver != null`. The values the residual read from `args` are stated when the
 * text then stays within `bytesMax` (its policies' canonical text); otherwise they are printed as
 * the references they were read by, and the text is the policy's own parts (INVARIANT
 * (residual-size)).
 */
export function residualText(f: Formula, everyone: boolean, bytesMax: number = Number.POSITIVE_INFINITY): string {
  if (everyone || f === true) return "approver != null";
  const referenced = formatExpr(formulaToExpr(f, true));
  // Nothing read from `args` to state, or no room for it: the references are the residual.
  if (!readsValues(f)) return referenced;
  const room = bytesMax - utf8Length(referenced);
  const extra = room < 0 ? undefined : statedValuesAtLeast(f, room);
  if (extra === undefined || extra > room) return referenced;
  const stated = formatExpr(formulaToExpr(f));
  return stated === referenced || utf8Length(stated) <= bytesMax ? stated : referenced;
}
