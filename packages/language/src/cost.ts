// The cost model: work units of an evaluation, each function's cost in one table, and the static worst case.
import type { Expr, ExprOf } from "./ast.js";
import { approverCost, type ApproverCost } from "./approver-cost.js";
import type { TypeTable } from "./check.js";
import { error, type Diagnostic } from "./diagnostic.js";
import type { FunctionName } from "./environment.js";
import { LIMITS } from "./limits.js";

/**
 * Code units of a string that one unit of work reads: an operation that scans a string of `n`
 * code units costs `1 + floor(n / STRING_CODE_UNITS_PER_UNIT)` (docs/policy-language.md, "Cost").
 */
export const STRING_CODE_UNITS_PER_UNIT = 64;

/** The units of scanning a string of `n` code units (or one value that is no string: `n` = 0). */
export function stringUnits(n: number): number {
  return 1 + Math.floor(n / STRING_CODE_UNITS_PER_UNIT);
}

/**
 * The cost of a function, in units, from the sizes of its arguments: a string's size is its length
 * in UTF-16 code units, a list's its number of elements, any other value's 0. The same function
 * gives the static worst case (from the largest sizes an argument can have) and the charge at
 * run time (from the actual sizes), so the estimate bounds the charge.
 */
export type FunctionCost = (sizes: readonly number[]) => number;

/**
 * INVARIANT (one-cost-table): every function of the language has its cost here and nowhere else;
 * the checker, the static estimate and the evaluator all read this table. A function added to
 * FUNCTION_ARITY without a cost here does not compile.
 */
export const FUNCTION_COSTS: Readonly<Record<FunctionName, FunctionCost>> = Object.freeze({
  /** Compares at most the prefix's length of the string. */
  startsWith: (sizes: readonly number[]) => stringUnits(Math.min(sizes[0] ?? 0, sizes[1] ?? 0)),
  /** Compares at most the suffix's length of the string. */
  endsWith: (sizes: readonly number[]) => stringUnits(Math.min(sizes[0] ?? 0, sizes[1] ?? 0)),
  /** Counts code points, reading the whole string (a list's length is read at once, charged the same). */
  size: (sizes: readonly number[]) => stringUnits(sizes[0] ?? 0),
  /** Reads the whole string and writes a new one: four times a scan. */
  lower: (sizes: readonly number[]) => 4 * stringUnits(sizes[0] ?? 0),
});

/** The charge of calling `callee` on arguments of the given sizes (unknown callee: the dearest case). */
export function functionUnits(callee: string, sizes: readonly number[]): number {
  const cost = (FUNCTION_COSTS as Readonly<Record<string, FunctionCost | undefined>>)[callee];
  return Object.prototype.hasOwnProperty.call(FUNCTION_COSTS, callee) && cost !== undefined ? cost(sizes) : LIMITS.evaluationUnitsMax;
}

/** The size of a run-time value as FUNCTION_COSTS reads it. */
export function sizeOf(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (Array.isArray(value)) return value.length;
  return 0;
}

/**
 * Bounds of one subtree: `value`, the units of comparing its value with another (a string: its
 * scan; a list: one per element, and its elements' units); `size`, its size as a function argument;
 * `cost`, the units of evaluating it.
 */
interface Bound {
  readonly value: number;
  readonly size: number;
  readonly cost: number;
}

/**
 * The largest value `args` can hold: LIMITS.argsBytesMax bytes of JSON, where every unit of a
 * value takes at least two bytes (`0,` or `[]`; a string scan unit takes 64), and a string of at
 * most that many code units. Names of the environment are strings of the same bound, at worst.
 */
const DYNAMIC: Bound = Object.freeze({ value: LIMITS.argsBytesMax / 2, size: LIMITS.argsBytesMax, cost: 1 });
const SCALAR: Bound = Object.freeze({ value: 1, size: 0, cost: 1 });
const STRING_NAME: Bound = Object.freeze({ value: stringUnits(LIMITS.argsBytesMax), size: LIMITS.argsBytesMax, cost: 1 });

/** The static worst case of one policy. */
export interface CostEstimate {
  /** Nodes of the tree: what every evaluation is charged before it starts. */
  readonly nodes: number;
  /** The most units evaluating it with every name bound can take, whatever the action holds. */
  readonly evaluation: number;
  /** The most units deciding it with `approver` unknown can take (two passes and the search). */
  readonly decision: number;
}

/**
 * Measures `root`, checked, in one walk. Every subtree is evaluated at most once per pass (a
 * chain short-circuits, never repeats), so the sum over nodes of their worst case bounds a pass.
 */
export function costEstimate(root: Expr, types: TypeTable, search: ApproverCost = approverCost(root)): CostEstimate {
  let nodes = 0;
  const walk = (e: Expr): Bound => {
    nodes++;
    switch (e.kind) {
      case "int":
      case "bool":
      case "null":
        return SCALAR;
      case "string":
        return { value: stringUnits(e.value.length), size: e.value.length, cost: 1 };
      case "list": {
        let value = 1;
        let cost = 1;
        for (const x of e.elements) {
          const b = walk(x);
          value += b.value;
          cost += b.cost;
        }
        return { value, size: e.elements.length, cost };
      }
      case "name": {
        const t = types.get(e);
        if (t === "int") return SCALAR;
        return t === "dyn" ? { ...DYNAMIC, cost: 1 + e.path.length } : STRING_NAME;
      }
      case "call":
        return call(e);
      case "unary":
        return { ...SCALAR, cost: 1 + walk(e.operand).cost };
      case "binary":
        return binary(e);
    }
  };
  const call = (e: ExprOf<"call">): Bound => {
    const args = e.args.map(walk);
    const cost = 1 + args.reduce((n, b) => n + b.cost, 0) + functionUnits(e.callee, args.map((b) => b.size));
    // `lower` returns a string as long as its argument; every other function returns a scalar.
    return e.callee === "lower" ? { value: args[0]!.value, size: args[0]!.size, cost } : { ...SCALAR, cost };
  };
  const binary = (e: ExprOf<"binary">): Bound => {
    const l = walk(e.left);
    const r = walk(e.right);
    const both = 1 + l.cost + r.cost;
    switch (e.op) {
      case "==":
      case "!=":
        // Equality stops at the smaller side: lengths differ, or its last element is compared.
        return { ...SCALAR, cost: both + Math.min(l.value, r.value) };
      case "in": {
        // Each element is compared with the needle: at most the element's own units, and at most
        // the needle's and one more for the element, over at most LIMITS.listElementsMax elements.
        const elements = Math.min(r.size, LIMITS.listElementsMax);
        let compare = Math.min(r.value, elements * (l.value + 1));
        // A needle that is no list stops at the first element that is a list (a type error), and
        // scans each string element at most once: one unit per element and the scan of them all.
        if (types.get(e.left) !== "dyn") compare = Math.min(compare, elements + stringUnits(LIMITS.argsBytesMax));
        return { ...SCALAR, cost: both + compare };
      }
      case "<":
      case "<=":
      case ">":
      case ">=":
        return { ...SCALAR, cost: both + Math.min(l.value, r.value) };
      default:
        return { ...SCALAR, cost: both };
    }
  };
  const evaluation = walk(root).cost;
  if (search.residualNodes === 0) return { nodes, evaluation, decision: evaluation };
  // Deciding evaluates once with a null approver (no dearer than with a string), and once more at
  // most as much to build the residual (an approver-free part evaluates again; an atom reads its
  // other side and, for `in`, charges one unit per element, no more than comparing each did),
  // then searches the residual.
  return { nodes, evaluation, decision: 2 * evaluation + search.residualNodes + searchUnits(search.steps) };
}

/** Candidate × node tests of the approver search that one unit pays for. */
export const SEARCH_STEPS_PER_UNIT = 8;

export function searchUnits(steps: number): number {
  return Math.ceil(steps / SEARCH_STEPS_PER_UNIT);
}

/** The issue-time refusal of a policy whose worst case exceeds LIMITS.evaluationUnitsMax. */
export function costError(root: Expr, estimate: CostEstimate): Diagnostic | undefined {
  const worst = Math.max(estimate.evaluation, estimate.decision);
  if (worst <= LIMITS.evaluationUnitsMax) return undefined;
  return error(
    "policy-too-costly",
    `deciding this policy could take ${worst} units of work, more than the budget of ${LIMITS.evaluationUnitsMax}`,
    root.span,
    "compare `args` values with literals rather than with each other, and read fewer long lists and strings from `args`",
  );
}
