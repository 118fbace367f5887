// The policy gate's one-link path (one grant of the chain has a policy) decides exactly as its path
// for a chain of several policies, with and without an approval (decisions 0147, 0148 and 0149).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decide, type ApprovalRecord, type Decision } from "@agent-authority/engine";
import { formatExpr } from "@agent-authority/language";
import { approverEnvironment, approverExprs, approverUniverse, typedExprs } from "../../packages/language/test-support/arbitraries.js";
import { chainOf, HOUR, NOW, request, stateFor } from "./fixtures.js";
import { propertyOptions } from "../lattice/property-options.js";

/** Policies written out: one that fails at run time, one that runs out of work units on a long `args.s`. */
const WRITTEN = [
  'amount_minor <= 5000 || approver in ["cfo@example.com", "a"]',
  "args.n > 3 || approver != null",
  'size(args.s) + size(args.s) + size(args.s) + size(args.s) + size(args.s) > 0 && (amount_minor < 10 || approver != "a")',
  "amount_minor <=",
];

const policyArb = fc.oneof(
  fc.constantFrom(...WRITTEN),
  approverExprs.map(formatExpr),
  typedExprs.b.map(formatExpr),
  fc.tuple(approverExprs, typedExprs.b, fc.constantFrom("&&", "||")).map(([a, b, op]) => `(${formatExpr(a)}) ${op} (${formatExpr(b)})`),
);

/** An approval for the action: mostly one that covers it, sometimes one that fails one of its checks. */
const approvalArb: fc.Arbitrary<ApprovalRecord> = fc
  .tuple(
    fc.oneof(fc.constantFrom(...approverUniverse.slice(0, 40)), fc.constantFrom("cfo@example.com", "")),
    fc.constantFrom<Partial<ApprovalRecord>>(
      {},
      {},
      {},
      {},
      { grant_id: "grt_root" },
      { tool: "files.read" },
      { amount_ceiling_minor: 10 },
      { expires_at: NOW },
    ),
  )
  .map(([approver, broken]) => ({
    approval_id: "apv_1",
    approver,
    grant_id: "grt_child",
    tool: "payments.send",
    amount_ceiling_minor: 1_000_000,
    expires_at: NOW + HOUR,
    ...broken,
  }));

const actionArb = fc.record({
  amount: approverEnvironment.map((env) => env.amount_minor),
  args: fc
    .tuple(approverEnvironment, fc.constantFrom(0, 10, 40_000, 60_000))
    .map(([env, n]) => (n === 0 ? env.args : { ...env.args, s: "a".repeat(n) })),
  approval: fc.option(approvalArb, { nil: null, freq: 2 }),
});

/**
 * A decision as the law compares it. On the chain's path the root's `true` has spent one unit of
 * the decision's meter before the leaf runs, so the leaf's own budget is stated one unit higher in
 * a `cost-exceeded` message; where it runs out is the same.
 */
function compared(decision: Decision): unknown {
  return JSON.parse(JSON.stringify(decision).replaceAll("budget of 65537 work units", "budget of 65536 work units"));
}

describe("policy gate: the one-link path", () => {
  it("decides as the path of a chain of several policies, on every outcome, reason, residual and error", () => {
    let exceeded = 0;
    fc.assert(
      fc.property(policyArb, actionArb, (policy, { amount, args, approval }) => {
        const action = request({ amount_minor: amount, args, approval });
        const alone = decide(action, chainOf({ policy: null }, { policy }), stateFor(), NOW);
        const chained = decide(action, chainOf({ policy: "true" }, { policy }), stateFor(), NOW);
        if (alone.reason_code === "policy.cost_exceeded") exceeded += 1;
        expect(compared(alone)).toEqual(compared(chained));
      }),
      propertyOptions(),
    );
    // The budget's edge was reached, with and without an approval.
    expect(exceeded).toBeGreaterThan(0);
  });
});
