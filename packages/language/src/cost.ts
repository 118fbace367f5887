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
 * Units of work per 64 code units of a string argument, per kind of work: the measured rate of
 * `npm run bench -- cost-table` on the reference machine, rounded up to a power of two with at
 * least 1.5 times margin for a loaded machine, so that a unit stays under about 15 ns
 * (1 ms / LIMITS.evaluationUnitsMax). The measurements are in docs/decisions/0144-measured-cost-table.md.
 */
export const UNITS_PER_64_CODE_UNITS = Object.freeze({
  /** `size` of a string: counts code points one code unit at a time (measured about 7). */
  codePoints: 16,
  /** `startsWith`, `endsWith`: compare the shorter argument's code units (measured about 2.3). */
  affix: 4,
  /** `lower`: reads the string and writes a new one (measured about 0.5). */
  lower: 4,
  /** The path functions: check, split, rejoin and compare, per code unit of a path (measured 70 to 150). */
  path: 256,
  /**
   * Reading one URL argument, per 64 UTF-8 bytes, once per distinct string of an evaluation
   * (urlReadingUnits): WHATWG parsing and its checks, a `file:` URI's path decoded and resolved, or
   * both (measured 65 to 160 per 64 bytes, docs/decisions/0147).
   */
  url: 256,
});

/** The units of work that reads `n` code units at `rate` units per 64 of them. */
export function scanUnits(n: number, rate: number): number {
  return 1 + Math.floor((n * rate) / 64);
}

/**
 * The units of a path or URL function over arguments of the given sizes: a string longer than
 * `max` code units is refused before it is read (its UTF-8 form is longer still), so no more than
 * `max` of each is ever parsed.
 */
function parseUnits(sizes: readonly number[], max: number, rate: number): number {
  const a = Math.min(sizes[0] ?? 0, max);
  const b = Math.min(sizes[1] ?? 0, max);
  return scanUnits(a + b, rate);
}

const first = (sizes: readonly number[]): number => sizes[0] ?? 0;
const shorter = (sizes: readonly number[]): number => Math.min(sizes[0] ?? 0, sizes[1] ?? 0);
const RATE = UNITS_PER_64_CODE_UNITS;
const path = (sizes: readonly number[]): number => parseUnits(sizes, LIMITS.pathBytesMax, RATE.path);
/** A URL function past its arguments' readings: one field read, or urlWithin's comparison of paths. */
const urlField = (): number => 1;
const urlCompare = (sizes: readonly number[]): number => scanUnits(Math.min(shorter(sizes), LIMITS.urlBytesMax), RATE.affix);

/**
 * The units of reading one URL argument of `n` code units (UrlReading of paths.ts), at RATE.url per
 * 64 bytes it may take (URL_BYTES_PER_CODE_UNIT, at most LIMITS.urlBytesMax): charged once per
 * distinct string in an evaluation, on top of FUNCTION_COSTS, by the evaluator; once per distinct
 * argument expression by the static estimate (the same expression gives the same string). The
 * evaluator refuses a string over the limit unread, so no reading is charged for more than it.
 */
export function urlReadingUnits(n: number): number {
  return scanUnits(Math.min(URL_BYTES_PER_CODE_UNIT * n, LIMITS.urlBytesMax), RATE.url);
}

/**
 * The UTF-8 bytes a code unit may take (a surrogate pair takes 4 for 2): a URL's work grows with its
 * bytes, since the parser escapes each byte of a character beyond ASCII as three (`∂` is `%E2%88%82`)
 * and the checks decode them again, so a reading is charged for the bytes its code units may take,
 * up to the byte limit (docs/decisions/0147).
 */
export const URL_BYTES_PER_CODE_UNIT = 3;

/** The functions that read their arguments through an evaluation's URL readings (urlReadingUnits). */
export const URL_READING_FUNCTIONS: ReadonlySet<string> = new Set([
  "urlWithin",
  "urlScheme",
  "urlHost",
  "urlPort",
  "urlPath",
  "fileUriPath",
]);

/**
 * INVARIANT (one-cost-table): every function of the language has its cost here and nowhere else;
 * the checker, the static estimate and the evaluator all read this table. A function added to
 * FUNCTION_ARITY without a cost here does not compile.
 */
export const FUNCTION_COSTS: Readonly<Record<FunctionName, FunctionCost>> = Object.freeze({
  /** Compares at most the prefix's length of the string. */
  startsWith: (sizes: readonly number[]) => scanUnits(shorter(sizes), RATE.affix),
  /** Compares at most the suffix's length of the string. */
  endsWith: (sizes: readonly number[]) => scanUnits(shorter(sizes), RATE.affix),
  /** Counts code points, reading the whole string (a list's length is read at once, charged the same). */
  size: (sizes: readonly number[]) => scanUnits(first(sizes), RATE.codePoints),
  lower: (sizes: readonly number[]) => scanUnits(first(sizes), RATE.lower),
  pathWithin: path,
  pathNormalize: path,
  relPathWithin: path,
  relPathNormalize: path,
  /** Past the readings of its arguments (urlReadingUnits): compares the shorter path once. */
  urlWithin: urlCompare,
  /** Past the reading of its argument (urlReadingUnits): reads one field. */
  urlScheme: urlField,
  urlHost: urlField,
  urlPort: urlField,
  urlPath: urlField,
  /** Past the reading of its argument, a `file:` URI's path resolved (urlReadingUnits): joins its segments. */
  fileUriPath: (sizes: readonly number[]) => scanUnits(Math.min(first(sizes), LIMITS.urlBytesMax), RATE.lower),
});

/**
 * The functions whose result is a string no longer than their first argument (a normalized path
 * is never longer than the path; a URL's part never longer than the URL, in code units, except
 * for an IDNA host, which the URL byte limit bounds): the estimate carries that size on.
 */
const STRING_RESULTS: ReadonlySet<string> = new Set([
  "lower",
  "pathNormalize",
  "relPathNormalize",
  "urlScheme",
  "urlHost",
  "urlPath",
  "fileUriPath",
]);

/** The charge of calling `callee` on arguments of the given sizes (unknown callee: the dearest case). */
export function functionUnits(callee: string, sizes: readonly number[]): number {
  const cost = (FUNCTION_COSTS as Readonly<Record<string, FunctionCost | undefined>>)[callee];
  return Object.hasOwn(FUNCTION_COSTS, callee) && cost !== undefined ? cost(sizes) : LIMITS.evaluationUnitsMax;
}

/** The size of a run-time value as FUNCTION_COSTS reads it. */
export function sizeOf(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (Array.isArray(value)) return value.length;
  return 0;
}

/**
 * The largest value `args` can hold: LIMITS.argsBytesMax bytes of JSON, where every unit of a
 * value takes at least two bytes (`0,` or `[]`; a string scan unit takes 64), and a string of at
 * most that many code units. Names of the environment are strings of the same bound, at worst.
 */
const DYNAMIC_VALUE = LIMITS.argsBytesMax / 2;
const DYNAMIC_SIZE = LIMITS.argsBytesMax;
const STRING_NAME_VALUE = stringUnits(LIMITS.argsBytesMax);

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
  const walk = new CostWalk(types);
  const evaluation = walk.cost(root);
  const nodes = walk.nodes;
  if (search.residualNodes === 0) return { nodes, evaluation, decision: evaluation };
  // Deciding evaluates once with a null approver (no dearer than with a string), and once more at
  // most as much to build the residual (an approver-free part evaluates again; an atom reads its
  // other side and, for `in`, charges one unit per element, no more than comparing each did),
  // then searches the residual.
  return { nodes, evaluation, decision: 2 * evaluation + search.residualNodes + searchUnits(search.steps) };
}

/**
 * One walk of a tree. `cost(e)` answers the units of evaluating `e` and leaves in `value` the units
 * of comparing its value with another (a string: its scan; a list: one per element, and its
 * elements' units) and in `size` its size as a function argument: outputs in fields rather than an
 * object per node, so that compiling a small policy allocates nothing here.
 */
class CostWalk {
  nodes = 0;
  value = 1;
  size = 0;
  /** The names and literals given to URL functions and already charged their reading, by their text. */
  private readonly urlArguments = new Set<string>();

  constructor(private readonly types: TypeTable) {}

  private scalar(cost: number): number {
    this.value = 1;
    this.size = 0;
    return cost;
  }

  cost(e: Expr): number {
    this.nodes++;
    switch (e.kind) {
      case "int":
      case "bool":
      case "null":
        return this.scalar(1);
      case "string":
        this.value = stringUnits(e.value.length);
        this.size = e.value.length;
        return 1;
      case "list": {
        let value = 1;
        let cost = 1;
        for (const x of e.elements) {
          cost += this.cost(x);
          value += this.value;
        }
        this.value = value;
        this.size = e.elements.length;
        return cost;
      }
      case "name":
        return this.name(e);
      case "call":
        return this.call(e);
      case "unary":
        return this.scalar(1 + this.cost(e.operand));
      case "binary":
        return this.binary(e);
    }
  }

  private name(e: ExprOf<"name">): number {
    const t = this.types.get(e)?.kind;
    if (t === "int") return this.scalar(1);
    this.value = t === "dyn" ? DYNAMIC_VALUE : STRING_NAME_VALUE;
    this.size = DYNAMIC_SIZE;
    return 1 + e.path.length;
  }

  private call(e: ExprOf<"call">): number {
    let cost = 1;
    const sizes: number[] = [];
    let firstValue = 1;
    for (const [i, a] of e.args.entries()) {
      cost += this.cost(a);
      sizes.push(this.size);
      if (i === 0) firstValue = this.value;
    }
    cost += functionUnits(e.callee, sizes) + this.urlReadings(e, sizes);
    // `lower` and the normalizing functions return a string at most as long as their argument
    // (STRING_RESULTS); every other function returns a scalar.
    if (!STRING_RESULTS.has(e.callee)) return this.scalar(cost);
    this.value = firstValue;
    this.size = sizes[0] ?? 0;
    return cost;
  }

  /**
   * The readings a URL function's arguments take (urlReadingUnits): one per name or literal not read
   * before in this policy, as the evaluator reads one per distinct string. An expression gives
   * one string in one evaluation (no name changes during it), so this bounds what is charged.
   */
  private urlReadings(e: ExprOf<"call">, sizes: readonly number[]): number {
    if (!URL_READING_FUNCTIONS.has(e.callee)) return 0;
    let units = 0;
    for (const [i, a] of e.args.entries()) {
      // A name or a literal is shared by its text; any other argument is charged each time (sound,
      // and no argument's text is printed, which nesting would make quadratic).
      const key = a.kind === "name" ? `${a.name}.${a.path.join(".")}` : a.kind === "string" ? JSON.stringify(a.value) : undefined;
      if (key !== undefined && this.urlArguments.has(key)) continue;
      if (key !== undefined) this.urlArguments.add(key);
      units += urlReadingUnits(sizes[i] ?? 0);
    }
    return units;
  }

  private binary(e: ExprOf<"binary">): number {
    const lc = this.cost(e.left);
    const lv = this.value;
    const rc = this.cost(e.right);
    const rv = this.value;
    const rs = this.size;
    const both = 1 + lc + rc;
    switch (e.op) {
      case "==":
      case "!=":
      case "<":
      case "<=":
      case ">":
      case ">=":
        // Equality and ordering stop at the smaller side: lengths differ, or its last element is compared.
        return this.scalar(both + Math.min(lv, rv));
      case "in": {
        // Each element is compared with the needle: at most the element's own units, and at most
        // the needle's and one more for the element, over at most LIMITS.listElementsMax elements.
        const elements = Math.min(rs, LIMITS.listElementsMax);
        let compare = Math.min(rv, elements * (lv + 1));
        // A needle that is no list stops at the first element that is a list (a type error), and
        // scans each string element at most once: one unit per element and the scan of them all.
        if (this.types.get(e.left)?.kind !== "dyn") compare = Math.min(compare, elements + stringUnits(LIMITS.argsBytesMax));
        return this.scalar(both + compare);
      }
      default:
        return this.scalar(both);
    }
  }
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
