// Parameter patterns run on the linear-time engine: hostile patterns and inputs stay bounded, the
// syntax outside RE2 is refused at its line and column, and every limit is tested at its edge.
import fc from "fast-check";
import {
  compileFamily,
  compilePattern,
  FAMILY_LIMITS,
  instantiateFamily,
  matchCost,
  PatternBudget,
  resolveParameters,
  searchPattern,
  type GrantFamilyBody,
} from "@agent-authority/families";
import { describe, expect, it } from "vitest";

/** A family with one string parameter `code` of the given declaration, placed in the grant's principal. */
function family(declaration: string, examples = ""): string {
  return `id: patterns
version: 1
reviewed_by: [alice@example.com]
parameters:
  code: ${declaration}
grant:
  agent_id: agt_6ys3c4dwa7n36096q14dr9gpqy
  principal_type: team
  principal_id: \${code}
  scope: {tool: [payments.refund]}
${examples}`;
}

/** Nested quantifiers and overlapping alternatives: the shapes that make a backtracking engine exponential. */
const hostilePattern: fc.Arbitrary<string> = fc
  .letrec<{ p: string }>((tie) => ({
    p: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.constantFrom("a", "aa", ".", "a?", "[a-b]", "\\w"),
      fc.tuple(tie("p"), fc.constantFrom("+", "*", "?", "{1,9}", "+?")).map(([p, q]) => `(${p})${q}`),
      fc.tuple(tie("p"), tie("p")).map(([x, y]) => `(?:${x}|${y})`),
      fc.tuple(tie("p"), tie("p")).map(([x, y]) => `${x}${y}`),
    ),
  }))
  .p.filter((p) => p.length <= FAMILY_LIMITS.patternCharsMax);

/** Long runs of the pattern's own letters, ending in a character that defeats the match. */
const hostileInput = fc
  .tuple(fc.integer({ min: 0, max: FAMILY_LIMITS.stringParameterCharsMax - 1 }), fc.constantFrom("!", "b", "\n", ""))
  .map(([n, end]) => "a".repeat(n) + end);

describe("parameter patterns on the linear-time engine", () => {
  it("the classic exponential cases answer at once: `(a+)+$` against 40 `a` and `!`, and at the longest input", () => {
    for (const source of ["(a+)+$", "(a|aa)+$", "(a*)*b", "(.*a){1,20}b", "((a+)+)+$"]) {
      const compiled = compilePattern(source);
      if (!compiled.ok) throw new Error(compiled.reason);
      expect(compiled.pattern.matches(`${"a".repeat(40)}!`)).toBe(false);
      expect(compiled.pattern.matches(`${"a".repeat(FAMILY_LIMITS.stringParameterCharsMax - 1)}!`)).toBe(false);
    }
  });

  it("any hostile pattern is refused or compiles within the instruction limit, and matches in bounded work", () => {
    fc.assert(
      fc.property(hostilePattern, fc.array(hostileInput, { minLength: 1, maxLength: 4 }), (source, inputs) => {
        const compiled = compilePattern(source);
        if (!compiled.ok) return;
        expect(compiled.pattern.instructions).toBeLessThanOrEqual(FAMILY_LIMITS.patternInstructionsMax);
        for (const input of inputs) {
          expect(matchCost(compiled.pattern, input.length)).toBeLessThanOrEqual(
            FAMILY_LIMITS.patternInstructionsMax * (FAMILY_LIMITS.stringParameterCharsMax + 1),
          );
          expect(typeof compiled.pattern.matches(input)).toBe("boolean");
        }
      }),
      { numRuns: 300 },
    );
  });

  it("agrees with a whole-value JavaScript match on short inputs, where backtracking is cheap", () => {
    fc.assert(
      fc.property(hostilePattern, fc.string({ unit: fc.constantFrom("a", "b", "!"), maxLength: 8 }), (source, input) => {
        const compiled = compilePattern(source);
        if (!compiled.ok) return;
        expect(compiled.pattern.matches(input)).toBe(new RegExp(`^(?:${source})$`, "u").test(input));
      }),
      { numRuns: 500 },
    );
  });

  it("a family with a hostile pattern and example lints at once, refusing the example at its column", () => {
    const text = family('{type: string, pattern: "(a+)+$", example: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}');
    const result = compileFamily(text, "f.yaml");
    expect(result.ok).toBe(false);
    const error = result.diagnostics.find((d) => d.severity === "error")!;
    expect(error).toMatchObject({ code: "parameter-bounds", range: { start: { line: 5, column: 52 } } });
  });

  it("refuses syntax outside RE2 at the line and column of the construct, naming the field", () => {
    const cases: [string, number][] = [
      ["[a-z]+(?=a)", 40],
      ["(a)\\\\1", 37],
      ["(?<!x)a", 34],
      ["\\\\u0041", 34],
      ["a{1001}", 35],
    ];
    for (const [pattern, column] of cases) {
      const result = compileFamily(family(`{type: string, pattern: "${pattern}", example: a}`), "f.yaml");
      const error = result.diagnostics.find((d) => d.code === "parameter-pattern");
      expect(error, pattern).toMatchObject({ severity: "error", field: "parameters.code.pattern", range: { start: { line: 5, column } } });
    }
  });

  it("accepts the documented syntax: classes, Unicode classes, named groups, flags, bounded repeats", () => {
    const accepted: [string, string][] = [
      ["agt_[0-9a-hjkmnp-tv-z]{26}", "agt_6ys3c4dwa7n36096q14dr9gpqy"],
      ["[[:alpha:]]+", "abc"],
      ["\\pL+", "été"],
      ["\\p{Greek}+", "αβ"],
      ["(?P<team>[a-z]+)-(?<n>\\d+)", "ops-7"],
      ["(?i)ops", "OPS"],
      ["\\x{41}", "A"],
      ["\\Q.*\\E", ".*"],
      ["a{1000}", "a".repeat(1000)],
    ];
    for (const [source, value] of accepted) {
      const compiled = compilePattern(source);
      expect(compiled.ok && compiled.pattern.matches(value), source).toBe(true);
    }
  });

  it("bounds pattern length and program size at their edges", () => {
    expect(compilePattern("a".repeat(FAMILY_LIMITS.patternCharsMax)).ok).toBe(true);
    expect(compilePattern("a".repeat(FAMILY_LIMITS.patternCharsMax + 1))).toMatchObject({
      ok: false,
      reason: expect.stringContaining("characters"),
    });
    const sized = (n: number): string => `.{0,${n}}`;
    const instructions = (source: string): number => {
      const compiled = compilePattern(source);
      return compiled.ok ? compiled.pattern.instructions : Number.NaN;
    };
    // `.{0,n}` compiles to two instructions per repeat plus two; find the largest n accepted.
    const largest = Math.floor((FAMILY_LIMITS.patternInstructionsMax - 2) / 2);
    expect(instructions(sized(largest))).toBeLessThanOrEqual(FAMILY_LIMITS.patternInstructionsMax);
    expect(compilePattern(`${sized(largest)}${sized(2)}`)).toMatchObject({ ok: false, reason: expect.stringContaining("instructions") });
  });

  it("bounds the input: a value over the longest string parameter never matches", () => {
    const compiled = compilePattern("a*");
    if (!compiled.ok) throw new Error(compiled.reason);
    expect(compiled.pattern.matches("a".repeat(FAMILY_LIMITS.stringParameterCharsMax))).toBe(true);
    expect(compiled.pattern.matches("a".repeat(FAMILY_LIMITS.stringParameterCharsMax + 1))).toBe(false);
  });

  it("a budget refuses the match it cannot pay for, and a repeated pair costs nothing", () => {
    const compiled = compilePattern("[a-z]+");
    if (!compiled.ok) throw new Error(compiled.reason);
    const cost = matchCost(compiled.pattern, 3);
    const budget = new PatternBudget(cost);
    expect(budget.check(compiled.pattern, "abc")).toBe("match");
    expect(budget.check(compiled.pattern, "abc")).toBe("match");
    expect(budget.check(compiled.pattern, "abd")).toBe("over-budget");
  });

  it("refuses a family whose patterns could cost an instantiation more than its budget, at the costliest pattern", () => {
    // 1,802 instructions × 1,025 characters is about 1.8 million units: under the limit alone, over it twice.
    const heavy = '{type: string, pattern: ".{0,900}", example: a}';
    const one = compileFamily(family(heavy), "f.yaml");
    expect(one.diagnostics.filter((d) => d.code === "parameter-pattern")).toEqual([]);
    const two = compileFamily(
      family(heavy)
        .replace("  code: ", `  other: {type: string, pattern: ".{0,900}", example: b, max_length: 1024}\n  code: `)
        .replace("principal_id: ${code}", "principal_id: ${code}${other}"),
      "f.yaml",
    );
    const error = two.diagnostics.find((d) => d.code === "parameter-pattern");
    expect(error).toMatchObject({ severity: "error", message: expect.stringContaining(`more than ${FAMILY_LIMITS.patternMatchUnitsMax}`) });
    const bounded = compileFamily(
      family(heavy)
        .replace("  code: ", `  other: {type: string, pattern: ".{0,900}", example: b, max_length: 64}\n  code: `)
        .replace("principal_id: ${code}", "principal_id: ${code}${other}"),
      "f.yaml",
    );
    expect(bounded.diagnostics.filter((d) => d.code === "parameter-pattern")).toEqual([]);
  });

  it("the examples of a compile share one budget: many long distinct values are refused, not matched for seconds", () => {
    const examples = Array.from(
      { length: 200 },
      (_, i) =>
        `  - name: e${i}\n    parameters: {code: "${String(i).padStart(4, "0")}${"a".repeat(900)}"}\n    action: {tool: payments.refund}\n    expect: allow\n`,
    ).join("");
    const result = compileFamily(
      family('{type: string, pattern: "[0-9]{4}a{0,900}", example: "0000"}', `examples:\n${examples}`),
      "f.yaml",
    );
    expect(result.ok).toBe(false);
    expect(result.diagnostics.some((d) => d.message.includes(`more than ${FAMILY_LIMITS.patternCheckUnitsMax} units`))).toBe(true);
  });

  it("fails closed at instantiation on a stored pattern the engine refuses", () => {
    const stored = {
      id: "old",
      version: 1,
      reviewed_by: ["a@example.com"],
      content_hash: "sha256:x",
      parameters: { code: { type: "string", pattern: "(?=a)a", example: "a" } },
      grant: { agent_id: "agt_6ys3c4dwa7n36096q14dr9gpqy", principal_type: "team", principal_id: "${code}", scope: { tool: ["x.y"] } },
    } as unknown as GrantFamilyBody;
    const result = instantiateFamily(stored, { code: "a" });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.parameterProblems[0]).toMatchObject({
      parameter: "code",
      code: "parameter-bounds",
      message: expect.stringContaining("RE2"),
    });
    expect(resolveParameters(stored.parameters, { code: "a" }).ok).toBe(false);
  });

  it("`--run` searches with RE2 and refuses what RE2 refuses", () => {
    const search = searchPattern("refund.*large");
    expect(search.ok && search.test("a refund that is large")).toBe(true);
    expect(searchPattern("(?=x)").ok).toBe(false);
  });

  it("the instantiation budget holds at its edge: two patterns costing exactly the limit pass, one unit more fails", () => {
    const compiled = compilePattern(".{0,511}");
    expect(compiled.ok && compiled.pattern.instructions).toBe(1024);
    // 1,024 instructions × (1,023 + 1) characters, twice: exactly 2,097,152 units.
    const two = (maxLength: number): string =>
      family(`{type: string, pattern: ".{0,511}", example: a, max_length: 1023}`)
        .replace("  code: ", `  other: {type: string, pattern: ".{0,511}", example: b, max_length: ${maxLength}}\n  code: `)
        .replace("principal_id: ${code}", "principal_id: ${code}${other}");
    expect(compileFamily(two(1023), "f.yaml").diagnostics.filter((d) => d.code === "parameter-pattern")).toEqual([]);
    expect(compileFamily(two(1024), "f.yaml").diagnostics.filter((d) => d.code === "parameter-pattern")).toHaveLength(1);
  });

  it("remembers at most `patternMemoEntriesMax` pairs: a pair past it is paid for again", () => {
    const compiled = compilePattern("[a-z0-9]+");
    if (!compiled.ok) throw new Error(compiled.reason);
    const cost = matchCost(compiled.pattern, 5);
    const values = Array.from({ length: FAMILY_LIMITS.patternMemoEntriesMax }, (_, i) => `v${String(i).padStart(4, "0")}`);
    const run = (units: number): string[] => {
      const budget = new PatternBudget(units);
      for (const value of values) expect(budget.check(compiled.pattern, value)).toBe("match");
      return [budget.check(compiled.pattern, "extra"), budget.check(compiled.pattern, "extra"), budget.check(compiled.pattern, values[0]!)];
    };
    // Every remembered pair is free again; `extra` came after the memory was full, so it costs twice.
    expect(run((values.length + 2) * cost)).toEqual(["match", "match", "match"]);
    expect(run((values.length + 1) * cost)).toEqual(["match", "over-budget", "match"]);
  });
});
