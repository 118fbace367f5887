// The decision's budget of work units at gate 8 (issue 33): a chain's policies share one budget, a
// stored policy that once passed is cut short by it, and the gate then denies with its own code.
import { describe, expect, it } from "vitest";
import { decide, type ChainLink } from "@agent-authority/engine";
import { link, NOW, request, stateFor } from "./fixtures.js";

const LARGE = Array.from({ length: 1024 }, () => Array.from({ length: 27 }, () => 0));

/** A chain of `n` links (root first), the leaf `grt_child` held by `agt_child`, each with `policy(i)`. */
function chainOfLength(n: number, policy: (i: number) => string | null): ChainLink[] {
  return Array.from({ length: n }, (_, i) => {
    const leaf = i === n - 1;
    return link(leaf ? "grt_child" : `grt_${i}`, leaf ? "agt_child" : `agt_${i}`, { policy: policy(i), delegation_depth_max: 100 });
  });
}

describe("gate 8: the decision's budget of work units", () => {
  it("denies a stored `args.l == args.l && …` (issued before the budget) on 56 KB of args with `policy.cost_exceeded`, and allows it on small args", () => {
    const policy = Array.from({ length: 180 }, () => "args.l == args.l").join(" && ");
    const chain = chainOfLength(2, (i) => (i === 1 ? policy : null));
    const large = decide(request({ args: { l: LARGE } }), chain, stateFor(), NOW);
    expect(large).toMatchObject({ outcome: "deny", decided_by: "policy", reason_code: "policy.cost_exceeded" });
    expect(large.gates[7]).toMatchObject({ result: "fail", code: "policy.cost_exceeded", grant_id: "grt_child" });
    expect(decide(request({ args: { l: [1, 2] } }), chain, stateFor(), NOW).outcome).toBe("allow");
  });

  it("a chain of 64 comparisons of two 56 KB values, each within one policy's budget, runs out of the decision's and denies", () => {
    const chain = chainOfLength(64, () => "args.l == args.m");
    const decision = decide(request({ args: { l: LARGE, m: structuredClone(LARGE) } }), chain, stateFor(), NOW);
    expect(decision).toMatchObject({ outcome: "deny", reason_code: "policy.cost_exceeded" });
    // One comparison costs 28,679 units: nine fit the decision's budget of 262,144, ten do not.
    const args = { l: LARGE, m: structuredClone(LARGE) };
    expect(
      decide(
        request({ args }),
        chainOfLength(9, () => "args.l == args.m"),
        stateFor(),
        NOW,
      ).outcome,
    ).toBe("allow");
    expect(
      decide(
        request({ args }),
        chainOfLength(10, () => "args.l == args.m"),
        stateFor(),
        NOW,
      ).reason_code,
    ).toBe("policy.cost_exceeded");
  });

  it("a 64-link chain of `approver in args.l` over 1,024 addresses is gated on the reference, and the listed approver's retry is allowed", () => {
    const l = Array.from({ length: 1024 }, (_, i) => `user${i}@example.com`);
    const chain = chainOfLength(64, (i) => `approver in args.l && args.k != "v${i}"`);
    const gated = decide(request({ args: { l } }), chain, stateFor(), NOW);
    expect(gated).toMatchObject({ outcome: "gated", reason_code: "policy.gated" });
    expect(gated.residual!.length).toBeLessThan(64 * 40);
    const approval = {
      approval_id: "apv_1",
      approver: "user7@example.com",
      grant_id: "grt_child",
      tool: "payments.send",
      amount_ceiling_minor: 1_000,
      expires_at: NOW + 60_000,
    };
    expect(decide(request({ args: { l }, approval }), chain, stateFor(), NOW).outcome).toBe("allow");
  });
});
