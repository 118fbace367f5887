// A readable parent grant for the unit tests of the lattice and the engine.
import type { GrantTerms } from "@agent-authority/lattice";

export const HOUR = 3_600_000;
export const T0 = Date.UTC(2026, 2, 2, 9, 0, 0);

export const PARENT: GrantTerms = {
  scope: { tool: ["payments.*", "mail.send"] },
  window: { start: T0, end: T0 + 24 * HOUR },
  budget_amount_minor: 10_000,
  budget_currency: "EUR",
  budget_count: 10,
  conditions: { clean_context: false },
  enforcement_mode: "enforce",
  audience: "api.example.com",
  principal: { type: "team", id: "finance" },
  delegation_policy: "attenuating",
  delegation_depth_max: 2,
  policy: "amount_minor <= 5000",
};

export function withTerms(overrides: Partial<GrantTerms>): GrantTerms {
  return { ...PARENT, ...overrides };
}
