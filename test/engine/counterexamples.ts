// Shrunk counterexamples found by the engine's property suites, kept as permanent cases.
// Each entry says what it once broke (or, found against a deliberately broken build, what it
// guards); the suites run them on every run, before the generated cases.
import type { ChainLink } from "@agent-authority/engine";
import type { GrantTerms, ParentUsage } from "@agent-authority/lattice";
import type { Action } from "./arbitraries.js";

export interface SoundnessCase {
  readonly why: string;
  readonly parent: GrantTerms;
  readonly child: GrantTerms;
  readonly usage: ParentUsage;
  readonly pair: { parent: ChainLink["usage"]; child: ChainLink["usage"] };
  readonly action: Action;
}

export interface StandaloneCase {
  readonly why: string;
  /** Whether the checker must refuse the child (the case was found against a build that accepted it). */
  readonly refused: boolean;
  readonly parent: GrantTerms;
  readonly child: GrantTerms;
  readonly usage: ParentUsage;
  readonly action: Action;
}

const WINDOW = { start: 1767571200000, end: 1767574800000 };
const ALICE = { type: "human" as const, id: "alice" };

const USES_PARENT: GrantTerms = {
  scope: { tool: ["pay.send", "mail.send"] },
  window: WINDOW,
  budget_amount_minor: 0,
  budget_currency: "EUR",
  budget_count: null,
  conditions: { clean_context: false },
  enforcement_mode: "observe",
  audience: "api.example.com",
  principal: ALICE,
  delegation_policy: "attenuating",
  delegation_depth_max: null,
  policy: "(uses < 3)",
};

export const PERMANENT_SOUNDNESS: readonly SoundnessCase[] = [
  {
    why: "an ancestor's policy must see the ancestor's own usage: with the child's, `uses < 3` let the child act after the parent's third use",
    parent: USES_PARENT,
    child: { ...USES_PARENT, delegation_policy: "none" },
    usage: { uses: 0, spent_minor: 0 },
    pair: { child: { uses: 0, settled_minor: 0, holds: [] }, parent: { uses: 3, settled_minor: 0, holds: [] } },
    action: {
      tool: "pay.send",
      amount_minor: 0,
      currency: "EUR",
      audience: "api.example.com",
      clean: true,
      country: "FR",
      attested: false,
      approver: null,
      ceiling: 0,
      now: WINDOW.start,
      statuses: ["active", "active"],
    },
  },
];

const SPENT_PARENT: GrantTerms = {
  scope: { tool: ["pay.*", "mail.send"] },
  window: WINDOW,
  budget_amount_minor: 5000,
  budget_currency: null,
  budget_count: 5,
  conditions: { clean_context: false },
  enforcement_mode: "enforce",
  audience: "api.example.com",
  principal: ALICE,
  delegation_policy: "attenuating",
  delegation_depth_max: 2,
  policy: null,
};

/** An attested `pay.send` naming no currency, at the window's start; each case sets its amount and statuses. */
const SEND_WITHOUT_CURRENCY = {
  tool: "pay.send",
  currency: null,
  audience: "api.example.com",
  clean: true,
  country: "FR",
  attested: true,
  approver: null,
  ceiling: 0,
  now: WINDOW.start,
} as const;

export const PERMANENT_STANDALONE: readonly StandaloneCase[] = [
  {
    why: "the amount budget is compared with the parent's remaining, not its budget: a spent parent cannot hand out its whole budget again",
    refused: true,
    parent: SPENT_PARENT,
    usage: { uses: 4, spent_minor: 10000 },
    child: { ...SPENT_PARENT, scope: { tool: ["pay.send"] }, budget_count: 1, delegation_depth_max: 1, policy: "amount_minor <= 5000" },
    action: { ...SEND_WITHOUT_CURRENCY, amount_minor: 5000, statuses: ["active", "pending_approval"] },
  },
  {
    why: "a policy's `currency` is the request's own: when it defaulted to each grant's budget currency, a child that may not spend but names `EUR` passed `currency == \"EUR\"` for a request naming none, where its parent (no currency) refused",
    refused: false,
    parent: {
      ...SPENT_PARENT,
      scope: { tool: ["pay.card.*", "pay.refund", "pay.*"] },
      window: { start: WINDOW.start, end: WINDOW.start + 5 * 3_600_000 },
      budget_count: null,
      conditions: { clean_context: true },
      enforcement_mode: "observe",
      policy: '(tool != "pay.refund") && (currency == "EUR")',
    },
    usage: { uses: 4, spent_minor: 12000 },
    child: {
      ...SPENT_PARENT,
      scope: { tool: ["pay.card.*", "pay.*", "pay.refund", "pay.card.issue"] },
      window: { start: WINDOW.start, end: WINDOW.start + 4 * 3_600_000 },
      budget_amount_minor: 0,
      budget_currency: "EUR",
      budget_count: 2,
      conditions: { clean_context: true },
      delegation_policy: "none",
      delegation_depth_max: 1,
      policy: '(tool != "pay.refund") && (currency == "EUR")',
    },
    action: { ...SEND_WITHOUT_CURRENCY, amount_minor: 0, statuses: ["pending_approval", "active"] },
  },
];
