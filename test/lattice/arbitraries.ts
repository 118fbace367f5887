// Generators of grant terms for the property suites: small alphabets, so that axes collide often.
import fc from "fast-check";
import { toolCovered, type EnforcementMode, type GrantTerms, type ParentUsage } from "@agent-authority/lattice";

export const TOOL_NAMES = ["pay.send", "pay.refund", "pay.card.issue", "mail.send", "mail.read", "search"] as const;
export const SCOPE_ENTRIES = [...TOOL_NAMES, "pay.*", "pay.card.*", "mail.*"] as const;
export const POLICY_ATOMS = [
  "amount_minor <= 5000",
  "amount_minor <= 1000",
  'currency == "EUR"',
  'tool != "pay.refund"',
  "uses < 3",
  "spent_minor < 4000",
  'approver in ["cfo@example.com"]',
  "approver != null",
  'args.country == "FR"',
  "hour_utc >= 8",
] as const;

const HOUR = 3_600_000;
export const EPOCH = Date.UTC(2026, 0, 5, 0, 0, 0);

export const scopeArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant([] as string[]) },
  { weight: 9, arbitrary: fc.uniqueArray(fc.constantFrom(...SCOPE_ENTRIES), { minLength: 1, maxLength: 4 }) },
);
export const windowArb = fc.oneof(
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 6 }).map((a) => ({ start: EPOCH + a * HOUR, end: EPOCH + a * HOUR })) },
  {
    weight: 9,
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 1, max: 6 }))
      .map(([a, len]) => ({ start: EPOCH + a * HOUR, end: EPOCH + (a + len) * HOUR })),
  },
);
export const policyArb = fc.oneof(
  { weight: 2, arbitrary: fc.constant(null) },
  {
    weight: 3,
    arbitrary: fc
      .uniqueArray(fc.constantFrom(...POLICY_ATOMS), { minLength: 1, maxLength: 3 })
      .map((atoms) => atoms.map((a) => `(${a})`).join(" && ")),
  },
);
const modeArb: fc.Arbitrary<EnforcementMode> = fc.constantFrom("observe", "enforce");

export const termsArb: fc.Arbitrary<GrantTerms> = fc.record({
  scope: fc.record({ tool: scopeArb }),
  window: windowArb,
  budget_amount_minor: fc.constantFrom(0, 500, 1000, 5000, 10000),
  budget_currency: fc.constantFrom("EUR", "USD", null),
  budget_count: fc.oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 9, arbitrary: fc.constantFrom(null, 1, 2, 5) }),
  conditions: fc.record({ clean_context: fc.boolean() }),
  enforcement_mode: modeArb,
  audience: fc.constantFrom(null, "api.example.com"),
  principal: fc.record({ type: fc.constantFrom("human" as const, "team" as const), id: fc.constantFrom("alice", "bob") }),
  delegation_policy: fc.constantFrom("none" as const, "attenuating" as const),
  delegation_depth_max: fc.constantFrom(null, 0, 1, 2),
  policy: policyArb,
});

/** Terms that agree on the equality axes, so that meet and order have something to compare. */
export const alignedTermsArb: fc.Arbitrary<GrantTerms> = termsArb.map((t) => ({
  ...t,
  audience: "api.example.com",
  principal: { type: "human" as const, id: "alice" },
}));

export const usageArb: fc.Arbitrary<ParentUsage> = fc.record({
  uses: fc.integer({ min: 0, max: 6 }),
  spent_minor: fc.constantFrom(0, 100, 500, 4000, 10000, 12000),
});

/** A child derived from a parent by narrowing a few axes at random (it may still widen some). */
export function childOf(parent: GrantTerms): fc.Arbitrary<GrantTerms> {
  return fc.record({ base: alignedTermsArb, keep: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }) }).map(({ base, keep }) => ({
    scope: keep[0] ? parent.scope : base.scope,
    window: keep[1] ? parent.window : base.window,
    budget_amount_minor: keep[2] ? parent.budget_amount_minor : base.budget_amount_minor,
    budget_currency: keep[3] ? parent.budget_currency : base.budget_currency,
    budget_count: keep[4] ? parent.budget_count : base.budget_count,
    conditions: keep[5] ? parent.conditions : base.conditions,
    enforcement_mode: keep[6] ? parent.enforcement_mode : base.enforcement_mode,
    audience: keep[7] ? parent.audience : base.audience,
    principal: keep[8] ? parent.principal : base.principal,
    delegation_policy: keep[9] ? parent.delegation_policy : base.delegation_policy,
    delegation_depth_max: keep[10] ? parent.delegation_depth_max : base.delegation_depth_max,
    policy: keep[11] ? parent.policy : base.policy,
  }));
}

/** A child that narrows some axes of the parent and keeps the others: always `≤ parent`. */
export function narrowerThan(parent: GrantTerms): fc.Arbitrary<GrantTerms> {
  const covered = SCOPE_ENTRIES.filter((entry) => toolCovered(entry, parent.scope.tool));
  const minusOne = (n: number | null): fc.Arbitrary<number | null> =>
    n === null ? fc.constantFrom(null, 0, 1, 2, 5) : fc.integer({ min: Math.min(1, n), max: n });
  return fc
    .record({
      scope:
        covered.length === 0 ? fc.constant([] as string[]) : fc.uniqueArray(fc.constantFrom(...covered), { minLength: 1, maxLength: 4 }),
      shrinkStart: fc.constantFrom(0, 0, 1, 3),
      shrinkEnd: fc.constantFrom(0, 0, 1, 3),
      amount: fc.integer({ min: 0, max: parent.budget_amount_minor }),
      count: minusOne(parent.budget_count),
      clean: parent.conditions.clean_context ? fc.constant(true) : fc.boolean(),
      mode: parent.enforcement_mode === "enforce" ? fc.constant("enforce" as const) : modeArb,
      delegation:
        parent.delegation_policy === "none" ? fc.constant("none" as const) : fc.constantFrom("none" as const, "attenuating" as const),
      depth: minusOne(parent.delegation_depth_max),
      extra: fc.uniqueArray(fc.constantFrom(...POLICY_ATOMS), { maxLength: 2 }),
    })
    .map((r) => {
      // Shrink the window only while it stays non-empty: an empty window is void, and void
      // children make every property about allowed actions hold vacuously.
      let start = parent.window.start + r.shrinkStart * HOUR;
      let end = parent.window.end - r.shrinkEnd * HOUR;
      if (end <= start) [start, end] = [parent.window.start, parent.window.end];
      const own = [...(parent.policy === null ? [] : [parent.policy]), ...r.extra.map((a) => `(${a})`)];
      return {
        ...parent,
        scope: { tool: r.scope },
        window: { start, end },
        budget_amount_minor: r.amount,
        budget_count: r.count,
        conditions: { clean_context: r.clean },
        enforcement_mode: r.mode,
        delegation_policy: r.delegation,
        delegation_depth_max: r.depth,
        policy: own.length === 0 ? null : own.join(" && "),
      };
    });
}
