// Parameter patterns on a linear-time engine (RE2 syntax and semantics), with the work of every match bounded.
import { RE2JS, RE2JSSyntaxException } from "re2js";
import { FAMILY_LIMITS } from "./schema.js";

/**
 * INVARIANT (pattern-linear): a pattern is never run by the JavaScript `RegExp` engine, whose
 * backtracking makes `(a+)+$` exponential. RE2's automata match in time proportional to the size
 * of the compiled program times the length of the input, and both are bounded here: the program
 * by `patternInstructionsMax`, the input by `stringParameterCharsMax`. So one match costs at most
 * `instructions × (characters + 1)` work units, the figure the budgets below count.
 */
export interface CompiledPattern {
  readonly source: string;
  /** Instructions of the compiled RE2 program: the per-character cost of a match. */
  readonly instructions: number;
  /** Whether the whole of `value` matches (the pattern is anchored at both ends). */
  matches(value: string): boolean;
}

export type PatternResult =
  | { readonly ok: true; readonly pattern: CompiledPattern }
  /** `index`: where in the pattern the refused construct starts, when the engine says. */
  | { readonly ok: false; readonly reason: string; readonly index?: number };

/** The work units one match of `value` against `pattern` may cost, at most. */
export function matchCost(pattern: CompiledPattern, valueChars: number): number {
  return pattern.instructions * (valueChars + 1);
}

/** Compiled patterns by source: compiling costs more than most matches, and families repeat them. */
const cache = new Map<string, PatternResult>();
const CACHE_ENTRIES_MAX = 256;

/**
 * Compiles a parameter pattern, or says why it is refused: longer than `patternCharsMax`, outside
 * RE2's syntax (backreferences, lookaround, `\u` escapes), or compiling to more than
 * `patternInstructionsMax` instructions. The pattern matches the whole value, as before; it is
 * compiled as written, never spliced into a larger expression.
 */
export function compilePattern(source: string): PatternResult {
  const cached = cache.get(source);
  if (cached !== undefined) return cached;
  const result = compileUncached(source);
  if (cache.size >= CACHE_ENTRIES_MAX) cache.delete(cache.keys().next().value!);
  cache.set(source, result);
  return result;
}

function compileUncached(source: string): PatternResult {
  if (source.length > FAMILY_LIMITS.patternCharsMax) {
    return { ok: false, reason: `the pattern has ${source.length} characters, more than ${FAMILY_LIMITS.patternCharsMax}` };
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (error) {
    const message = error instanceof Error ? error.message.replace(/^error parsing regexp: /, "") : "invalid";
    const fragment = error instanceof RE2JSSyntaxException ? error.input : null;
    const index = fragment === null || fragment === "" ? -1 : source.indexOf(fragment);
    return { ok: false, reason: `the pattern is not in the accepted syntax (RE2): ${message}`, ...(index >= 0 ? { index } : {}) };
  }
  const instructions = programSize(re);
  if (instructions > FAMILY_LIMITS.patternInstructionsMax) {
    return { ok: false, reason: `the pattern compiles to ${instructions} instructions, more than ${FAMILY_LIMITS.patternInstructionsMax}` };
  }
  const matches = (value: string): boolean => value.length <= FAMILY_LIMITS.stringParameterCharsMax && re.matches(value);
  return { ok: true, pattern: { source, instructions, matches } };
}

/** The size of the compiled program, or the most allowed plus one when the engine does not say (refused: fail closed). */
function programSize(re: RE2JS): number {
  const program: unknown = re.re2().prog;
  const numInst = (program as { numInst?: unknown } | null)?.numInst;
  if (typeof numInst !== "function") return FAMILY_LIMITS.patternInstructionsMax + 1;
  const size: unknown = numInst.call(program);
  return typeof size === "number" && Number.isSafeInteger(size) && size > 0 ? size : FAMILY_LIMITS.patternInstructionsMax + 1;
}

/** What one check under a budget found. */
export type PatternCheck = "match" | "mismatch" | "over-budget";

/**
 * A count of match work, shared by every check of one compile or one instantiation. A match the
 * remaining units cannot pay for is not run: `over-budget`, which the caller reports as a refusal
 * (fail closed), never as a match.
 */
export class PatternBudget {
  readonly units: number;
  #remaining: number;
  readonly #seen = new Map<string, boolean>();

  constructor(units: number) {
    this.units = units;
    this.#remaining = units;
  }

  /** Checks `value` against `pattern`; a pair already checked costs nothing again. */
  check(pattern: CompiledPattern, value: string): PatternCheck {
    const key = `${pattern.source.length}:${pattern.source}${value}`;
    const known = this.#seen.get(key);
    if (known !== undefined) return known ? "match" : "mismatch";
    const cost = matchCost(pattern, value.length);
    if (cost > this.#remaining || value.length > FAMILY_LIMITS.stringParameterCharsMax) return "over-budget";
    this.#remaining -= cost;
    const result = pattern.matches(value);
    if (this.#seen.size < FAMILY_LIMITS.patternMemoEntriesMax) this.#seen.set(key, result);
    return result ? "match" : "mismatch";
  }
}

/**
 * The most one instantiation's pattern checks can cost: each string parameter with a pattern
 * matches one value of at most its `max_length` characters. A family over
 * `patternMatchUnitsMax` is refused when it is compiled, so an instantiation never is.
 */
export function instantiationCost(
  specs: Readonly<Record<string, { readonly type: string; readonly pattern?: string; readonly max_length?: number }>>,
): number {
  let total = 0;
  for (const spec of Object.values(specs)) {
    if (spec.type !== "string" || spec.pattern === undefined) continue;
    const compiled = compilePattern(spec.pattern);
    if (!compiled.ok) continue;
    total += matchCost(compiled.pattern, spec.max_length ?? FAMILY_LIMITS.stringParameterCharsMax);
  }
  return total;
}

/** An unanchored search with RE2 semantics (for `authority test --run`), or the reason the pattern is refused. */
export function searchPattern(source: string): { ok: true; test: (text: string) => boolean } | { ok: false; reason: string } {
  const compiled = compilePattern(source);
  if (!compiled.ok) return compiled;
  const re = RE2JS.compile(source);
  return { ok: true, test: (text) => text.length <= FAMILY_LIMITS.stringParameterCharsMax && re.test(text) };
}
