// Gate 8: the chain's policies, approvals of gated decisions, and failing closed.
import { describe, expect, it } from "vitest";
import { decide, policyEnvironment, type ApprovalRecord, type ChainLink } from "@agent-authority/engine";
import { chainOf, HOUR, NOW, request, stateFor } from "./fixtures.js";

const CFO = 'amount_minor <= 5000 || approver in ["cfo@example.com"]';
const approval = (overrides: Partial<ApprovalRecord> = {}): ApprovalRecord => ({
  approval_id: "apv_1",
  approver: "cfo@example.com",
  grant_id: "grt_child",
  tool: "payments.send",
  amount_ceiling_minor: 8_000,
  expires_at: NOW + HOUR,
  ...overrides,
});

describe("gate 8: policy", () => {
  it("allows when every policy of the chain allows", () => {
    const decision = decide(request(), chainOf({ policy: "amount_minor <= 5000" }, { policy: 'currency == "EUR"' }), stateFor(), NOW);
    expect(decision).toMatchObject({ outcome: "allow" });
    expect(decision.gates[7]).toMatchObject({ result: "pass", code: "policy.allow" });
  });

  it("denies when an ancestor's policy refuses, whatever the child's says", () => {
    const decision = decide(
      request({ amount_minor: 6_000 }),
      chainOf({ policy: "amount_minor <= 5000" }, { policy: "true" }),
      stateFor(),
      NOW,
    );
    expect(decision).toMatchObject({ outcome: "deny", decided_by: "policy", reason_code: "policy.deny" });
    expect(decision.gates[7]!.grant_id).toBe("grt_root");
    expect(decision.reason).toContain("ancestor grant `grt_root`");
  });

  it("gates with the residual that says who can approve", () => {
    const decision = decide(request({ amount_minor: 6_000 }), chainOf({}, { policy: CFO }), stateFor(), NOW);
    expect(decision).toMatchObject({
      outcome: "gated",
      decided_by: "policy",
      reason_code: "policy.gated",
      residual: 'approver in ["cfo@example.com"]',
    });
    expect(decision.reason).toContain('approver in ["cfo@example.com"]');
    expect(decision).toMatchObject({ counted: false, holds: [] });
  });

  it("conjoins the residuals of several grants, so one approver must satisfy them all", () => {
    const both = chainOf({ policy: "amount_minor <= 100 || approver != null" }, { policy: CFO });
    const gated = decide(request({ amount_minor: 6_000 }), both, stateFor(), NOW);
    expect(gated).toMatchObject({ outcome: "gated", reason_code: "policy.gated" });
    expect(gated.residual).toContain("cfo@example.com");
    const apart = chainOf({ policy: 'approver == "ceo@example.com"' }, { policy: CFO });
    expect(decide(request({ amount_minor: 6_000 }), apart, stateFor(), NOW)).toMatchObject({
      outcome: "deny",
      reason_code: "policy.no_single_approver",
    });
  });

  it("fails closed on a run-time error and says why", () => {
    const decision = decide(request({ args: { n: "seven" } }), chainOf({}, { policy: "args.n > 3" }), stateFor(), NOW);
    expect(decision).toMatchObject({ outcome: "deny", reason_code: "policy.error", decided_by: "policy" });
    expect(decision.policy_error?.code).toBeTruthy();
    expect(decision.reason).toContain("fails closed");
  });

  it("fails closed on a stored policy that does not compile", () => {
    expect(decide(request(), chainOf({}, { policy: "amount_minor <=" }), stateFor(), NOW)).toMatchObject({
      outcome: "deny",
      reason_code: "policy.invalid",
    });
  });

  it("reads uses and spent_minor from the grant whose policy it evaluates", () => {
    const chain: ChainLink[] = chainOf({ policy: "uses < 3 && spent_minor + amount_minor <= 4000" }, { policy: "uses < 3" });
    const busyRoot: ChainLink = { ...chain[0]!, usage: { uses: 3, settled_minor: 0, holds: [] } };
    expect(decide(request(), [busyRoot, chain[1]!], stateFor(), NOW)).toMatchObject({ outcome: "deny", reason_code: "policy.deny" });
    const spentRoot: ChainLink = {
      ...chain[0]!,
      usage: { uses: 0, settled_minor: 2_000, holds: [{ amount_minor: 1_500, expires_at: NOW + 1 }] },
    };
    expect(decide(request({ amount_minor: 600 }), [spentRoot, chain[1]!], stateFor(), NOW).outcome).toBe("deny");
    expect(decide(request({ amount_minor: 500 }), [spentRoot, chain[1]!], stateFor(), NOW).outcome).toBe("allow");
    const expiredHold: ChainLink = { ...spentRoot, usage: { ...spentRoot.usage, holds: [{ amount_minor: 1_500, expires_at: NOW }] } };
    expect(decide(request({ amount_minor: 2_000 }), [expiredHold, chain[1]!], stateFor(), NOW).outcome).toBe("allow");
  });

  it("binds the environment from the request, the grant and now", () => {
    const env = policyEnvironment(request({ args: { country: "FR" } }), chainOf()[1]!, Date.UTC(2026, 2, 2, 9, 30));
    expect(env).toEqual({
      amount_minor: 1_000,
      currency: "EUR",
      tool: "payments.send",
      approver: null,
      agent: "agt_child",
      principal: "finance",
      audience: "api.example.com",
      uses: 0,
      spent_minor: 0,
      hour_utc: 9,
      weekday_utc: "mon",
      args: { country: "FR" },
    });
    const chain = chainOf({}, { policy: 'weekday_utc == "mon" && hour_utc >= 9 && args.country == "FR"' });
    expect(decide(request({ args: { country: "FR" } }), chain, stateFor(), Date.UTC(2026, 2, 2, 9, 30)).outcome).toBe("allow");
    expect(decide(request({ args: {} }), chain, stateFor(), Date.UTC(2026, 2, 2, 9, 30)).outcome).toBe("deny");
  });

  it("binds the request's own currency, never a grant's budget currency", () => {
    // A child that may not spend may name any currency; a policy must not see it.
    const chain = chainOf({}, { budget_amount_minor: 0, budget_currency: "USD", policy: 'currency == "USD"' });
    const noCurrency = request({ amount_minor: 0, currency: null });
    expect(policyEnvironment(noCurrency, chain[1]!, NOW).currency).toBe("");
    expect(policyEnvironment(noCurrency, chain[0]!, NOW).currency).toBe("");
    expect(decide(noCurrency, chain, stateFor(), NOW)).toMatchObject({ outcome: "deny", reason_code: "policy.deny" });
    expect(decide({ ...noCurrency, currency: "USD" }, chain, stateFor(), NOW).outcome).toBe("allow");
  });

  it("is recorded, not enforced, in observe", () => {
    const chain = chainOf({ enforcement_mode: "observe" }, { enforcement_mode: "observe", policy: CFO });
    const decision = decide(request({ amount_minor: 6_000 }), chain, stateFor(), NOW);
    expect(decision).toMatchObject({
      outcome: "allow",
      would_outcome: "gated",
      residual: 'approver in ["cfo@example.com"]',
      counted: false,
    });
  });
});

describe("approvals of gated decisions", () => {
  const chain = (): ChainLink[] => chainOf({}, { policy: CFO });

  it("allows with the approver bound when the approval covers the action", () => {
    const decision = decide(request({ amount_minor: 6_000, approval: approval() }), chain(), stateFor(), NOW);
    expect(decision).toMatchObject({ outcome: "allow", approver: "cfo@example.com", approval_id: "apv_1", counted: true });
    expect(decision.gates[7]).toMatchObject({ result: "pass", code: "policy.approved" });
    expect(decision.holds).toHaveLength(2);
  });

  it("denies when the approver does not satisfy the policy", () => {
    const decision = decide(
      request({ amount_minor: 6_000, approval: approval({ approver: "intern@example.com" }) }),
      chain(),
      stateFor(),
      NOW,
    );
    expect(decision).toMatchObject({ outcome: "deny", reason_code: "policy.deny", approver: null });
    expect(decision.reason).toContain("intern@example.com");
  });

  it("denies an approval given for another grant, another tool, a smaller amount, or expired", () => {
    const cases: [Partial<ApprovalRecord>, string][] = [
      [{ grant_id: "grt_other" }, "approval.wrong_grant"],
      [{ tool: "payments.refund" }, "approval.wrong_tool"],
      [{ amount_ceiling_minor: 5_999 }, "approval.over_ceiling"],
      [{ expires_at: NOW }, "approval.expired"],
    ];
    for (const [overrides, code] of cases) {
      const decision = decide(request({ amount_minor: 6_000, approval: approval(overrides) }), chain(), stateFor(), NOW);
      expect(decision).toMatchObject({ outcome: "deny", decided_by: "policy", reason_code: code });
    }
    const atCeiling = decide(request({ amount_minor: 8_000, approval: approval() }), chain(), stateFor(), NOW);
    expect(atCeiling.outcome).toBe("allow");
  });
});
