// The public API beyond the vectors: decide ignores a passed approver, conjoin's text and spans, warnings.
import { describe, expect, it } from "vitest";
import { compilePolicy, conjoin, LIMITS, ENVIRONMENT_NAMES, type CompiledPolicy, type PolicyEnvironment } from "./index.js";

const env: PolicyEnvironment = {
  amount_minor: 20000,
  currency: "EUR",
  tool: "payments.transfer",
  approver: null,
  agent: "agent-7",
  principal: "alice@example.com",
  audience: "payments",
  uses: 3,
  spent_minor: 0,
  hour_utc: 14,
  weekday_utc: "wed",
  args: {},
};

function compiled(text: string): CompiledPolicy {
  const result = compilePolicy(text);
  if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
  return result.policy;
}

describe("compiled policies", () => {
  it("decide treats approver as unknown even when the environment carries one", () => {
    const policy = compiled('approver == "cfo@example.com"');
    expect(policy.decide({ ...env, approver: "cfo@example.com" } as PolicyEnvironment)).toEqual({ outcome: "gated", residual: 'approver == "cfo@example.com"' });
    expect(policy.evaluate({ ...env, approver: "cfo@example.com" })).toEqual({ ok: true, value: true });
  });

  it("exposes canonical text", () => {
    expect(compiled("amount_minor<=5&&(uses<1||approver!=null)").text).toBe("amount_minor <= 5 && (uses < 1 || approver != null)");
  });

  it("conjoins a chain into canonical text whose spans point into it", () => {
    const chain = conjoin([compiled("uses < 5 || tool == \"x\""), compiled("args.n > 1")]);
    expect(chain.text).toBe('(uses < 5 || tool == "x") && args.n > 1');
    const result = chain.evaluate({ ...env, args: { n: "x" } });
    expect(result).toEqual({ ok: false, error: expect.objectContaining({ code: "runtime-type", span: { start: 29, end: 39 } }) });
    expect(chain.text.slice(29, 39)).toBe("args.n > 1");
  });

  it("conjoin of nothing is true, of one is itself, and refuses foreign policies", () => {
    expect(conjoin([]).decide(env)).toEqual({ outcome: "allow" });
    const one = compiled("uses < 5");
    expect(conjoin([one])).toBe(one);
    const foreign = { text: "true", evaluate: () => ({ ok: true, value: true }), decide: () => ({ outcome: "allow" }) } as unknown as CompiledPolicy;
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
