// Lint: warnings with spans for policies that compile but cannot mean what their author meant.
import type { Expr, ExprOf } from "./ast.js";
import { isConstant, mentionsApprover } from "./ast.js";
import type { TypeTable } from "./check.js";
import { compileExpr, failureMap, type EvalEnv } from "./compile.js";
import { byPosition, warning, type Diagnostic } from "./diagnostic.js";
import { WEEKDAYS } from "./environment.js";
import { formatExpr } from "./format.js";
import { LIMITS } from "./limits.js";
import { compileResidual, search, unmeteredRun, type Formula } from "./residual.js";
import { Failure, unmetered } from "./values.js";

/** Every lint warning of a checked tree, in source order. */
export function lintAst(root: Expr, types: TypeTable): readonly Diagnostic[] {
  return lintWithSteps(root, types).warnings;
}

/**
 * Lint with its work counted. Implication, redundancy and contradiction checks spend
 * steps from `budget`; once it is spent they answer "unknown", so lint stays silent rather than
 * claim what it did not prove (docs/decisions/0112).
 */
export function lintWithSteps(
  root: Expr,
  types: TypeTable,
  budget: number = LIMITS.lintStepsMax,
): { readonly warnings: readonly Diagnostic[]; readonly steps: number; readonly exhausted: boolean } {
  const lint = new Linter(root, types, budget);
  lint.visit(root, true);
  if (lint.unsatisfiable(root)) {
    lint.out.push(
      warning("never-allows", "this policy can never allow", root.span, "some of its conditions contradict each other or can never hold"),
    );
  }
  return { warnings: lint.out.sort(byPosition), steps: lint.steps, exhausted: lint.exhausted };
}

/** Known ranges of int names; `size` is never negative. */
const intRanges: ReadonlyMap<string, readonly [number, number]> = new Map([
  ["amount_minor", [0, Number.MAX_SAFE_INTEGER]],
  ["uses", [0, Number.MAX_SAFE_INTEGER]],
  ["spent_minor", [0, Number.MAX_SAFE_INTEGER]],
  ["hour_utc", [0, 23]],
]);

/** A comparison of one int subject with a constant, as the closed interval of values it admits. */
interface Bound {
  readonly subject: string;
  /** The structural key of the subject. */
  readonly key: number;
  readonly low: number;
  readonly high: number;
}

const EMPTY_ENV = Object.freeze({ args: Object.freeze({}) }) as unknown as EvalEnv;

class Linter {
  readonly out: Diagnostic[] = [];
  /** Steps spent by the bounded checks, never more than `budget`. */
  steps = 0;
  /** Whether a check wanted more steps than were left: from then on every bounded check answers "unknown". */
  exhausted = false;
  private readonly failures: ReadonlyMap<Expr, boolean>;
  private readonly keys = new Map<Expr, number>();
  private readonly interned = new Map<string, number>();
  private readonly implications = new Map<number, boolean>();
  private readonly never = new Map<Expr, boolean>();
  private readonly bounds = new Map<Expr, Bound | undefined>();
  private readonly memberships = new Map<Expr, { subject: number; values: ReadonlySet<string> } | undefined>();

  constructor(
    root: Expr,
    private readonly types: TypeTable,
    private readonly budget: number,
  ) {
    this.failures = failureMap(root, types);
  }

  /** Spends `n` steps; false (spending nothing) once they are more than the budget has left. */
  private spend(n = 1): boolean {
    if (this.exhausted || this.steps + n > this.budget) {
      this.exhausted = true;
      return false;
    }
    this.steps += n;
    return true;
  }

  /**
   * Whether `e` always evaluates to a boolean without failing, whatever the action holds: only
   * then can removing it, or relying on its value, be claimed to change nothing.
   */
  total(e: Expr): boolean {
    return this.types.get(e)?.kind === "bool" && !this.mayFail(e);
  }

  private mayFail(e: Expr): boolean {
    const known = this.failures.get(e);
    if (known !== undefined) return known;
    // An inner node of a logical chain: it fails where an operand fails or is not a boolean.
    if (e.kind === "binary" && (e.op === "&&" || e.op === "||")) return !this.total(e.left) || !this.total(e.right);
    return true;
  }

  /** A number per distinct tree: two nodes have the same key exactly when they are structurally equal. */
  key(e: Expr): number {
    const known = this.keys.get(e);
    if (known !== undefined) return known;
    let text: string;
    switch (e.kind) {
      case "int":
      case "bool":
        text = `${e.kind}:${String(e.value)}`;
        break;
      case "string":
        text = `string:${JSON.stringify(e.value)}`;
        break;
      case "null":
        text = "null";
        break;
      case "name":
        text = `name:${e.name}:${JSON.stringify(e.path)}`;
        break;
      case "list":
        text = `list:${e.elements.map((x) => this.key(x)).join(",")}`;
        break;
      case "call":
        text = `call:${e.callee}:${e.args.map((x) => this.key(x)).join(",")}`;
        break;
      case "unary":
        text = `unary:${e.op}:${this.key(e.operand)}`;
        break;
      case "binary":
        text = `binary:${e.op}:${this.key(e.left)},${this.key(e.right)}`;
        break;
    }
    let id = this.interned.get(text);
    if (id === undefined) this.interned.set(text, (id = this.interned.size));
    this.keys.set(e, id);
    return id;
  }

  /** Structural equality, ignoring spans. */
  same(a: Expr, b: Expr): boolean {
    return this.key(a) === this.key(b);
  }

  /** Walks the tree; `logical` says that `e` is the policy or an operand of `!`, `&&` or `||`. */
  visit(e: Expr, logical: boolean): void {
    if (logical && isConstant(e)) {
      // The policy `true` (or `false`) on its own is deliberate; a constant inside a condition is not.
      if (e.kind !== "bool" || this.isOperand) {
        const value = this.constantValue(e);
        const what = value === undefined ? "always fails at run time" : `is always \`${String(value)}\``;
        this.out.push(warning("constant-condition", `\`${formatExpr(e)}\` ${what}`, e.span, "it mentions no name, so it decides nothing"));
      }
      return;
    }
    if (this.types.get(e)?.kind === "bool" && mentionsApprover(e) && this.approverOnly(e)) {
      this.approver(e);
      return;
    }
    switch (e.kind) {
      case "list":
        this.duplicates(e);
        for (const x of e.elements) this.visitOperand(x, false);
        return;
      case "call":
        for (const x of e.args) this.visitOperand(x, false);
        return;
      case "unary":
        this.visitOperand(e.operand, e.op === "!");
        return;
      case "binary":
        this.binary(e);
        return;
      default:
        return;
    }
  }

  private isOperand = false;

  private visitOperand(e: Expr, logical: boolean): void {
    const before = this.isOperand;
    this.isOperand = true;
    this.visit(e, logical);
    this.isOperand = before;
  }

  private binary(e: ExprOf<"binary">): void {
    if (e.op === "||") {
      this.disjunction(e);
      return;
    }
    if (e.op === "&&") {
      this.visitOperand(e.left, true);
      this.visitOperand(e.right, true);
      return;
    }
    this.comparison(e);
    this.visitOperand(e.left, false);
    this.visitOperand(e.right, false);
  }

  /** Flattens `a || b || c`, lints each disjunct, and reports disjuncts that can never matter. */
  private disjunction(e: ExprOf<"binary">): void {
    const disjuncts: Expr[] = [];
    const flatten = (x: Expr): void => {
      if (x.kind === "binary" && x.op === "||") {
        flatten(x.left);
        flatten(x.right);
      } else disjuncts.push(x);
    };
    flatten(e);
    for (const d of disjuncts) this.visitOperand(d, true);
    let alwaysBefore = false;
    // Removing an alternative changes nothing only if it never fails: otherwise its failure (the
    // policy refuses) would become whatever the alternatives after it say.
    const total = disjuncts.map((d) => this.total(d));
    const constant = disjuncts.map((d) => isConstant(d));
    // For each alternative, the index of the first later one that may fail (or the length).
    const nextFailing: number[] = new Array<number>(disjuncts.length);
    for (let j = disjuncts.length - 1, next = disjuncts.length; j >= 0; j--) {
      nextFailing[j] = next;
      if (!total[j]) next = j;
    }
    disjuncts.forEach((d, j) => {
      if (alwaysBefore) {
        this.out.push(
          warning("redundant-disjunct", `\`${formatExpr(d)}\` is never evaluated: an earlier alternative always holds`, d.span),
        );
        return;
      }
      if (constant[j] && this.constantValue(d) === true) alwaysBefore = true;
      if (constant[j] || !total[j] || this.exhausted) return;
      // A later alternative covers `d` only if every alternative between them never fails.
      const reachable = (i: number): boolean => i < j || i <= nextFailing[j]!;
      const covering = disjuncts.findIndex(
        (other, i) => i !== j && !constant[i] && reachable(i) && this.implies(d, other) && (i < j || !this.implies(other, d)),
      );
      if (covering >= 0) {
        const other = disjuncts[covering]!;
        this.out.push(
          warning(
            "redundant-disjunct",
            `\`${formatExpr(d)}\` can never matter: whenever it holds, \`${formatExpr(other)}\` holds too`,
            d.span,
            "remove it, or correct the condition it was meant to be",
          ),
        );
      } else if (!(mentionsApprover(d) && this.approverOnly(d)) && this.unsatisfiable(d)) {
        // (A condition on `approver` alone that never holds has its own warning.)
        this.out.push(warning("redundant-disjunct", `\`${formatExpr(d)}\` can never matter: it never holds`, d.span));
      }
    });
  }

  /** Comparisons that can never hold, or always hold, given the known range of their subject. */
  private comparison(e: ExprOf<"binary">): void {
    if (isConstant(e)) return;
    if (e.op !== "in" && this.same(e.left, e.right)) {
      // `args.x == args.x` fails for an object, and is no claim about every action.
      if (this.mayFail(e)) return;
      const always = e.op === "==" || e.op === "<=" || e.op === ">=";
      this.out.push(warning("constant-condition", `\`${formatExpr(e)}\` compares a value with itself: always \`${always}\``, e.span));
      return;
    }
    if (e.op === "in" && e.right.kind === "list" && e.right.elements.length === 0) {
      this.out.push(warning("impossible-comparison", `\`${formatExpr(e)}\` can never hold`, e.span, "nothing is in the empty list"));
      return;
    }
    const weekday = this.weekdayComparison(e);
    if (weekday) return;
    const bound = this.bound(e);
    if (bound === undefined) return;
    const range = this.rangeOf(bound.subject, e);
    if (range === undefined) return;
    if (bound.high < range[0] || bound.low > range[1]) {
      this.out.push(
        warning(
          "impossible-comparison",
          `\`${formatExpr(e)}\` can never hold`,
          e.span,
          `\`${bound.subject}\` is always between ${range[0]} and ${range[1]}`,
        ),
      );
    } else if (bound.low <= range[0] && bound.high >= range[1] && !this.mayFail(e)) {
      this.out.push(
        warning(
          "constant-condition",
          `\`${formatExpr(e)}\` always holds`,
          e.span,
          `\`${bound.subject}\` is always between ${range[0]} and ${range[1]}`,
        ),
      );
    }
  }

  private rangeOf(subject: string, e: ExprOf<"binary">): readonly [number, number] | undefined {
    // The subject is the side that is not constant, as `computeBound` reads it: `size([])` is a
    // constant, so in `size([]) <= -spent_minor` the subject is `-spent_minor`, not `size`.
    const side = isConstant(e.left) ? e.right : e.left;
    if (side.kind === "call" && side.callee === "size") return [0, Number.MAX_SAFE_INTEGER];
    return intRanges.get(subject);
  }

  /** `weekday_utc == "x"` or `weekday_utc in [...]` with a value that is not a weekday. */
  private weekdayComparison(e: ExprOf<"binary">): boolean {
    const isWeekday = (x: Expr): boolean => x.kind === "name" && x.name === "weekday_utc";
    const days = WEEKDAYS as readonly string[];
    if ((e.op === "==" || e.op === "!=") && (isWeekday(e.left) || isWeekday(e.right))) {
      const other = isWeekday(e.left) ? e.right : e.left;
      if (other.kind === "string" && !days.includes(other.value) && (e.op === "==" || !this.mayFail(e))) {
        const code = e.op === "==" ? "impossible-comparison" : "constant-condition";
        const message = e.op === "==" ? `\`${formatExpr(e)}\` can never hold` : `\`${formatExpr(e)}\` always holds`;
        this.out.push(warning(code, message, e.span, "`weekday_utc` is one of `mon`, `tue`, `wed`, `thu`, `fri`, `sat`, `sun`"));
      }
      return true;
    }
    if (e.op === "in" && isWeekday(e.left) && e.right.kind === "list") {
      const bad = e.right.elements.filter((x) => x.kind === "string" && !days.includes(x.value));
      for (const x of bad) {
        this.out.push(
          warning(
            "impossible-comparison",
            `\`weekday_utc\` is never \`${formatExpr(x)}\``,
            x.span,
            "`weekday_utc` is one of `mon`, `tue`, `wed`, `thu`, `fri`, `sat`, `sun`",
          ),
        );
      }
      return true;
    }
    return false;
  }

  /** The interval a comparison of an int subject with an int constant admits (memoized). */
  bound(e: Expr): Bound | undefined {
    if (this.bounds.has(e)) return this.bounds.get(e);
    const b = this.computeBound(e);
    this.bounds.set(e, b);
    return b;
  }

  private computeBound(e: Expr): Bound | undefined {
    if (e.kind !== "binary" || !["==", "<", "<=", ">", ">="].includes(e.op)) return undefined;
    const leftConst = isConstant(e.left);
    const rightConst = isConstant(e.right);
    if (leftConst === rightConst) return undefined;
    const subjectExpr = leftConst ? e.right : e.left;
    if (this.types.get(subjectExpr)?.kind !== "int") return undefined;
    const value = this.constantValue(leftConst ? e.left : e.right);
    if (typeof value !== "number") return undefined;
    const flipped: Record<string, string> = { "<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==" };
    const op = leftConst ? flipped[e.op]! : e.op;
    const subject = formatExpr(subjectExpr);
    const key = this.key(subjectExpr);
    switch (op) {
      case "==":
        return { subject, key, low: value, high: value };
      case "<":
        return { subject, key, low: -Infinity, high: value - 1 };
      case "<=":
        return { subject, key, low: -Infinity, high: value };
      case ">":
        return { subject, key, low: value + 1, high: Infinity };
      default:
        return { subject, key, low: value, high: Infinity };
    }
  }

  /**
   * Whether `x` evaluating to true guarantees that `y` evaluates to true (a sound, incomplete
   * test). Memoized on the pair, and bounded by the step budget: unknown answers false.
   */
  implies(x: Expr, y: Expr): boolean {
    // Keys are below the number of nodes (at most a few thousand), so the pair fits one small
    // integer, which a Map hashes without allocating (a larger key would be a heap number).
    const kx = this.key(x);
    const ky = this.key(y);
    const pair = kx < 0x7fff && ky < 0x7fff ? kx * 0x8000 + ky : 2 ** 31 + kx * 0x10_0000 + ky;
    const known = this.implications.get(pair);
    if (known !== undefined) return known;
    const answer = this.spend() && this.impliesUncached(x, y);
    this.implications.set(pair, answer);
    return answer;
  }

  private impliesUncached(x: Expr, y: Expr): boolean {
    if (this.same(x, y)) return true;
    if (x.kind === "binary" && x.op === "&&" && (this.implies(x.left, y) || this.implies(x.right, y))) return true;
    // `a || b` is reached at `b` only when `a` is false, not when it fails.
    if (y.kind === "binary" && y.op === "||" && (this.implies(x, y.left) || (this.total(y.left) && this.implies(x, y.right)))) return true;
    if (y.kind === "binary" && y.op === "&&") return this.implies(x, y.left) && this.implies(x, y.right);
    if (x.kind === "binary" && x.op === "||") return this.implies(x.left, y) && this.implies(x.right, y);
    const bx = this.bound(x);
    const by = this.bound(y);
    if (bx !== undefined && by !== undefined && bx.key === by.key) return bx.low >= by.low && bx.high <= by.high;
    const mx = this.membership(x);
    const my = this.membership(y);
    if (mx !== undefined && my !== undefined && mx.subject === my.subject) {
      for (const v of mx.values) if (!my.values.has(v)) return false;
      return true;
    }
    return false;
  }

  private membership(e: Expr): { subject: number; values: ReadonlySet<string> } | undefined {
    // Memoized: the pairwise checks of a long disjunction ask for the same node many times.
    if (this.memberships.has(e)) return this.memberships.get(e);
    const m = membership(e);
    const found = m === undefined ? undefined : { subject: this.key(m.subject), values: new Set(m.values) };
    this.memberships.set(e, found);
    return found;
  }

  /** Whether `e` never evaluates to true (a sound, incomplete test; memoized, bounded by the budget). */
  unsatisfiable(e: Expr): boolean {
    const known = this.never.get(e);
    if (known !== undefined) return known;
    const answer = this.spend() && this.unsatisfiableUncached(e);
    this.never.set(e, answer);
    return answer;
  }

  private unsatisfiableUncached(e: Expr): boolean {
    if (isConstant(e)) return this.constantValue(e) === false;
    if (this.types.get(e)?.kind === "bool" && mentionsApprover(e) && this.approverOnly(e)) return this.approverUnsatisfiable(e);
    if (e.kind === "binary" && e.op === "in" && e.right.kind === "list" && e.right.elements.length === 0) return true;
    if (e.kind === "binary" && e.op === "||") return this.unsatisfiable(e.left) && this.unsatisfiable(e.right);
    if (e.kind === "binary" && e.op === "&&") {
      const conjuncts: Expr[] = [];
      const flatten = (x: Expr): void => {
        if (x.kind === "binary" && x.op === "&&") {
          flatten(x.left);
          flatten(x.right);
        } else conjuncts.push(x);
      };
      flatten(e);
      if (conjuncts.some((c) => this.unsatisfiable(c))) return true;
      for (let i = 0; i < conjuncts.length; i++) {
        for (let j = i + 1; j < conjuncts.length; j++) {
          if (!this.spend()) return false;
          if (this.contradict(conjuncts[i]!, conjuncts[j]!)) return true;
        }
      }
      return this.intervalsEmpty(conjuncts);
    }
    const b = this.bound(e);
    if (b !== undefined) {
      const range = e.kind === "binary" ? this.rangeOf(b.subject, e) : undefined;
      return b.low > b.high || (range !== undefined && (b.high < range[0] || b.low > range[1]));
    }
    return false;
  }

  /** Two conditions that cannot both hold: `x` and `!x`, or different constants for one subject. */
  private contradict(a: Expr, b: Expr): boolean {
    if (a.kind === "unary" && a.op === "!" && this.same(a.operand, b)) return true;
    if (b.kind === "unary" && b.op === "!" && this.same(b.operand, a)) return true;
    const ma = membership(a);
    const mb = membership(b);
    if (ma !== undefined && mb !== undefined && this.same(ma.subject, mb.subject) && !isApprover(ma.subject)) {
      return !ma.values.some((v) => mb.values.includes(v));
    }
    return false;
  }

  /** Whether the int bounds on one subject among `conjuncts` leave no value. */
  private intervalsEmpty(conjuncts: readonly Expr[]): boolean {
    const bySubject = new Map<string, [number, number]>();
    for (const c of conjuncts) {
      const b = this.bound(c);
      if (b === undefined) continue;
      const current = bySubject.get(b.subject) ?? [-Infinity, Infinity];
      const next: [number, number] = [Math.max(current[0], b.low), Math.min(current[1], b.high)];
      if (next[0] > next[1]) return true;
      bySubject.set(b.subject, next);
    }
    return false;
  }

  /** Reports entries of a list literal that repeat an earlier one. */
  private duplicates(e: ExprOf<"list">): void {
    const seen = new Set<string>();
    for (const x of e.elements) {
      if (!isConstant(x)) continue;
      const key = formatExpr(x);
      if (seen.has(key)) this.out.push(warning("duplicate-list-entry", `\`${key}\` is already in this list`, x.span));
      seen.add(key);
    }
  }

  /** Whether `e` mentions no name other than `approver` (so its truth depends on the approval alone). */
  private approverOnly(e: Expr): boolean {
    switch (e.kind) {
      case "name":
        return e.name === "approver";
      case "list":
        return e.elements.every((x) => this.approverOnly(x));
      case "call":
        return e.args.every((x) => this.approverOnly(x));
      case "unary":
        return this.approverOnly(e.operand);
      case "binary":
        return this.approverOnly(e.left) && this.approverOnly(e.right);
      default:
        return true;
    }
  }

  private approverFormula(e: Expr): Formula {
    return compileResidual(e, (x) => compileExpr(x, this.types))(EMPTY_ENV, unmeteredRun());
  }

  /**
   * Whether no approval satisfies an approver-only `e`, proven by a search. The searches run on
   * disjoint subtrees (`visit` and `unsatisfiable` stop at an approver-only one, and memoize), so
   * together they cost no more than the policy's own approver search, which 0111 bounds when the
   * policy is compiled; they are not charged to the lint budget.
   */
  private approverUnsatisfiable(e: Expr): boolean {
    return search(this.approverFormula(e)).none;
  }

  /**
   * A condition on `approver` alone that no approval can satisfy. Without an approval `approver`
   * is unknown, not null (partial evaluation), and an approval always names someone, so even
   * `approver == null` can never help a policy allow.
   */
  private approver(e: Expr): void {
    if (e.kind === "list") {
      this.duplicates(e);
      return;
    }
    const lists: ExprOf<"list">[] = [];
    const collect = (x: Expr): void => {
      if (x.kind === "list") lists.push(x);
      else if (x.kind === "binary") {
        collect(x.left);
        collect(x.right);
      } else if (x.kind === "unary") collect(x.operand);
      else if (x.kind === "call") x.args.forEach(collect);
    };
    collect(e);
    for (const l of lists) this.duplicates(l);
    if (this.unsatisfiable(e)) {
      this.out.push(
        warning(
          "approver-unsatisfiable",
          `no approval can satisfy \`${formatExpr(e)}\``,
          e.span,
          "without an approval `approver` is unknown, and an approval always names one approver: no name satisfies this",
        ),
      );
    }
  }

  constantValue(e: Expr): unknown {
    const v = compileExpr(e, this.types)(EMPTY_ENV, unmetered());
    return v instanceof Failure ? undefined : v;
  }
}

/** `subject == "x"` or `subject in ["x", "y"]` with literal strings or ints. */
function membership(e: Expr): { subject: Expr; values: string[] } | undefined {
  if (e.kind !== "binary") return undefined;
  if (e.op === "==") {
    const [subject, value] = isConstant(e.left) ? [e.right, e.left] : [e.left, e.right];
    if (isConstant(subject) || (value.kind !== "string" && value.kind !== "int")) return undefined;
    return { subject, values: [formatExpr(value)] };
  }
  if (
    e.op === "in" &&
    !isConstant(e.left) &&
    e.right.kind === "list" &&
    e.right.elements.every((x) => x.kind === "string" || x.kind === "int")
  ) {
    return { subject: e.left, values: e.right.elements.map(formatExpr) };
  }
  return undefined;
}

function isApprover(e: Expr): boolean {
  return e.kind === "name" && e.name === "approver";
}
