// Run-time values and their semantics, shared by the compiled evaluator and partial evaluation.
import type { Span } from "@agent-authority/grammar";
import { stringUnits } from "./cost.js";
import { error, type Diagnostic } from "./diagnostic.js";
import { LIMITS } from "./limits.js";
import type { UrlReading } from "./paths.js";

/**
 * A value is a number (safe integer), string, boolean, null, or an array of values; a dynamic
 * value read from `args` may be any JSON value until it is used.
 */
export type Value = unknown;

/**
 * Returned instead of a value when evaluation fails: the reason, frozen. It is allocated only when
 * evaluation fails, so the common path allocates nothing, and it travels up as the result of each
 * enclosing node (decision 0140).
 */
export class Failure {
  constructor(readonly diagnostic: Diagnostic) {
    Object.freeze(this);
  }
}

/** What evaluating a node gives: its value, or the failure that stopped it. */
export type Evaluated = Value | Failure;

export function fail(
  code: "runtime-type" | "integer-overflow" | "list-too-long" | "value-too-deep" | "cost-exceeded" | "invalid-path" | "invalid-url",
  message: string,
  span: Span,
  help?: string,
): Failure {
  return new Failure(error(code, message, span, help));
}

/**
 * The work units charged so far by one evaluation, and its limit (cost.ts, docs/policy-language.md
 * "Cost"). Each evaluation gets its own, passed down to every node that charges (decision 0140).
 *
 * INVARIANT (charged-before-work): every operation whose work grows with the size of a value
 * (equality and ordering of values from `args`, `in` over a list, the functions) charges its units
 * before or while it does that work, and stops with `cost-exceeded` once the limit is passed; work
 * that does not grow with a value is bounded by the policy's nodes, charged when evaluation starts.
 */
export interface Meter {
  spent: number;
  readonly limit: number;
  /**
   * The URL functions' readings of each distinct string this evaluation gave them, made and charged
   * once (cost.ts, urlReadingUnits): absent until the first URL function runs.
   */
  urls?: Map<string, UrlReading> | undefined;
  /**
   * Set when the evaluation reads `approver`. A decision evaluated with no approval that never
   * reads it took the path every approver would take: its outcome is theirs too (policy.ts).
   */
  approverRead?: boolean;
}

/**
 * The meter given to a tree that cannot fail, which never charges one (INVARIANT
 * (charging-can-fail) of compile.ts): frozen, so that a charge would throw rather than count.
 */
export const NEVER_CHARGED: Meter = Object.freeze({ spent: 0, limit: 0 });

/** A meter without a limit, for evaluating constants when a policy is linted (its work is bounded by its nodes). */
export function unmetered(): Meter {
  return { spent: 0, limit: Number.POSITIVE_INFINITY, urls: undefined };
}

/** Charges `units` to `meter`; a failure (`cost-exceeded`) when that takes it past its limit. */
export function charge(meter: Meter, units: number, span: Span): Failure | undefined {
  meter.spent += units;
  return meter.spent <= meter.limit ? undefined : costExceeded(meter, span);
}

export function costExceeded(meter: Meter, span: Span): Failure {
  return fail(
    "cost-exceeded",
    `evaluation used more than its budget of ${meter.limit} work units`,
    span,
    "the action's `args` are too large for what this policy does with them; the policy refuses",
  );
}

/** The units of comparing two scalars: a scan of the shorter string, or one. */
function pairUnits(a: Value, b: Value): number {
  return typeof a === "string" && typeof b === "string" ? stringUnits(Math.min(a.length, b.length)) : 1;
}

/** Describes a value's type for a message. */
export function describe(value: Value): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "number") return Number.isSafeInteger(value) ? "int" : "number that is not a safe integer";
  if (typeof value === "string") return "string";
  if (typeof value === "boolean") return "bool";
  if (Array.isArray(value)) return "list";
  return "object";
}

export function isInt(value: Value): value is number {
  return typeof value === "number" && Number.isSafeInteger(value);
}

/** Reads `args.<path>`: an absent field (at any depth) is null; own properties only, never the prototype chain. */
export function readPath(args: unknown, path: readonly string[]): Value {
  let value: unknown = args;
  for (let i = 0; i < path.length; i++) {
    if (value === null || value === undefined || typeof value !== "object" || Array.isArray(value)) return null;
    const key = path[i]!;
    value = Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : null;
  }
  return value === undefined ? null : value;
}

/**
 * Equality: `null` equals only `null`; otherwise both values must have one type (else a run-time
 * type error, fail closed). Lists are equal element by element, compared depth first and left to
 * right, and the first pair that differs (or fails) decides.
 *
 * INVARIANT (bounded-values): every list that enters from `args` is checked against
 * LIMITS.listElementsMax (here, in `member` and in `size`) and its nesting against
 * LIMITS.valueDepthMax, with an explicit stack: no value, however long, deep or even cyclic, can
 * make evaluation recurse or run without bound (docs/decisions/0118-bounded-dynamic-values.md).
 */
export function equals(a: Value, b: Value, meter: Meter, span: Span): boolean | Failure {
  if (a === null || a === undefined || b === null || b === undefined) return charge(meter, 1, span) ?? (a ?? null) === (b ?? null);
  const t = typeof a;
  if (t === typeof b && (t === "string" || t === "boolean" || (t === "number" && Number.isSafeInteger(a) && Number.isSafeInteger(b)))) {
    return charge(meter, pairUnits(a, b), span) ?? a === b;
  }
  const first = comparePair(a, b, 0, meter, span);
  if (first !== DESCEND) return first;
  // Two lists of one length: walk them depth first, left to right, one element pair per step, each
  // charged before it is compared (INVARIANT (charged-before-work)); a frame per open list.
  const lefts: Value[][] = [a as Value[]];
  const rights: Value[][] = [b as Value[]];
  const next: number[] = [0];
  while (lefts.length > 0) {
    const top = lefts.length - 1;
    const la = lefts[top]!;
    const i = next[top]!;
    if (i === la.length) {
      lefts.pop();
      rights.pop();
      next.pop();
      continue;
    }
    next[top] = i + 1;
    const x = la[i];
    const y = rights[top]![i];
    const r = comparePair(x, y, lefts.length, meter, span);
    if (r === true) continue;
    if (r !== DESCEND) return r;
    // Two lists of one length, to be walked.
    lefts.push(x as Value[]);
    rights.push(y as Value[]);
    next.push(0);
  }
  return true;
}

/** Two lists of one length: their elements are still to compare. */
const DESCEND: unique symbol = Symbol("descend");

/**
 * Compares one pair after charging it: true (an equal scalar pair) or false, a failure on a type error
 * or past the budget, and DESCEND for two lists of one length.
 */
function comparePair(a: Value, b: Value, depth: number, meter: Meter, span: Span): boolean | Failure | typeof DESCEND {
  const over = charge(meter, pairUnits(a, b), span);
  if (over !== undefined) return over;
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  // The common pairs first, without describing their types.
  const t = typeof a;
  if (t === typeof b && (t === "string" || t === "boolean" || (t === "number" && Number.isSafeInteger(a) && Number.isSafeInteger(b))))
    return a === b;
  const tooLong = listTooLong(a, span) ?? listTooLong(b, span);
  if (tooLong !== undefined) return tooLong;
  const ta = describe(a);
  const tb = describe(b);
  if (ta !== tb || ta === "object" || ta.startsWith("number")) {
    return fail(
      "runtime-type",
      `cannot compare \`${ta}\` with \`${tb}\``,
      span,
      "a value from `args` has a type the policy did not expect",
    );
  }
  if (ta !== "list") return a === b;
  if (depth >= LIMITS.valueDepthMax) return tooDeep(span);
  return (a as Value[]).length === (b as Value[]).length ? DESCEND : false;
}

/** A failure (`list-too-long`) when `value` is a list longer than LIMITS.listElementsMax. */
export function listTooLong(value: Value, span: Span): Failure | undefined {
  if (!Array.isArray(value) || value.length <= LIMITS.listElementsMax) return undefined;
  return fail("list-too-long", `list of ${value.length} elements is longer than ${LIMITS.listElementsMax}`, span);
}

function tooDeep(span: Span): Failure {
  return fail("value-too-deep", `a value from \`args\` nests lists deeper than ${LIMITS.valueDepthMax} levels`, span);
}

/**
 * Membership: `x in [a, b]` means `x == a || x == b`, elements tried left to right, so a mismatched
 * type is a run-time error unless an earlier element already matched.
 */
export function member(needle: Value, list: Value, meter: Meter, span: Span): boolean | Failure {
  if (!Array.isArray(list)) return fail("runtime-type", `\`in\` needs a list, not \`${describe(list)}\``, span);
  const tooLong = listTooLong(list, span) ?? listTooLong(needle, span);
  if (tooLong !== undefined) return tooLong;
  if (typeof needle === "string") {
    // The common case, a string among strings, inline: the same charges and answers as `equals`.
    for (let i = 0; i < list.length; i++) {
      const element = list[i];
      if (typeof element !== "string") {
        const r = equals(needle, element, meter, span);
        if (r !== false) return r;
        continue;
      }
      meter.spent += element.length < needle.length ? stringUnits(element.length) : stringUnits(needle.length);
      if (meter.spent > meter.limit) return costExceeded(meter, span);
      if (element === needle) return true;
    }
    return false;
  }
  for (let i = 0; i < list.length; i++) {
    const element = list[i];
    const r = equals(needle, element, meter, span);
    if (r !== false) return r;
  }
  return false;
}

/** Compares strings in code-point order (JavaScript's `<` compares UTF-16 code units). */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    // A surrogate stands for a code point above U+FFFF: above every BMP unit past the surrogate block.
    if (xs && !ys && y >= 0xe000) return 1;
    if (ys && !xs && x >= 0xe000) return -1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** The number of code points in `s`. */
export function codePointLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const unit = s.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n--;
      i++;
    }
  }
  return n;
}
