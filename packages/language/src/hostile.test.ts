// Issue 23, findings 3, 4, 5 and 7: prototype names, long chains, deep values, formatting near the
// limits and the dynamic list limit, each a permanent test that failed on the code before it.
import { describe, expect, it } from "vitest";
import { SAMPLE_ENVIRONMENT } from "../test-support/arbitraries.js";
import { nodeDeeperThan } from "./ast.js";
import { compilePolicy, formatPolicy, LIMITS, lintPolicy, parsePolicy, type CompiledPolicy, type PolicyEnvironment } from "./index.js";

const env: PolicyEnvironment = SAMPLE_ENVIRONMENT;

function compiled(text: string): CompiledPolicy {
  const result = compilePolicy(text);
  if (!result.ok) throw new Error(`expected \`${text.slice(0, 60)}\` to compile: ${JSON.stringify(result.diagnostics[0])}`);
  return result.policy;
}

function codes(text: string): string[] {
  const result = compilePolicy(text);
  return result.ok ? [] : result.diagnostics.map((d) => d.code);
}

/** Every name `Object.prototype` answers for a plain object. */
const PROTOTYPE_NAMES = [
  "__proto__",
  "constructor",
  "hasOwnProperty",
  "valueOf",
  "toString",
  "isPrototypeOf",
  "propertyIsEnumerable",
  "toLocaleString",
  "__defineGetter__",
  "__lookupSetter__",
];

describe("finding 3: names of Object.prototype are unknown names", () => {
  it.each(PROTOTYPE_NAMES)("`%s != null` does not compile", (name) => {
    const result = compilePolicy(`${name} != null`);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.diagnostics.map((d) => [d.code, d.span])).toEqual([["unknown-name", { start: 0, end: name.length }]]);
  });

  it('`constructor == 1` and `toString == "x"` are errors with spans, not a thrown TypeError', () => {
    expect(() => lintPolicy("constructor == 1")).not.toThrow();
    expect(lintPolicy("constructor == 1").map((d) => d.code)).toEqual(["unknown-name"]);
    expect(lintPolicy('toString == "x"').map((d) => d.code)).toEqual(["unknown-name"]);
    expect(codes("constructor(1)")).toEqual(["unknown-function"]);
    expect(codes('hasOwnProperty(tool, "x")')).toEqual(["unknown-function"]);
  });

  it("keeps the usual did-you-mean hint for names near a real one", () => {
    const result = compilePolicy('tools == "x" && toString != null');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.diagnostics.map((d) => d.help)).toEqual(["did you mean `tool`?", undefined]);
  });

  it("`args.__proto__` and `args.constructor` read the action's own argument, null when absent", () => {
    const policy = compiled("args.__proto__ == null && args.constructor == null && args.toString == null && args.a.valueOf == null");
    expect(policy.evaluate({ ...env, args: { a: { b: 1 } } })).toEqual({ ok: true, value: true });
    const own = JSON.parse('{"__proto__": "x", "constructor": 5}') as Record<string, unknown>;
    expect(compiled('args.__proto__ == "x" && args.constructor == 5').evaluate({ ...env, args: own })).toEqual({ ok: true, value: true });
  });
});

describe("finding 4: long chains and deep values never overflow the stack", () => {
  const sum = (operands: number): string => `${Array.from({ length: operands }, () => "1").join("+")} > 0`;

  it("refuses a sum of 1,900 operands with a diagnostic instead of a RangeError", () => {
    const text = sum(1900);
    expect(text.length).toBeLessThan(LIMITS.policyBytesMax);
    expect(codes(text)).toEqual(["nesting-too-deep"]);
    expect(lintPolicy(text).map((d) => d.code)).toEqual(["nesting-too-deep"]);
    expect(formatPolicy(text).ok).toBe(false);
  });

  it("accepts a sum at the expression depth limit and refuses one level more", () => {
    expect(LIMITS.expressionDepthMax).toBe(256);
    const edge = compiled(sum(255));
    expect(edge.evaluate(env)).toEqual({ ok: true, value: true });
    expect(edge.decide(env)).toEqual({ outcome: "allow" });
    expect(formatPolicy(sum(255)).ok).toBe(true);
    expect(codes(sum(256))).toEqual(["nesting-too-deep"]);
  });

  it("parses, checks, evaluates, decides, lints and formats `&&` and `||` chains up to 4 KiB", () => {
    const and = Array.from({ length: 510 }, () => "uses>0").join("&&");
    const or = `approver=="x"||${Array.from({ length: 508 }, () => "uses<0").join("||")}`;
    for (const text of [and, or]) {
      expect(text.length).toBeLessThanOrEqual(LIMITS.policyBytesMax);
      const parsed = parsePolicy(text);
      expect(parsed.ok).toBe(true);
      // A balanced tree: about log2 of the chain's length, far from the limit.
      if (parsed.ok) expect(nodeDeeperThan(parsed.ast, 16)).toBeUndefined();
      expect(() => lintPolicy(text)).not.toThrow();
      expect(() => formatPolicy(text)).not.toThrow();
    }
    expect(compiled(and).evaluate(env)).toEqual({ ok: true, value: true });
    expect(compiled(and).decide(env)).toEqual({ outcome: "allow" });
    expect(compiled(or).decide(env)).toEqual({ outcome: "gated", residual: 'approver == "x"' });
  });

  it("a run-time error in a long chain points at the operand's own node", () => {
    const text = `${Array.from({ length: 40 }, () => "uses > 0").join(" && ")} && args.flag`;
    const result = compiled(text).evaluate({ ...env, args: { flag: "yes" } });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe("runtime-type");
      expect(text.slice(result.error.span.start, result.error.span.end)).toMatch(/args\.flag$/);
    }
  });

  it("compares 100,000-level nested lists from args without a RangeError, and fails closed", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const policy = compiled("args.a == args.b");
    const result = policy.evaluate({ ...env, args: { a: deep, b: deep } });
    expect(result.ok ? result : result.error.code).toBe("value-too-deep");
    expect(policy.decide({ ...env, args: { a: deep, b: deep } }).outcome).toBe("deny");
    expect(compiled("!(args.a in args.b)").evaluate({ ...env, args: { a: deep, b: [deep] } }).ok).toBe(false);
  });

  it("fails closed on a cyclic list handed in by an in-process caller", () => {
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    const result = compiled("args.a != args.b").evaluate({ ...env, args: { a: cyclic, b: cyclic } });
    expect(result.ok ? result : result.error.code).toBe("value-too-deep");
  });

  it("accepts lists nested exactly LIMITS.valueDepthMax deep", () => {
    const nest = (levels: number): unknown => {
      let v: unknown = 1;
      for (let i = 0; i < levels; i++) v = [v];
      return v;
    };
    const policy = compiled("args.a == args.b");
    expect(policy.evaluate({ ...env, args: { a: nest(LIMITS.valueDepthMax), b: nest(LIMITS.valueDepthMax) } })).toEqual({
      ok: true,
      value: true,
    });
    const over = policy.evaluate({ ...env, args: { a: nest(LIMITS.valueDepthMax + 1), b: nest(LIMITS.valueDepthMax + 1) } });
    expect(over.ok ? over : over.error.code).toBe("value-too-deep");
  });
});

describe("finding 5: fmt never writes a policy that breaks a limit", () => {
  it("formats sixty minus signs without parentheses, within the nesting limit", () => {
    const text = `${"-".repeat(60)}1 < 5`;
    const formatted = formatPolicy(text);
    expect(formatted.ok).toBe(true);
    if (!formatted.ok) return;
    expect(formatted.text).not.toContain("(");
    expect(compiled(formatted.text).evaluate(env)).toEqual(compiled(text).evaluate(env));
    expect(formatPolicy(formatted.text)).toEqual(formatted);
  });

  it("refuses to format a compact policy near 4 KiB that spacing would take past the limit", () => {
    const compact = Array.from({ length: 510 }, () => "uses>0").join("&&");
    expect(compilePolicy(compact).ok).toBe(true);
    const formatted = formatPolicy(compact);
    expect(formatted.ok).toBe(false);
    if (!formatted.ok)
      expect(formatted.diagnostics.map((d) => [d.code, d.span])).toEqual([["policy-too-long", { start: 0, end: compact.length }]]);
  });
});

describe("finding 7: the dynamic list limit holds wherever a list from args enters", () => {
  const list = (n: number): number[] => Array.from({ length: n }, () => 0);
  const cases: [string, (n: number) => Record<string, unknown>][] = [
    ["0 in args.l", (n) => ({ l: list(n) })],
    ["size(args.l) >= 0", (n) => ({ l: list(n) })],
    ["args.l == args.m", (n) => ({ l: list(n), m: list(n) })],
    ["args.l != [0]", (n) => ({ l: list(n) })],
    ["args.l in args.m", (n) => ({ l: list(n), m: [[0]] })],
    ["args.m in args.l", (n) => ({ l: [list(n)], m: list(n) })],
    ['approver in args.l || tool == "x"', (n) => ({ l: list(n).map(String) })],
  ];

  it.each(cases)("`%s`: 1,024 elements are evaluated, 1,025 fail closed", (text, args) => {
    const policy = compiled(text);
    expect(policy.evaluate({ ...env, args: args(LIMITS.listElementsMax) }).ok).toBe(true);
    const over = policy.evaluate({ ...env, args: args(LIMITS.listElementsMax + 1) });
    expect(over.ok ? over : over.error.code).toBe("list-too-long");
    const decided = policy.decide({ ...env, args: args(LIMITS.listElementsMax + 1) });
    expect(decided.outcome).toBe("deny");
  });
});
