// Parameter patterns as the solver's regular expressions, checked against the engine families use (RE2): every string the solver says matches does, and every one it says does not, does not.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compilePattern } from "@agent-authority/families";
import type { Bool } from "z3-solver";
import { createAnalyzer, type Analyzer } from "./index.js";
import { checkPatternSubset, matchesPattern } from "./pattern.js";
import { stringValue, Unsupported } from "./strings.js";

let analyzer: Analyzer;
beforeAll(async () => {
  analyzer = await createAnalyzer();
});
afterAll(async () => {
  await analyzer.close();
});

const PATTERNS = [
  "org/[a-z]+",
  "(org|team)/[a-z]{2,4}",
  "cus_[a-z0-9]{8,24}",
  "[^a-c]x?",
  "a.b",
  "\\d+\\.\\d{2}",
  "\\w+-\\W",
  "[\\s-]*z",
  "x{3}|y{0,2}",
  "(?:ab)*c",
  "^[A-Z][a-z]*$",
  "[]a]",
  "[a-]b",
  "\\S\\D",
  "(?P<n>q)+?r{2,}",
];

/** Up to `n` distinct strings of at most `length` code points for which `inside` holds (or its negation). */
async function strings(pattern: string, inRe: boolean, n: number, length: number): Promise<string[]> {
  const c = analyzer.ctx;
  const s = c.String.const("s");
  const solver = new c.Solver();
  solver.set("timeout", 5_000);
  const member: Bool<"main"> = matchesPattern(c, s, pattern);
  solver.add(inRe ? member : c.Not(member), s.length().le(length));
  const out: string[] = [];
  while (out.length < n && (await solver.check()) === "sat") {
    const value = stringValue(solver.model(), s);
    out.push(value);
    solver.add(c.Not(s.eq(c.String.val(value.replace(/[^ -~]|\\/g, (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`)))));
  }
  return out;
}

describe("patterns for the solver", () => {
  it.each(PATTERNS)("`%s`: the solver's members match, its non-members do not", async (pattern) => {
    const compiled = compilePattern(pattern);
    if (!compiled.ok) throw new Error(compiled.reason);
    const inside = await strings(pattern, true, 4, 12);
    expect(inside.length).toBeGreaterThan(0);
    for (const s of inside) expect([s, compiled.pattern.matches(s)]).toEqual([s, true]);
    const outside = await strings(pattern, false, 4, 6);
    expect(outside.length).toBeGreaterThan(0);
    for (const s of outside) expect([s, compiled.pattern.matches(s)]).toEqual([s, false]);
  });

  it.each(["(?i)abc", "\\bfoo", "a^b", "org/\\pL+", "[[:alpha:]]", "\\x41", "a{2", "(ab"])("`%s` lies outside the subset", (pattern) => {
    expect(() => checkPatternSubset(analyzer.ctx, pattern)).toThrow(Unsupported);
  });
});
