// Shrunk counterexamples for the lattice's property suites, kept as permanent cases.
// Each entry says what it once broke, or what it guards; the suites run them on every run.
import type { GrantTerms } from "@agent-authority/lattice";
import { EPOCH } from "./arbitraries.js";

const HOUR = 3_600_000;

const BASE: GrantTerms = {
  scope: { tool: ["pay.send"] },
  window: { start: EPOCH, end: EPOCH + HOUR },
  budget_amount_minor: 0,
  budget_currency: "EUR",
  budget_count: null,
  conditions: { clean_context: false },
  enforcement_mode: "enforce",
  audience: "api.example.com",
  principal: { type: "human", id: "alice" },
  delegation_policy: "none",
  delegation_depth_max: null,
  policy: null,
};

/** Pairs for antisymmetry: each is equivalent both ways and must have one canonical form. */
export const PERMANENT_PAIRS: (readonly [GrantTerms, GrantTerms])[] = [
  // A currency without spending: equivalent, so the canonical form must drop it.
  [BASE, { ...BASE, budget_currency: null }],
  // Scope entries covered by another entry, in another order.
  [
    { ...BASE, scope: { tool: ["pay.*", "pay.send"] } },
    { ...BASE, scope: { tool: ["pay.*"] } },
  ],
  // The same conjuncts in another order and with parentheses.
  [
    { ...BASE, policy: "(a == 1) && (b == 2)" },
    { ...BASE, policy: "b == 2 && a == 1" },
  ],
  // Two void grants (an empty window): both are BOTTOM.
  [
    { ...BASE, window: { start: EPOCH, end: EPOCH } },
    { ...BASE, audience: null, window: { start: EPOCH + HOUR, end: EPOCH } },
  ],
];

/** Delegations for completeness: each reported axis must have a witness. */
export const PERMANENT_WIDENINGS: { why: string; parent: GrantTerms; child: GrantTerms }[] = [
  {
    why: "an empty child window starting before the parent's was reported as widening, with no instant to show for it",
    parent: { ...BASE, window: { start: EPOCH + 5 * HOUR, end: EPOCH + 10 * HOUR } },
    child: { ...BASE, window: { start: EPOCH, end: EPOCH } },
  },
];
