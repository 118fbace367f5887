// Issue 23 at the decision: a chain whose policy text has errors never allows, and no hostile text
// or action makes the engine throw.
import fc from "fast-check";
import { decide } from "@agent-authority/engine";
import { compilePolicy } from "@agent-authority/language";
import { describe, expect, it } from "vitest";
import { hostileArgs, hostileText } from "../../packages/language/test-support/hostile.js";
import { chainOf, NOW, request, stateFor } from "./fixtures.js";

const params = { numRuns: 300, seed: Number(process.env["FC_SEED"] ?? 20261125) };

describe("hostile policies at gate 8", () => {
  it("never allows under a policy with errors, and never throws", () => {
    fc.assert(
      fc.property(hostileText, hostileArgs, fc.boolean(), (text, args, onRoot) => {
        const chain = onRoot ? chainOf({ policy: text }, {}) : chainOf({}, { policy: text });
        const decision = decide(request({ args }), chain, stateFor(), NOW);
        expect(["allow", "deny", "gated", "exhausted"]).toContain(decision.outcome);
        if (!compilePolicy(text).ok) {
          expect(decision.outcome).toBe("deny");
          expect(decision.reason_code).toBe("policy.invalid");
        }
      }),
      params,
    );
  });
});
