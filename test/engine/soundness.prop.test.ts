// Soundness of the lattice against the engine: an accepted child never allows what its parent refuses.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decide, type ChainLink } from "@agent-authority/engine";
import { checkAttenuation, conjoinPolicyText, policyConjuncts, type GrantTerms, type ParentUsage } from "@agent-authority/lattice";
import { propertyOptions } from "../lattice/property-options.js";
import { actionArb, AGENT, delegationArb, requestFor, STATE, usagePairArb, verdict, type Action } from "./arbitraries.js";
import { PERMANENT_SOUNDNESS, PERMANENT_STANDALONE } from "./counterexamples.js";

/** The property for one case; a child the checker refuses is outside it (nothing is created). */
function soundnessCase(
  parent: GrantTerms,
  child: GrantTerms,
  usage: ParentUsage,
  pair: { parent: ChainLink["usage"]; child: ChainLink["usage"] },
  a: Action,
): void {
  if (!checkAttenuation(parent, child, usage).ok) return;
  const parentLink: ChainLink = { grant_id: "grt_p", agent_id: AGENT, status: a.statuses[0], terms: parent, usage: pair.parent };
  const childLink: ChainLink = { grant_id: "grt_c", agent_id: AGENT, status: a.statuses[1], terms: child, usage: pair.child };
  const viaChild = decide(requestFor("grt_c", a), [parentLink, childLink], STATE, a.now);
  if (verdict(viaChild) !== "allow") return;
  const viaParent = decide(requestFor("grt_p", a), [parentLink], STATE, a.now);
  expect({ parent: verdict(viaParent), reason: viaParent.reason }).toEqual({ parent: "allow", reason: viaParent.reason });
}

/** The property for one case; a child the checker refuses is outside it (nothing is created). */
function standaloneCase(parent: GrantTerms, child: GrantTerms, usage: ParentUsage, a: Action): void {
  if (!checkAttenuation(parent, child, usage).ok) return;
  const standalone: GrantTerms = { ...child, policy: conjoinPolicyText([parent.policy, child.policy]) };
  const childLink: ChainLink = {
    grant_id: "grt_c",
    agent_id: AGENT,
    status: "active",
    terms: standalone,
    usage: { uses: 0, settled_minor: 0, holds: [] },
  };
  const parentLink: ChainLink = {
    grant_id: "grt_p",
    agent_id: AGENT,
    status: "active",
    terms: parent,
    usage: { uses: usage.uses, settled_minor: usage.spent_minor, holds: [] },
  };
  if (verdict(decide(requestFor("grt_c", a), [childLink], STATE, a.now)) !== "allow") return;
  expect(verdict(decide(requestFor("grt_p", a), [parentLink], STATE, a.now))).toBe("allow");
}

describe("soundness: checkAttenuation against decide", () => {
  it("an accepted child never allows an action its parent refuses, whatever the usage", () => {
    fc.assert(
      fc.property(
        delegationArb.chain((d) => fc.tuple(fc.constant(d), usagePairArb, actionArb(d.child))),
        ([{ parent, usage, child }, pair, a]) => soundnessCase(parent, child, usage, pair, a),
      ),
      propertyOptions(),
    );
  });

  it("at delegation time, the child standing alone allows nothing its parent refuses", () => {
    // This one checks the lattice itself: the child is decided without its ancestors, on its own
    // terms (its effective policy included), against the parent with the usage at delegation.
    // Usage-dependent policy atoms are left out: standing alone, the child has its own usage.
    const usageFree = (policy: string | null): string | null =>
      conjoinPolicyText(policyConjuncts(policy).filter((c) => !/\b(uses|spent_minor)\b/.test(c)));
    const arb = delegationArb
      .map(({ parent, usage, child }) => ({
        parent: { ...parent, policy: usageFree(parent.policy) },
        usage,
        child: { ...child, policy: usageFree(child.policy) },
      }))
      .chain((d) => fc.tuple(fc.constant(d), actionArb(d.child)));
    fc.assert(
      fc.property(arb, ([{ parent, usage, child }, a]) => standaloneCase(parent, child, usage, a)),
      { ...propertyOptions(), numRuns: 2 * (propertyOptions().numRuns ?? 1_000) },
    );
  });

  it("keeps its shrunk counterexamples as permanent cases", () => {
    for (const c of PERMANENT_SOUNDNESS) soundnessCase(c.parent, c.child, c.usage, c.pair, c.action);
    for (const c of PERMANENT_STANDALONE) {
      expect(checkAttenuation(c.parent, c.child, c.usage).ok, c.why).toBe(!c.refused);
      standaloneCase(c.parent, c.child, c.usage, c.action);
    }
  });

  it("generates children the engine actually allows", () => {
    // Guards the generators: a suite whose children never allow anything would prove nothing.
    const allowed = fc
      .sample(
        delegationArb.chain((d) => fc.tuple(fc.constant(d), usagePairArb, actionArb(d.child))),
        { numRuns: 2_000, seed: 7 },
      )
      .filter(([{ parent, child }, pair, a]) => {
        const p: ChainLink = { grant_id: "grt_p", agent_id: AGENT, status: "active", terms: parent, usage: pair.parent };
        const c: ChainLink = { grant_id: "grt_c", agent_id: AGENT, status: "active", terms: child, usage: pair.child };
        return decide(requestFor("grt_c", a), [p, c], STATE, a.now).outcome === "allow";
      });
    expect(allowed.length).toBeGreaterThan(200);
  });
});
