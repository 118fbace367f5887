// The approval check of the server (`residualAdmits`) agrees with the policy gate: an approver the
// residual admits is the one whose approval the retried decision allows, for any approver text.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decide, residualAdmits, type ApprovalRecord } from "@agent-authority/engine";
import { chainOf, HOUR, NOW, request, stateFor } from "./fixtures.js";

const NAMES = ["bob@example.com", "cfo@example.com", "dave@example.com", "", "bob@example.com ", "BOB@example.com", "b\"ob", "\u0000"];
const POLICIES = [
  'amount_minor <= 5000 || approver == "bob@example.com"',
  'amount_minor <= 5000 || approver in ["cfo@example.com", "bob@example.com"]',
  'amount_minor <= 5000 || approver != "dave@example.com"',
  'approver != null && approver != "bob@example.com"',
];
const approval = (approver: string): ApprovalRecord => ({
  approval_id: "apv_1", approver, grant_id: "grt_child", tool: "payments.send", amount_ceiling_minor: 8_000, expires_at: NOW + HOUR,
});

describe("residualAdmits", () => {
  it("admits exactly the approvers whose approval the policy gate then accepts", () => {
    const approver = fc.oneof(fc.constantFrom(...NAMES), fc.string({ maxLength: 40 }), fc.string({ unit: "grapheme", maxLength: 20 }));
    fc.assert(fc.property(fc.constantFrom(...POLICIES), approver, (policy, who) => {
      const chain = chainOf({}, { policy });
      const gated = decide(request({ amount_minor: 6_000 }), chain, stateFor(), NOW);
      expect(gated.outcome).toBe("gated");
      const retried = decide(request({ amount_minor: 6_000, approval: approval(who) }), chain, stateFor(), NOW);
      expect(residualAdmits(gated.residual!, who)).toBe(retried.outcome === "allow");
    }), { numRuns: 500 });
  });

  it("the issue's case: bob is admitted, dave is not", () => {
    expect(residualAdmits('approver == "bob@example.com"', "bob@example.com")).toBe(true);
    expect(residualAdmits('approver == "bob@example.com"', "dave@example.com")).toBe(false);
  });

  it("a residual that does not compile admits nobody", () => {
    expect(residualAdmits("approver ==", "bob@example.com")).toBe(false);
  });
});
