// Completeness of checkAttenuation: every axis it reports really widens, shown by a witness.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decide, type ChainLink, type DecisionRequest } from "@agent-authority/engine";
import {
  checkAttenuation,
  inheritChildTerms,
  isPattern,
  toolCovered,
  type GrantTerms,
  type ParentUsage,
  type Widening,
} from "@agent-authority/lattice";
import { alignedTermsArb, childOf, EPOCH, termsArb, usageArb } from "../lattice/arbitraries.js";
import { propertyOptions } from "../lattice/property-options.js";
import { PERMANENT_WIDENINGS } from "../lattice/counterexamples.js";
import { AGENT, STATE } from "./arbitraries.js";

const HOUR = 3_600_000;

/** A grant wide on every axis, so that a witness isolates the one axis under test. */
const BASE: GrantTerms = {
  scope: { tool: ["witness.*"] },
  window: { start: EPOCH - 1_000 * HOUR, end: EPOCH + 1_000 * HOUR },
  budget_amount_minor: 1_000_000_000,
  budget_currency: "EUR",
  budget_count: null,
  conditions: { clean_context: false },
  enforcement_mode: "enforce",
  audience: null,
  principal: { type: "human", id: "alice" },
  delegation_policy: "attenuating",
  delegation_depth_max: null,
  policy: null,
};

const BASE_REQUEST: DecisionRequest = {
  grant_id: "grt_w",
  agent_id: AGENT,
  tool: "witness.tool",
  amount_minor: 0,
  currency: "EUR",
  audience: null,
  context: { clean: false },
  attestation: STATE.certificate,
};

function outcome(terms: Partial<GrantTerms>, usage: Partial<ChainLink["usage"]>, request: Partial<DecisionRequest>, now = EPOCH): string {
  const link: ChainLink = {
    grant_id: "grt_w",
    agent_id: AGENT,
    status: "active",
    terms: { ...BASE, ...terms },
    usage: { uses: 0, settled_minor: 0, holds: [], ...usage },
  };
  return decide({ ...BASE_REQUEST, ...request }, [link], STATE, now).outcome;
}

/** An action the child's value of the axis allows and the parent's refuses, all else being wide. */
function expectWitness(w: Widening, parent: GrantTerms, child: GrantTerms, usage: ParentUsage): void {
  switch (w.axis) {
    case "scope.tool": {
      const entry = child.scope.tool.find((e) => !toolCovered(e, parent.scope.tool))!;
      const tool = isPattern(entry) ? `${entry.slice(0, -1)}witness` : entry;
      expect(outcome({ scope: child.scope }, {}, { tool })).toBe("allow");
      expect(outcome({ scope: parent.scope }, {}, { tool })).toBe("deny");
      return;
    }
    case "window": {
      const t = child.window.start < parent.window.start ? child.window.start : Math.max(child.window.start, parent.window.end);
      expect(outcome({ window: child.window }, {}, {}, t)).toBe("allow");
      expect(outcome({ window: parent.window }, {}, {}, t)).toBe("deny");
      return;
    }
    case "budget_amount_minor": {
      const request = { amount_minor: child.budget_amount_minor };
      expect(outcome({ budget_amount_minor: child.budget_amount_minor }, {}, request)).toBe("allow");
      expect(outcome({ budget_amount_minor: parent.budget_amount_minor }, { settled_minor: usage.spent_minor }, request)).toBe("exhausted");
      return;
    }
    case "budget_currency": {
      const request = { amount_minor: 1, currency: child.budget_currency };
      expect(outcome({ budget_amount_minor: child.budget_amount_minor, budget_currency: child.budget_currency }, {}, request)).toBe(
        "allow",
      );
      expect(outcome({ budget_amount_minor: parent.budget_amount_minor, budget_currency: parent.budget_currency }, {}, request)).not.toBe(
        "allow",
      );
      return;
    }
    case "budget_count": {
      const left = Math.max(0, parent.budget_count! - usage.uses);
      expect(outcome({ budget_count: child.budget_count }, { uses: left }, {})).toBe("allow");
      expect(outcome({ budget_count: parent.budget_count }, { uses: Math.max(usage.uses + left, parent.budget_count!) }, {})).toBe(
        "exhausted",
      );
      return;
    }
    case "conditions.clean_context": {
      expect(outcome({ conditions: child.conditions }, {}, { context: { clean: false } })).toBe("allow");
      expect(outcome({ conditions: parent.conditions }, {}, { context: { clean: false } })).toBe("deny");
      return;
    }
    case "enforcement_mode": {
      expect(outcome({ enforcement_mode: child.enforcement_mode }, {}, { tool: "outside.tool" })).toBe("allow");
      expect(outcome({ enforcement_mode: parent.enforcement_mode }, {}, { tool: "outside.tool" })).toBe("deny");
      return;
    }
    case "audience": {
      expect(outcome({ audience: child.audience }, {}, { audience: child.audience })).toBe("allow");
      expect(outcome({ audience: parent.audience }, {}, { audience: child.audience })).toBe("deny");
      return;
    }
    case "principal": {
      // The witness is a value: the child would act, and be accounted, for another principal.
      expect(child.principal.type !== parent.principal.type || child.principal.id !== parent.principal.id).toBe(true);
      return;
    }
    case "delegation_policy": {
      // The witness is a delegation: the parent may not delegate even a child equal to itself.
      const same = inheritChildTerms(parent, {}, usage);
      const result = checkAttenuation(parent, same, usage);
      expect(result.ok === false && result.widenings.some((x) => x.axis === "delegation_policy")).toBe(true);
      return;
    }
    case "delegation_depth_max": {
      const allowed = parent.delegation_depth_max! - 1;
      if (allowed < 0) {
        const same = inheritChildTerms(parent, {}, usage);
        const result = checkAttenuation(parent, same, usage);
        expect(result.ok === false && result.widenings.some((x) => x.axis === "delegation_depth_max")).toBe(true);
        return;
      }
      // The child's cap lets `allowed + 1` further levels be delegated below it; the parent's, `allowed`.
      let current: GrantTerms = { ...BASE, delegation_depth_max: child.delegation_depth_max };
      for (let level = 0; level <= allowed; level += 1) {
        const next = inheritChildTerms(current, {}, { uses: 0, spent_minor: 0 });
        expect(checkAttenuation(current, next, { uses: 0, spent_minor: 0 }).ok).toBe(true);
        current = next;
      }
      return;
    }
    default:
      throw new Error(`no witness for axis \`${w.axis}\``);
  }
}

describe("completeness: every reported axis really widens", () => {
  it("keeps its permanent cases", () => {
    for (const c of PERMANENT_WIDENINGS) {
      const result = checkAttenuation(c.parent, c.child, { uses: 0, spent_minor: 0 });
      for (const w of result.ok ? [] : result.widenings) expectWitness(w, c.parent, c.child, { uses: 0, spent_minor: 0 });
    }
  });

  it("has a witness action or value for every widening reported", () => {
    const cases = fc.oneof(
      fc.tuple(alignedTermsArb, termsArb, usageArb),
      alignedTermsArb.chain((p) => fc.tuple(fc.constant(p), childOf(p), usageArb)),
    );
    fc.assert(
      fc.property(cases, ([parent, child, usage]) => {
        const result = checkAttenuation(parent, child, usage);
        if (result.ok) return;
        expect(result.widenings.map((w) => w.axis)).not.toContain("policy");
        for (const w of result.widenings) expectWitness(w, parent, child, usage);
      }),
      propertyOptions(),
    );
  });
});
