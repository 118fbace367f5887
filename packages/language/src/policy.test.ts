// The public API beyond the vectors: decide ignores a passed approver, conjoin's text and spans, warnings.
import { describe, expect, it } from "vitest";
import { SAMPLE_ENVIRONMENT } from "../test-support/arbitraries.js";
import { compiled } from "../test-support/fixtures.js";
import { compilePolicy, conjoin, LIMITS, ENVIRONMENT_NAMES, type CompiledPolicy, type PolicyEnvironment } from "./index.js";

const env: PolicyEnvironment = SAMPLE_ENVIRONMENT;

describe("compiled policies", () => {
  it("decide treats approver as unknown even when the environment carries one", () => {
    const policy = compiled('approver == "cfo@example.com"');
    expect(policy.decide({ ...env, approver: "cfo@example.com" } as PolicyEnvironment)).toEqual({
      outcome: "gated",
      residual: 'approver == "cfo@example.com"',
    });
    expect(policy.evaluate({ ...env, approver: "cfo@example.com" })).toEqual({ ok: true, value: true });
  });

  it("exposes canonical text", () => {
    expect(compiled("amount_minor<=5&&(uses<1||approver!=null)").text).toBe("amount_minor <= 5 && (uses < 1 || approver != null)");
  });

  it("conjoins a chain into canonical text whose spans point into it", () => {
    const chain = conjoin([compiled('uses < 5 || tool == "x"'), compiled("args.n > 1")]);
    expect(chain.text).toBe('(uses < 5 || tool == "x") && args.n > 1');
    const result = chain.evaluate({ ...env, args: { n: "x" } });
    expect(result).toEqual({ ok: false, error: expect.objectContaining({ code: "runtime-type", span: { start: 29, end: 39 } }) });
    expect(chain.text.slice(29, 39)).toBe("args.n > 1");
  });

  it("conjoin of nothing is true, of one is itself, and refuses foreign policies", () => {
    expect(conjoin([]).decide(env)).toEqual({ outcome: "allow" });
    const one = compiled("uses < 5");
    expect(conjoin([one])).toBe(one);
    const foreign = {
      text: "true",
      evaluate: () => ({ ok: true, value: true }),
      decide: () => ({ outcome: "allow" }),
    } as unknown as CompiledPolicy;
    expect(() => conjoin([one, foreign])).toThrow(TypeError);
  });

  it("conjoined residuals over approver are decided as one", () => {
    const gated = conjoin([compiled('approver in ["a@x", "b@x"]'), compiled('approver in ["b@x", "c@x"]')]);
    expect(gated.decide(env).outcome).toBe("gated");
    expect(conjoin([compiled('approver == "a@x"'), compiled('approver == "b@x"')]).decide(env)).toEqual({ outcome: "deny" });
  });

  it("residual texts compile on their own", () => {
    const d = compiled('amount_minor < 100 || startsWith(approver, "fin-") && approver != "fin-x"').decide(env);
    expect(d.outcome).toBe("gated");
    if (d.outcome === "gated") expect(compilePolicy(d.residual).ok).toBe(true);
  });

  it("exports frozen limits and the environment names", () => {
    expect(Object.isFrozen(LIMITS)).toBe(true);
    expect(LIMITS).toMatchObject({ policyBytesMax: 4096, astDepthMax: 64, listElementsMax: 1024 });
    expect(ENVIRONMENT_NAMES).toContain("args");
    expect(ENVIRONMENT_NAMES).toContain("approver");
  });

  it("never throws on non-string input", () => {
    expect(compilePolicy(undefined as unknown as string).ok).toBe(false);
    expect(compilePolicy(42 as unknown as string).ok).toBe(false);
  });
});

describe("the candidate bound", () => {
  const many = (tag: string): string[] => Array.from({ length: 1024 }, (_, i) => `${tag}${i}@example.com`);

  it("a policy that could need more than LIMITS.approverCandidatesMax candidates is refused when it is written", () => {
    const text = "approver in args.a || approver in args.b || approver in args.c || approver in args.d";
    const result = compilePolicy(text);
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.diagnostics.map((d) => [d.code, d.span.start, d.span.end])).toEqual([["approver-search-too-large", 0, text.length]]);
    // Three lists (3,073 candidates) compile, and their decision is exhaustive.
    const three = compiled('approver in args.a || approver in args.b || approver in args.c && approver != "a0@example.com"');
    expect(three.decide({ ...env, args: { a: many("a"), b: many("b"), c: many("c") } }).outcome).toBe("gated");
  });

  it("a conjoined chain past the bound can still be gated on a witness it finds, and otherwise denies rather than guess", () => {
    const parent = compiled(
      '(approver in args.a && approver == "nobody") || (approver in args.b && approver == "nobody") || startsWith(approver, "z")',
    );
    const child = compiled(
      '(approver in args.c && approver == "nobody") || (approver in args.d && approver == "nobody") || approver == "z@example.com"',
    );
    const chain = conjoin([parent, child]);
    const withLists = { ...env, args: { a: many("a"), b: many("b"), c: many("c"), d: many("d") } };
    expect(LIMITS.approverCandidatesMax).toBeLessThan(4 * 1024 + 2);
    expect(chain.decide(withLists)).toEqual({ outcome: "deny" });
    // With short lists the same chain is gated on the one approver who can approve.
    expect(chain.decide({ ...env, args: { a: ["a"], b: ["b"], c: ["c"], d: ["d"] } }).outcome).toBe("gated");
  });

  it("a conjoined chain is never allowed when the search is cut short, even if every approver would do", () => {
    const huge = (tag: string): string[] => Array.from({ length: 1024 }, (_, i) => `${tag}${i}`);
    const parent = compiled("approver == null || approver in args.a || approver in args.b || !(approver in args.a)");
    const child = compiled("approver == null || approver in args.c || approver in args.d || !(approver in args.c)");
    const everyone = conjoin([parent, child]);
    const small = { a: ["a"], b: ["b"], c: ["c"], d: ["d"] };
    expect(everyone.decide({ ...env, args: small })).toEqual({ outcome: "allow" });
    const large = { a: huge("a"), b: huge("b"), c: huge("c"), d: huge("d") };
    expect(everyone.decide({ ...env, args: large }).outcome).toBe("gated");
  });
});
