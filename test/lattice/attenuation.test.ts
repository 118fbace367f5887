// checkAttenuation: each axis of docs/attenuation.md, with the values a 422 answer would list.
import { describe, expect, it } from "vitest";
import {
  AXES,
  BOTTOM,
  checkAttenuation,
  conjoinPolicyText,
  effectiveGrant,
  equivalent,
  explainAttenuation,
  inheritChildTerms,
  isVoid,
  leq,
  meet,
  normalizeTerms,
  policyConjuncts,
  toolCovered,
  type GrantTerms,
  type Widening,
} from "@agent-authority/lattice";
import { HOUR, PARENT, T0, withTerms } from "./fixtures.js";

const NONE = { uses: 0, spent_minor: 0 };
const childOf = (overrides: Partial<GrantTerms>): GrantTerms => ({ ...PARENT, delegation_depth_max: 1, policy: null, ...overrides });

function widenings(parent: GrantTerms, child: GrantTerms, usage = NONE): readonly Widening[] {
  const result = checkAttenuation(parent, child, usage);
  return result.ok ? [] : result.widenings;
}

function only(parent: GrantTerms, child: GrantTerms, usage = NONE): Widening {
  const found = widenings(parent, child, usage);
  expect(found.map((w) => w.axis)).toHaveLength(1);
  return found[0]!;
}

describe("toolCovered", () => {
  it("covers equal names and names under a namespace pattern", () => {
    expect(toolCovered("payments.send", ["payments.*"])).toBe(true);
    expect(toolCovered("payments.card.issue", ["payments.*"])).toBe(true);
    expect(toolCovered("payments.card.*", ["payments.*"])).toBe(true);
    expect(toolCovered("mail.send", ["mail.send"])).toBe(true);
  });

  it("does not cover the namespace itself, a longer namespace name or a wider pattern", () => {
    expect(toolCovered("payments", ["payments.*"])).toBe(false);
    expect(toolCovered("paymentsx.send", ["payments.*"])).toBe(false);
    expect(toolCovered("payments.*", ["payments.send"])).toBe(false);
    expect(toolCovered("anything", ["*"])).toBe(false);
    expect(toolCovered("mail.send", [])).toBe(false);
  });
});

describe("checkAttenuation", () => {
  it("accepts a child equal to its parent with one level of depth used", () => {
    expect(checkAttenuation(PARENT, childOf({}), NONE)).toEqual({ ok: true });
  });

  it("accepts the child inherited from the smallest delegate request", () => {
    const usage = { uses: 3, spent_minor: 2_500 };
    const child = inheritChildTerms(PARENT, {}, usage);
    expect(child.budget_amount_minor).toBe(7_500);
    expect(child.budget_count).toBe(7);
    expect(child.delegation_depth_max).toBe(1);
    expect(child.policy).toBeNull();
    expect(checkAttenuation(PARENT, child, usage)).toEqual({ ok: true });
  });

  it("reports a tool outside the parent's scope", () => {
    const w = only(PARENT, childOf({ scope: { tool: ["payments.send", "mail.read"] } }));
    expect(w).toMatchObject({ axis: "scope.tool", parent: PARENT.scope.tool, child: ["payments.send", "mail.read"] });
    expect(w.message).toContain("`mail.read`");
  });

  it("reports a pattern wider than the parent's entries", () => {
    expect(only(withTerms({ scope: { tool: ["mail.send"] } }), childOf({ scope: { tool: ["mail.*"] } })).axis).toBe("scope.tool");
  });

  it("reports a window that starts earlier or ends later", () => {
    const early = only(PARENT, childOf({ window: { start: T0 - HOUR, end: T0 + HOUR } }));
    expect(early).toMatchObject({ axis: "window", parent: PARENT.window });
    expect(early.message).toContain("before the parent's start");
    const late = only(PARENT, childOf({ window: { start: T0, end: T0 + 25 * HOUR } }));
    expect(late.message).toContain("after the parent's expiry");
  });

  it("compares the amount against the parent's remaining, not its budget", () => {
    const child = childOf({ budget_amount_minor: 8_000 });
    expect(checkAttenuation(PARENT, child, NONE)).toEqual({ ok: true });
    const w = only(PARENT, child, { uses: 0, spent_minor: 3_000 });
    expect(w).toMatchObject({ axis: "budget_amount_minor", parent: 7_000, child: 8_000 });
    expect(w.message).toContain("spent or held `3000`");
  });

  it("reports a different currency only when the child may spend", () => {
    expect(only(PARENT, childOf({ budget_currency: "USD" }))).toMatchObject({ axis: "budget_currency", parent: "EUR", child: "USD" });
    expect(checkAttenuation(PARENT, childOf({ budget_currency: "USD", budget_amount_minor: 0 }), NONE).ok).toBe(true);
  });

  it("compares the use count against the parent's remaining, and no limit only under no limit", () => {
    expect(only(PARENT, childOf({ budget_count: 8 }), { uses: 3, spent_minor: 0 })).toMatchObject({
      axis: "budget_count",
      parent: 7,
      child: 8,
    });
    expect(only(PARENT, childOf({ budget_count: null }))).toMatchObject({ axis: "budget_count", parent: 10, child: null });
    expect(checkAttenuation(withTerms({ budget_count: null }), childOf({ budget_count: null }), NONE).ok).toBe(true);
  });

  it("reports a dropped clean-context condition", () => {
    const parent = withTerms({ conditions: { clean_context: true } });
    expect(only(parent, childOf({ conditions: { clean_context: false } }))).toMatchObject({
      axis: "conditions.clean_context",
      parent: true,
      child: false,
    });
    expect(checkAttenuation(PARENT, childOf({ conditions: { clean_context: true } }), NONE).ok).toBe(true);
  });

  it("reports a less strict enforcement mode", () => {
    expect(only(PARENT, childOf({ enforcement_mode: "observe" }))).toMatchObject({
      axis: "enforcement_mode",
      parent: "enforce",
      child: "observe",
    });
    expect(checkAttenuation(withTerms({ enforcement_mode: "observe" }), childOf({ enforcement_mode: "enforce" }), NONE).ok).toBe(true);
  });

  it("requires the audience and the principal to be equal", () => {
    expect(only(PARENT, childOf({ audience: null }))).toMatchObject({ axis: "audience", parent: "api.example.com", child: null });
    expect(only(PARENT, childOf({ principal: { type: "human", id: "finance" } })).axis).toBe("principal");
  });

  it("lets only an attenuating parent delegate", () => {
    const parent = withTerms({ delegation_policy: "none" });
    expect(only(parent, childOf({ delegation_policy: "none" }))).toMatchObject({
      axis: "delegation_policy",
      parent: "none",
      child: "none",
    });
  });

  it("uses one level of the parent's depth cap", () => {
    expect(only(PARENT, childOf({ delegation_depth_max: 2 }))).toMatchObject({ axis: "delegation_depth_max", parent: 2, child: 2 });
    expect(only(PARENT, childOf({ delegation_depth_max: null })).axis).toBe("delegation_depth_max");
    expect(only(withTerms({ delegation_depth_max: 0 }), childOf({ delegation_depth_max: 0 })).message).toContain("no level may be added");
    expect(checkAttenuation(withTerms({ delegation_depth_max: null }), childOf({ delegation_depth_max: null }), NONE).ok).toBe(true);
  });

  it("never reports the policy: the child's effective policy is a conjunction", () => {
    expect(checkAttenuation(PARENT, childOf({ policy: "amount_minor <= 999999" }), NONE)).toEqual({ ok: true });
    const policy = explainAttenuation(PARENT, childOf({ policy: "tool == `x`" }), NONE).find((r) => r.axis === "policy")!;
    expect(policy.child).toBe("(amount_minor <= 5000) && (tool == `x`)");
  });

  it("reports every widening axis at once, never just the first", () => {
    const child = childOf({
      scope: { tool: ["search"] },
      window: { start: T0, end: T0 + 48 * HOUR },
      budget_amount_minor: 20_000,
      budget_currency: "USD",
      budget_count: null,
      enforcement_mode: "observe",
      audience: "other",
      principal: { type: "human", id: "mallory" },
      delegation_depth_max: null,
    });
    const parent = withTerms({ conditions: { clean_context: true }, delegation_policy: "none" });
    expect(widenings(parent, { ...child, conditions: { clean_context: false } }).map((w) => w.axis)).toEqual([
      "scope.tool",
      "window",
      "budget_amount_minor",
      "budget_currency",
      "budget_count",
      "conditions.clean_context",
      "enforcement_mode",
      "audience",
      "principal",
      "delegation_policy",
      "delegation_depth_max",
    ]);
  });

  it("explains every axis in a fixed order", () => {
    expect(explainAttenuation(PARENT, childOf({}), NONE).map((r) => r.axis)).toEqual([...AXES]);
  });

  it("does not change its arguments and returns frozen values", () => {
    const before = JSON.stringify(PARENT);
    const result = checkAttenuation(PARENT, childOf({ audience: "x" }), NONE);
    expect(JSON.stringify(PARENT)).toBe(before);
    expect(Object.isFrozen(result)).toBe(true);
  });
});

describe("effectiveGrant", () => {
  it("conjoins policies root first and counts the depth cap down the chain", () => {
    const child = childOf({ policy: 'currency == "EUR"', budget_amount_minor: 2_000 });
    const grandchild = { ...child, delegation_depth_max: null, policy: "uses < 3" };
    const effective = effectiveGrant([PARENT, child, grandchild]);
    expect(effective.policy).toBe('(amount_minor <= 5000) && (currency == "EUR") && (uses < 3)');
    expect(effective.delegation_depth_max).toBe(0);
    expect(effective.budget_amount_minor).toBe(2_000);
  });

  it("takes the strictest mode and every condition on the chain", () => {
    const parent = withTerms({ enforcement_mode: "observe", conditions: { clean_context: true } });
    const effective = effectiveGrant([parent, childOf({ enforcement_mode: "enforce" })]);
    expect(effective.enforcement_mode).toBe("enforce");
    expect(effective.conditions.clean_context).toBe(true);
  });

  it("of one grant is that grant", () => {
    expect(effectiveGrant([PARENT])).toEqual(PARENT);
  });
});

describe("meet, leq and canonical forms", () => {
  it("meets scopes by intersection, patterns included", () => {
    const a = withTerms({ scope: { tool: ["payments.*"] } });
    const b = withTerms({ scope: { tool: ["payments.card.*", "mail.send"] } });
    expect(meet(a, b).scope.tool).toEqual(["payments.card.*"]);
  });

  it("meets to BOTTOM when audiences or principals differ, or nothing is shared", () => {
    expect(meet(PARENT, withTerms({ audience: "other" }))).toBe(BOTTOM);
    expect(meet(PARENT, withTerms({ principal: { type: "human", id: "finance" } }))).toBe(BOTTOM);
    expect(meet(withTerms({ scope: { tool: ["mail.send"] } }), withTerms({ scope: { tool: ["payments.send"] } }))).toBe(BOTTOM);
  });

  it("takes the smaller budgets, and no spending across currencies", () => {
    const m = meet(PARENT, withTerms({ budget_amount_minor: 3_000, budget_count: null }));
    expect([m.budget_amount_minor, m.budget_currency, m.budget_count]).toEqual([3_000, "EUR", 10]);
    const cross = meet(PARENT, withTerms({ budget_currency: "USD" }));
    expect([cross.budget_amount_minor, cross.budget_currency]).toEqual([0, null]);
  });

  it("conjoins the policies and keeps each conjunct once", () => {
    expect(meet(PARENT, withTerms({ policy: "uses < 3 && amount_minor <= 5000" })).policy).toBe("(amount_minor <= 5000) && (uses < 3)");
  });

  it("orders policies by their conjuncts", () => {
    expect(leq(withTerms({ policy: "amount_minor <= 5000 && uses < 3" }), PARENT)).toBe(true);
    expect(leq(withTerms({ policy: "uses < 3" }), PARENT)).toBe(false);
    expect(leq(withTerms({ policy: null }), withTerms({ policy: "true" }))).toBe(true);
  });

  it("puts every void grant below everything, observe grants with a window excepted", () => {
    const noTools = withTerms({ scope: { tool: [] }, audience: "elsewhere" });
    expect(isVoid(noTools) && leq(noTools, PARENT)).toBe(true);
    expect(isVoid(withTerms({ scope: { tool: [] }, enforcement_mode: "observe" }))).toBe(false);
    expect(isVoid(withTerms({ window: { start: T0, end: T0 }, enforcement_mode: "observe" }))).toBe(true);
    expect(normalizeTerms(noTools)).toBe(BOTTOM);
  });

  it("builds canonical terms that are equal for equivalent grants", () => {
    const a = withTerms({ scope: { tool: ["mail.send", "payments.*", "payments.send"] }, policy: "(b == 2) && a == 1" });
    const b = withTerms({ scope: { tool: ["payments.*", "mail.send"] }, policy: "a == 1 && b == 2" });
    expect(equivalent(a, b)).toBe(true);
    expect(normalizeTerms(a)).toEqual(normalizeTerms(b));
  });
});

describe("policyConjuncts", () => {
  it("splits top-level conjunctions and drops outer parentheses and `true`", () => {
    expect(policyConjuncts("(a == 1) && ((b == 2 && c == 3)) && true")).toEqual(["a == 1", "b == 2", "c == 3"]);
    expect(policyConjuncts(null)).toEqual([]);
    expect(policyConjuncts("  ")).toEqual([]);
  });

  it("keeps a top-level disjunction, brackets and string literals whole", () => {
    expect(policyConjuncts("a && b || c")).toEqual(["a && b || c"]);
    expect(policyConjuncts('tool in ["x && y", "(z"] && args.q == "a) && (b"')).toEqual([
      'tool in ["x && y", "(z"]',
      'args.q == "a) && (b"',
    ]);
    expect(policyConjuncts("(a) || (b)")).toEqual(["(a) || (b)"]);
    expect(policyConjuncts("!(a && b) && c")).toEqual(["!(a && b)", "c"]);
  });

  it("treats text it cannot balance as one conjunct", () => {
    expect(policyConjuncts("(a && b")).toEqual(["(a && b"]);
  });

  it("round-trips through conjoinPolicyText", () => {
    const parts = ["a == 1", "b || c", 'd == "&&"'];
    expect(policyConjuncts(conjoinPolicyText(parts))).toEqual(parts);
  });
});
