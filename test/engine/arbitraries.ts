// Generators for the engine's property suites: delegations, decision-time usage and actions.
import fc from "fast-check";
import type { ApprovalRecord, ChainLink, Decision, DecisionRequest, DecisionState, LiveHold } from "@agent-authority/engine";
import { alignedTermsArb, childOf, EPOCH, narrowerThan, termsArb, TOOL_NAMES, usageArb } from "../lattice/arbitraries.js";
import { checkAttenuation, remainingAmount, remainingCount, toolCovered, type GrantTerms } from "@agent-authority/lattice";

const HOUR = 3_600_000;
const AXIS_KEYS = [
  "scope",
  "window",
  "budget_amount_minor",
  "budget_currency",
  "budget_count",
  "conditions",
  "enforcement_mode",
  "audience",
  "principal",
  "delegation_policy",
  "delegation_depth_max",
  "policy",
] as const satisfies readonly (keyof GrantTerms)[];
export const AGENT = "agt_a";
const ATTESTED = { manifest_hash: "m1", content_hash: "c1", provenance_version: "p1" };

/** A parent that may delegate, and a child it accepts under the usage at delegation. */
export const delegationArb = fc
  .record({ parent: alignedTermsArb, usage: usageArb, depth: fc.constantFrom(null, 1, 2, 3) })
  .map(({ parent, usage, depth }) => ({
    parent: { ...parent, delegation_policy: "attenuating" as const, delegation_depth_max: depth },
    usage,
  }))
  .chain(({ parent, usage }) => {
    const delegable: GrantTerms = {
      ...parent,
      budget_amount_minor: remainingAmount(parent, usage),
      budget_count: remainingCount(parent, usage),
      delegation_depth_max: parent.delegation_depth_max === null ? null : parent.delegation_depth_max - 1,
    };
    // Mostly narrower children, some with one axis taken from an unrelated grant (often wider):
    // those are the children a faulty checker would let through.
    const oneAxisOff = fc
      .tuple(narrowerThan(delegable), fc.oneof(alignedTermsArb, termsArb), fc.constantFrom(...AXIS_KEYS))
      .map(([narrow, other, key]) => ({ ...narrow, [key]: other[key] }) as GrantTerms);
    return fc
      .oneof(
        { weight: 3, arbitrary: narrowerThan(delegable) },
        { weight: 4, arbitrary: oneAxisOff },
        { weight: 1, arbitrary: childOf(parent) },
      )
      .map((child) => ({ parent, usage, child }));
  })
  .filter(({ parent, usage, child }) => checkAttenuation(parent, child, usage).ok);

const holdsArb: fc.Arbitrary<LiveHold[]> = fc.array(
  fc.record({ amount_minor: fc.constantFrom(100, 1_000, 4_000), expires_at: fc.integer({ min: 0, max: 8 }).map((h) => EPOCH + h * HOUR) }),
  { maxLength: 3 },
);
const usageStateArb = fc.record({
  uses: fc.integer({ min: 0, max: 4 }),
  settled_minor: fc.constantFrom(0, 500, 3_000, 9_000),
  holds: holdsArb,
});

/** The decision-time usage: the child's, and the parent's made of the child's plus its own. */
export const usagePairArb = fc.record({ child: usageStateArb, extra: usageStateArb }).map(({ child, extra }) => ({
  child,
  parent: {
    uses: child.uses + extra.uses,
    settled_minor: child.settled_minor + extra.settled_minor,
    holds: [...child.holds, ...extra.holds],
  },
}));

/** Actions biased towards what the child allows, so that the property has something to refute. */
export function actionArb(child: GrantTerms) {
  const covered = TOOL_NAMES.filter((t) => toolCovered(t, child.scope.tool));
  const inside = child.window.end > child.window.start;
  const likely = <T>(value: T, other: fc.Arbitrary<T>): fc.Arbitrary<T> =>
    fc.oneof({ weight: 4, arbitrary: fc.constant(value) }, { weight: 1, arbitrary: other });
  return fc.record({
    tool:
      covered.length > 0
        ? fc.oneof(
            { weight: 4, arbitrary: fc.constantFrom(...covered) },
            { weight: 1, arbitrary: fc.constantFrom(...TOOL_NAMES, "other.tool") },
          )
        : fc.constantFrom(...TOOL_NAMES, "other.tool"),
    amount_minor: fc.oneof(fc.constant(child.budget_amount_minor), fc.constantFrom(null, 0, 1, 500, 1_000, 4_999, 5_000, 10_000)),
    currency: likely(child.budget_currency, fc.constantFrom("EUR", "USD", null)),
    audience: likely(child.audience, fc.constantFrom(null, "api.example.com")),
    clean: fc.constantFrom<boolean | null>(true, true, false, null),
    country: fc.constantFrom<string | number | null>("FR", "DE", 7, null),
    attested: likely(true, fc.boolean()),
    approver: fc.constantFrom(null, null, "cfo@example.com", "intern@example.com"),
    ceiling: fc.constantFrom(0, 5_000, 100_000),
    now: inside
      ? likely(0, fc.integer({ min: -60, max: 60 })).chain((skew) =>
          fc.integer({ min: child.window.start, max: child.window.end - 1 }).map((t) => t + skew * 60_000),
        )
      : fc.integer({ min: 0, max: 7 * 60 }).map((m) => EPOCH + m * 60_000),
    statuses: fc.tuple(
      likely<ChainLink["status"]>("active", fc.constantFrom("pending_approval", "revoked")),
      likely<ChainLink["status"]>("active", fc.constantFrom("pending_approval", "revoked")),
    ),
  });
}
export type Action = typeof actionArb extends (child: GrantTerms) => fc.Arbitrary<infer A> ? A : never;

export function requestFor(grant_id: string, a: Action): DecisionRequest {
  const approval: ApprovalRecord | null =
    a.approver === null
      ? null
      : { approval_id: "apv_1", approver: a.approver, grant_id, tool: a.tool, amount_ceiling_minor: a.ceiling, expires_at: a.now + HOUR };
  return {
    grant_id,
    agent_id: AGENT,
    tool: a.tool,
    amount_minor: a.amount_minor,
    currency: a.currency,
    audience: a.audience,
    args: a.country === null ? {} : { country: a.country },
    context: a.clean === null ? null : { clean: a.clean },
    attestation: a.attested ? ATTESTED : { ...ATTESTED, manifest_hash: "m2" },
    approval,
  };
}

export const STATE: DecisionState = {
  environment: "prod",
  certificate: { certificate_id: "crt_1", agent_id: AGENT, environment: "prod", revoked_at: null, ...ATTESTED },
};

/**
 * What the decision says about authority: the outcome, or in `observe` what enforce would have
 * said. Comparing these is stronger than comparing outcomes, which `observe` makes all `allow`.
 */
export function verdict(decision: Decision): string {
  return decision.would_outcome ?? decision.outcome;
}
