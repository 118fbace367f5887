// What a grant has used, computed from live holds at `now`: an expired hold counts for nothing.

import type { ChainLink } from "./types.js";

// INVARIANT (holds-live): a hold counts against a budget only while `expires_at > now`; budgets are
// always computed here from the holds themselves, never from counters a sweeper must keep right.
export function liveHeldMinor(link: ChainLink, now: number): number {
  let sum = 0;
  for (const hold of link.usage.holds) if (hold.expires_at > now) sum += hold.amount_minor;
  return sum;
}

/** Held (live) plus settled, in minor units: the `spent_minor` of the policy environment. */
export function spentMinor(link: ChainLink, now: number): number {
  return link.usage.settled_minor + liveHeldMinor(link, now);
}

/** What is left of the link's amount budget at `now`; may be negative after a late settlement. */
export function remainingMinor(link: ChainLink, now: number): number {
  return link.terms.budget_amount_minor - spentMinor(link, now);
}
