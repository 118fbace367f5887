// What waits for the signed-in key: gated decisions it may approve and grants awaiting its approval.
// The navigation shows the counts, and a key that has something waiting lands on it.
// @ts-check

import { api } from "./api.js";

/**
 * What waits in one view: how many items, and whether there are more than were read.
 * @typedef {{ count: number, more: boolean }} Waiting
 * @typedef {{ gated: Waiting | null, pending: Waiting | null }} Counts
 * @typedef {Record<string, Waiting | null | undefined>} CountsByView
 * @typedef {import("./api.js").Capabilities} Capabilities
 */

/** Items read per list; a fuller list shows as "100+". */
const COUNT_LIMIT = 100;

/**
 * Gated decisions whose residual admits this key (or, for a key that cannot approve, every one).
 * @param {Capabilities} caps
 * @returns {Promise<Waiting | null>}
 */
async function gatedWaiting(caps) {
  if (!caps.can("get", "/decisions/pending")) return null;
  /** @type {import("./api.js").PendingDecisionList} */
  const page = await api("GET", `/decisions/pending?limit=${COUNT_LIMIT}`);
  const mine = caps.can("post", "/decisions/{}/approve") ? page.decisions.filter((d) => d.caller_admitted !== false) : page.decisions;
  return { count: mine.length, more: typeof page.next_after === "string" || page.decisions.length >= COUNT_LIMIT };
}

/**
 * Grants awaiting approval, less those this key issued (an issuer cannot approve its own grant).
 * @param {Capabilities} caps
 * @returns {Promise<Waiting | null>}
 */
async function pendingWaiting(caps) {
  if (!caps.can("get", "/grants/pending")) return null;
  /** @type {import("./api.js").GrantPage} */
  const page = await api("GET", `/grants/pending?limit=${COUNT_LIMIT}`);
  const identity = caps.me?.identity;
  const mine = caps.can("post", "/grants/{}/approve") ? page.grants.filter((g) => g.issued_by !== identity) : page.grants;
  return { count: mine.length, more: typeof page.next_cursor === "string" || page.grants.length >= COUNT_LIMIT };
}

/**
 * The counts by view id (`gated`, `pending`); a view the key cannot read has none, and a failed read counts nothing.
 * @param {Capabilities} caps
 * @returns {Promise<Counts>}
 */
export async function waitingCounts(caps) {
  const [gated, pending] = await Promise.all([gatedWaiting(caps).catch(() => null), pendingWaiting(caps).catch(() => null)]);
  return { gated, pending };
}

/**
 * A count as the navigation shows it.
 * @param {Waiting} waiting
 */
export function countText(waiting) {
  return waiting.more ? `${waiting.count}+` : String(waiting.count);
}

/**
 * The view a key lands on: the first with something waiting for it, in the order approvers act.
 * @param {CountsByView} counts
 */
export function landingView(counts) {
  return ["gated", "pending"].find((id) => (counts[id]?.count ?? 0) > 0);
}
