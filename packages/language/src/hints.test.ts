// Hints for other languages' habits: each is one error at the right place, with a fix that compiles.
import { describe, expect, it } from "vitest";
import type { Diagnostic } from "./diagnostic.js";
import { compilePolicy } from "./policy.js";

function diagnosticsOf(text: string): readonly Diagnostic[] {
  const result = compilePolicy(text);
  return result.ok ? [] : result.diagnostics;
}

/** The text with every fix applied, from the last to the first so that offsets hold. */
function applyFixes(text: string, diagnostics: readonly Diagnostic[]): string {
  const fixes = diagnostics.flatMap((d) => (d.fix === undefined ? [] : [d.fix])).sort((a, b) => b.span.start - a.span.start);
  return fixes.reduce((out, f) => out.slice(0, f.span.start) + f.text + out.slice(f.span.end), text);
}

const NOT_HELP = "write `!`; it binds tighter than a comparison, so negate one in parentheses, as in `!(a < b)`";

const cases: readonly { text: string; code: string; at: string; help: string; fixed: string }[] = [
  { text: "amount_minor = 5", code: "unexpected-character", at: "=", help: "compare with `==`", fixed: "amount_minor == 5" },
  {
    text: 'amount_minor < 5 and tool == "x"',
    code: "unexpected-token",
    at: "and",
    help: "write `&&`",
    fixed: 'amount_minor < 5 && tool == "x"',
  },
  {
    text: 'amount_minor < 5 or tool == "x"',
    code: "unexpected-token",
    at: "or",
    help: "write `||`",
    fixed: 'amount_minor < 5 || tool == "x"',
  },
  {
    text: "not (amount_minor < 5)",
    code: "unknown-function",
    at: "not",
    help: "negate with `!`, as in `!(a && b)`",
    fixed: "! (amount_minor < 5)",
  },
  { text: "not args.blocked", code: "unexpected-token", at: "not", help: NOT_HELP, fixed: "! args.blocked" },
  { text: "approver != nil", code: "unknown-name", at: "nil", help: "the policy language writes `null`", fixed: "approver != null" },
  { text: "approver != nul", code: "unknown-name", at: "nul", help: "the policy language writes `null`", fixed: "approver != null" },
  { text: "approver != None", code: "unknown-name", at: "None", help: "the policy language writes `null`", fixed: "approver != null" },
  {
    text: "currency == 'EUR'",
    code: "unexpected-character",
    at: "'EUR'",
    help: 'strings take double quotes: `"EUR"`',
    fixed: 'currency == "EUR"',
  },
  { text: "currency == EUR", code: "unknown-name", at: "EUR", help: 'a currency is a string: `"EUR"`', fixed: 'currency == "EUR"' },
];

describe("hints", () => {
  for (const c of cases) {
    it(`${c.text}: one ${c.code} at \`${c.at}\`, whose fix compiles`, () => {
      const found = diagnosticsOf(c.text);
      expect(found.map((d) => d.code)).toEqual([c.code]);
      const start = c.text.lastIndexOf(c.at);
      expect(found[0]!.span).toEqual({ start, end: start + c.at.length });
      expect(found[0]!.help).toBe(c.help);
      const fixed = applyFixes(c.text, found);
      expect(fixed).toBe(c.fixed);
      expect(compilePolicy(fixed).ok).toBe(true);
    });
  }

  it("gives one hint per quoted string, not one error per quote", () => {
    const text = "currency == 'EUR' && tool == 'a\\'b'";
    const found = diagnosticsOf(text);
    expect(found.map((d) => d.message)).toEqual(["single-quoted string `'EUR'`", "single-quoted string `'a\\'b'`"]);
    expect(applyFixes(text, found)).toBe('currency == "EUR" && tool == "a\'b"');
  });

  it("leaves `and` alone as a field of `args`", () => {
    expect(compilePolicy("args.and == 1 && args.not == 2").ok).toBe(true);
  });

  it("reports an unclosed `(` or `[` at itself, not at the end of the policy", () => {
    const text = 'amount_minor < 5 && (tool == "a" ||\n  tool == "b"';
    const [paren] = diagnosticsOf(text);
    expect(paren).toMatchObject({ code: "unexpected-end", span: { start: text.indexOf("("), end: text.indexOf("(") + 1 } });
    expect(paren!.message).toBe("`(` is never closed: the policy ends before its `)`");
    const list = 'tool in ["a", ("b")';
    expect(diagnosticsOf(list)[0]).toMatchObject({ code: "unexpected-end", span: { start: 8, end: 9 } });
  });

  it("still says `unexpected end of policy` when nothing is left open", () => {
    expect(diagnosticsOf("amount_minor <")[0]).toMatchObject({ code: "unexpected-end", message: "unexpected end of policy" });
  });
});
