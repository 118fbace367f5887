// The approval check of the server (`residualAdmits`) agrees with the policy gate: an approver is
// admitted on a gated decision's own action exactly when the retry with their approval is allowed.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decide, residualAdmits, type ApprovalRecord } from "@agent-authority/engine";
import { formatExpr } from "@agent-authority/language";
import { approverEnvironment, approverExprs, approverUniverse } from "../../packages/language/test-support/arbitraries.js";
import { chainOf, HOUR, NOW, request, stateFor } from "./fixtures.js";

const params = { numRuns: 1_500, seed: Number(process.env["FC_SEED"] ?? 20261126) };
const NAMES = ["bob@example.com", "cfo@example.com", "dave@example.com", "", "bob@example.com ", "BOB@example.com", 'b"ob', "\u0000"];
const POLICIES = [
  'amount_minor <= 5000 || approver == "bob@example.com"',
  'amount_minor <= 5000 || approver in ["cfo@example.com", "bob@example.com"]',
  'amount_minor <= 5000 || approver != "dave@example.com"',
  'approver != null && approver != "bob@example.com"',
];
const approval = (approver: string, amount = 8_000): ApprovalRecord => ({
  approval_id: "apv_1",
  approver,
  grant_id: "grt_child",
  tool: "payments.send",
  amount_ceiling_minor: amount,
  expires_at: NOW + HOUR,
});
const approvers = fc.oneof(fc.constantFrom(...approverUniverse), fc.constantFrom(...NAMES), fc.string({ maxLength: 12 }));

/** Decides the action, and when it is gated, compares admission with the retry for `who`. */
function admissionMatchesRetry(
  rootPolicy: string | null,
  childPolicy: string | null,
  args: Record<string, unknown>,
  amount: number,
  who: string,
): boolean | undefined {
  const chain = chainOf({ policy: rootPolicy }, { policy: childPolicy });
  const gated = decide(request({ amount_minor: amount, args }), chain, stateFor(), NOW);
  if (gated.outcome !== "gated" || gated.residual === undefined) return undefined;
  const retried = decide(request({ amount_minor: amount, args, approval: approval(who, amount) }), chain, stateFor(), NOW);
  const admitted = residualAdmits(gated.residual, who, args);
  // The policy gate passes when the retry is allowed or stopped only by the budget gate after it.
  const policyPassed = retried.outcome === "allow" || retried.decided_by === "budget";
  expect(admitted, `residual \`${gated.residual}\`, retry ${retried.outcome} (${retried.reason})`).toBe(policyPassed);
  return admitted;
}

describe("residualAdmits", () => {
  it("admits exactly the approvers whose approval the policy gate then accepts", () => {
    fc.assert(
      fc.property(fc.constantFrom(...POLICIES), approvers, (policy, who) => {
        expect(admissionMatchesRetry(null, policy, {}, 6_000, who)).toBeDefined();
      }),
      { numRuns: 500 },
    );
  });

  it("over random policies, actions and approvers: admitted exactly when the retry allows", () => {
    let gated = 0;
    fc.assert(
      fc.property(approverExprs, fc.option(approverExprs, { nil: null }), approverEnvironment, approvers, (child, root, env, who) => {
        const result = admissionMatchesRetry(root === null ? null : formatExpr(root), formatExpr(child), env.args, env.amount_minor, who);
        if (result !== undefined) gated++;
      }),
      params,
    );
    // The property is only worth its runs if many of them were gated.
    expect(gated).toBeGreaterThan(params.numRuns / 5);
  });

  it("the issue's case: a part that fails on the action admits nobody but the named approver", () => {
    const policy = 'approver == "h7" || !(args.x == 5) && approver == "h9"';
    const args = { x: "s" };
    for (const who of ["h7", "h9", "mallory"]) admissionMatchesRetry(null, policy, args, 1_000, who);
    expect(residualAdmits('approver == "h7" || !(args.x == 5)', "mallory", args)).toBe(false);
    expect(residualAdmits('approver == "h7" || !(args.x == 5)', "h7", args)).toBe(true);
    // Read with no arguments, the same residual would have admitted anyone: the old mistake.
    expect(residualAdmits('approver == "h7" || !(args.x == 5)', "mallory", {})).toBe(true);
  });

  it("the residual names bob: bob is admitted, dave is not", () => {
    expect(residualAdmits('approver == "bob@example.com"', "bob@example.com", {})).toBe(true);
    expect(residualAdmits('approver == "bob@example.com"', "dave@example.com", {})).toBe(false);
  });

  it("a residual that does not compile admits nobody", () => {
    expect(residualAdmits("approver ==", "bob@example.com", {})).toBe(false);
  });
});
