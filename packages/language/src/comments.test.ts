// `//` comments: ignored by the language, kept by the formatter beside the operand they were at.
import { describe, expect, it } from "vitest";
import { LIMITS } from "./limits.js";
import { compilePolicy, formatPolicy } from "./policy.js";

const env = {
  amount_minor: 100,
  currency: "EUR",
  tool: "t",
  agent: "a",
  principal: "p",
  audience: "x",
  uses: 0,
  spent_minor: 0,
  hour_utc: 1,
  weekday_utc: "mon",
  args: {},
  approver: null,
} as const;

describe("comments", () => {
  it("are ignored when deciding, wherever they stand", () => {
    const compiled = compilePolicy(
      '// small purchases only\namount_minor <= 500 // cents\n  && currency == "EUR" // the budget\'s currency\n',
    );
    expect(compiled.ok).toBe(true);
    if (compiled.ok) expect(compiled.policy.evaluate(env)).toEqual({ ok: true, value: true });
  });

  it("`//` inside a string is text, not a comment", () => {
    const compiled = compilePolicy('tool == "https://example.com" // a url');
    expect(compiled.ok).toBe(true);
    if (compiled.ok) expect(compiled.policy.evaluate({ ...env, tool: "https://example.com" })).toEqual({ ok: true, value: true });
  });

  it("a comment cannot hide the rest of a policy on a later line, and cannot end a string", () => {
    expect(compilePolicy('tool == "a // b').ok).toBe(false);
    const compiled = compilePolicy('amount_minor <= 500 // && false\n && currency == "USD"');
    expect(compiled.ok && compiled.policy.evaluate(env)).toEqual({ ok: true, value: false });
  });

  it("fmt keeps a header, trailing comments and own-line comments where they were", () => {
    const text = [
      "// small purchases only",
      "amount_minor<=500 // cents",
      "// the budget's currency",
      '&& currency=="EUR"',
      '&& (tool=="a"||tool=="b") // two tools',
      "// end",
    ].join("\n");
    expect(formatPolicy(text)).toEqual({
      ok: true,
      text: [
        "// small purchases only",
        "amount_minor <= 500 // cents",
        "  // the budget's currency",
        '  && currency == "EUR"',
        '  && (tool == "a" || tool == "b") // two tools',
        "// end",
      ].join("\n"),
    });
  });

  it("a chain in parentheses under the same operator joins the top-level chain, each comment staying on its operand", () => {
    const text = '(amount_minor < 5 || // small\n tool == "a") // or tool a\n|| uses == 0';
    expect(formatPolicy(text)).toEqual({ ok: true, text: 'amount_minor < 5 // small\n  || tool == "a" // or tool a\n  || uses == 0' });
  });

  it("a comment inside a nested operand moves to that operand's line; two on one operand join in order", () => {
    const text = '(amount_minor < 5 || // small\n tool == "a") // or tool a\n&& uses == 0';
    expect(formatPolicy(text)).toEqual({ ok: true, text: '(amount_minor < 5 || tool == "a") // small // or tool a\n  && uses == 0' });
  });

  it("a policy without comments stays on one line", () => {
    expect(formatPolicy('amount_minor<=500\n&&currency=="EUR"')).toEqual({ ok: true, text: 'amount_minor <= 500 && currency == "EUR"' });
  });

  it("fmt refuses, rather than writes, a commented policy its layout would take past the size limit (decision 0117)", () => {
    const operand = 'tool == "x"';
    const count = Math.floor(LIMITS.policyBytesMax / (operand.length + 4));
    const compact = `${Array.from({ length: count }, () => operand).join("&&")}//c`;
    expect(new TextEncoder().encode(compact).length).toBeLessThanOrEqual(LIMITS.policyBytesMax);
    const result = formatPolicy(compact);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.diagnostics[0]!.code).toBe("policy-too-long");
  });
});
