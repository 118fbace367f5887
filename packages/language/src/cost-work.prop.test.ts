// Issue 50: the units each function is charged against the work it does, counted deterministically
// (code units a plain reference reads), never timed. Every call is charged at least the table's
// rate for the work the reference does, and the evaluator charges exactly what FUNCTION_COSTS says
// (and, for the URL functions, one reading per distinct string, urlReadingUnits).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SAMPLE_ENVIRONMENT } from "../test-support/arbitraries.js";
import { FUNCTION_COSTS, URL_READING_FUNCTIONS, UNITS_PER_64_CODE_UNITS as RATE, urlReadingUnits } from "./cost.js";
import type { FunctionName } from "./environment.js";
import { LIMITS, utf8Length } from "./limits.js";
import { compilePolicy, costMeter } from "./policy.js";

const params = (runs: number): fc.Parameters<unknown> => ({ numRuns: runs, seed: Number(process.env["FC_SEED"] ?? 20261128) });

/** Code units a reference `startsWith` reads: each pair compared until the first that differs. */
function affixWork(s: string, p: string, fromEnd: boolean): number {
  if (p.length > s.length) return 0;
  let read = 0;
  for (let i = 0; i < p.length; i++) {
    const a = fromEnd ? s.charCodeAt(s.length - 1 - i) : s.charCodeAt(i);
    const b = fromEnd ? p.charCodeAt(p.length - 1 - i) : p.charCodeAt(i);
    read++;
    if (a !== b) break;
  }
  return read;
}

/** Code units a reference code point count reads: all of them, one at a time. */
function sizeWork(s: string): number {
  let read = 0;
  for (let i = 0; i < s.length; i++) read++;
  return read;
}

/** Code units a path or URL function parses: each argument in full, unless one is over its limit (refused unread). */
function parseWork(a: string, b: string, max: number): number {
  return a.length > max || b.length > max ? 0 : a.length + b.length;
}

/**
 * UTF-8 bytes a URL function's readings parse: each distinct argument once, in full, unless one is
 * over its limit (refused unread). The parser's work grows with bytes, not code units (0147).
 */
function readingWork(a: string, b: string): number {
  if (a.length > LIMITS.urlBytesMax || b.length > LIMITS.urlBytesMax) return 0;
  return Math.min(utf8Length(a), LIMITS.urlBytesMax) + (a === b ? 0 : Math.min(utf8Length(b), LIMITS.urlBytesMax));
}

/** The units a first call of `callee` is charged: FUNCTION_COSTS, and a URL function's readings of its distinct arguments. */
function firstCallUnits(callee: FunctionName, a: string, b: string): number {
  const units = FUNCTION_COSTS[callee]([a.length, b.length]);
  if (!URL_READING_FUNCTIONS.has(callee)) return units;
  return units + urlReadingUnits(a.length) + (WORK[callee].arity === 2 && b !== a ? urlReadingUnits(b.length) : 0);
}

/** Each function: its rate, its reference work, and whether it reads a second argument. */
const WORK: Readonly<Record<FunctionName, { rate: number; work: (a: string, b: string) => number; arity: 1 | 2 }>> = {
  size: { rate: RATE.codePoints, work: (a) => sizeWork(a), arity: 1 },
  startsWith: { rate: RATE.affix, work: (a, b) => affixWork(a, b, false), arity: 2 },
  endsWith: { rate: RATE.affix, work: (a, b) => affixWork(a, b, true), arity: 2 },
  lower: { rate: RATE.lower, work: (a) => a.length, arity: 1 },
  pathWithin: { rate: RATE.path, work: (a, b) => parseWork(a, b, LIMITS.pathBytesMax), arity: 2 },
  pathNormalize: { rate: RATE.path, work: (a) => parseWork(a, "", LIMITS.pathBytesMax), arity: 1 },
  relPathWithin: { rate: RATE.path, work: (a, b) => parseWork(a, b, LIMITS.pathBytesMax), arity: 2 },
  relPathNormalize: { rate: RATE.path, work: (a) => parseWork(a, "", LIMITS.pathBytesMax), arity: 1 },
  urlWithin: { rate: RATE.url, work: (a, b) => readingWork(a, b), arity: 2 },
  urlScheme: { rate: RATE.url, work: (a) => readingWork(a, a), arity: 1 },
  urlHost: { rate: RATE.url, work: (a) => readingWork(a, a), arity: 1 },
  urlPort: { rate: RATE.url, work: (a) => readingWork(a, a), arity: 1 },
  urlPath: { rate: RATE.url, work: (a) => readingWork(a, a), arity: 1 },
  fileUriPath: { rate: RATE.url, work: (a) => readingWork(a, a), arity: 1 },
};

/** Strings of paths, URLs and text, short and up to past the limits. */
const piece = fc.constantFrom("a", "/", "é", "∂", "😀", ".", "..", "A", "https://x.example/", "file:///", "%2e");
const text = fc.oneof(
  fc.array(piece, { maxLength: 40 }).map((p) => p.join("")),
  fc.tuple(fc.constantFrom("/", "https://x.example/", "a"), fc.integer({ min: 0, max: 12_000 })).map(([head, n]) => head + "a/".repeat(n)),
);
/** Two strings, the second often a prefix or suffix of the first, so that affixes compare far. */
const pair = fc.oneof(
  fc.tuple(text, text),
  text.chain((s) =>
    fc.tuple(
      fc.constant(s),
      fc.integer({ min: 0, max: s.length }).map((k) => s.slice(0, k)),
    ),
  ),
  text.chain((s) =>
    fc.tuple(
      fc.constant(s),
      fc.integer({ min: 0, max: s.length }).map((k) => s.slice(s.length - k)),
    ),
  ),
);

/** A policy of one call of `callee` on `args.a` (and `args.b`), its result read at no charge. */
function policyOf(callee: FunctionName): string {
  const call = WORK[callee].arity === 1 ? `${callee}(args.a)` : `${callee}(args.a, args.b)`;
  if (callee === "size" || callee === "urlPort") return `${call} >= 0`;
  if (callee === "startsWith" || callee === "endsWith" || callee.endsWith("Within")) return call;
  return `size(${call}) >= 0`;
}

/** The units the evaluator charges for `calls` calls (joined by `&&`) beyond the policy's nodes. */
function charged(callee: FunctionName, a: string, b: string, calls = 1): number {
  const text = Array.from({ length: calls }, () => policyOf(callee)).join(" && ");
  const result = compilePolicy(text, { origin: "stored" });
  if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
  const meter = costMeter();
  const env = { ...SAMPLE_ENVIRONMENT, args: { a, b } };
  const value = result.policy.evaluate(env, meter);
  // A later call runs only when the first held; a refused input stops at the first.
  if (calls > 1 && !(value.ok && value.value)) return Number.NaN;
  return meter.spent - result.policy.cost.nodes;
}

/** Whether a path or URL function refuses an argument over its limit before charging for it. */
function refusedUnread(callee: FunctionName, a: string, b: string): boolean {
  const url = callee.startsWith("url") || callee === "fileUriPath";
  const max = url ? LIMITS.urlBytesMax : callee.includes("ath") ? LIMITS.pathBytesMax : Number.POSITIVE_INFINITY;
  return a.length > max || b.length > max;
}

describe("the cost table against the work each function does", () => {
  for (const callee of Object.keys(WORK) as FunctionName[]) {
    it(`\`${callee}\`: charged at least its rate for the code units a reference reads, exactly as FUNCTION_COSTS says`, () => {
      fc.assert(
        fc.property(pair, ([a, second]) => {
          const { rate, work, arity } = WORK[callee];
          const b = arity === 1 ? "" : second;
          const units = firstCallUnits(callee, a, b);
          expect(units).toBeGreaterThanOrEqual(1 + Math.floor((work(a, b) * rate) / 64));
          // Charged no more than the table's rate for the most it may read: the charge tracks the work.
          const most = URL_READING_FUNCTIONS.has(callee) ? 3 * (a.length + b.length) + 64 : a.length + b.length;
          expect(units).toBeLessThanOrEqual(2 + Math.floor((most * rate) / 64));
          // The evaluator charges the table's units before the call, or nothing for an input refused unread.
          expect(charged(callee, a, b)).toBe(refusedUnread(callee, a, b) ? 0 : units);
        }),
        params(120),
      );
    });
  }
});

describe("a URL argument read once per evaluation", () => {
  for (const callee of [...URL_READING_FUNCTIONS] as FunctionName[]) {
    it(`\`${callee}\` called again on the same strings pays only FUNCTION_COSTS, not another reading`, () => {
      fc.assert(
        fc.property(pair, ([a, second]) => {
          const b = WORK[callee].arity === 1 ? "" : second;
          const twice = charged(callee, a, b, 2);
          // Only when the first call held does the second run; then it pays FUNCTION_COSTS alone.
          if (!Number.isNaN(twice)) expect(twice).toBe(firstCallUnits(callee, a, b) + FUNCTION_COSTS[callee]([a.length, b.length]));
        }),
        params(60),
      );
    });
  }
});
