// What waits for the signed-in key: gated decisions it may approve and grants awaiting its approval.
// The navigation shows the counts, and a key that has something waiting lands on it.

import { api } from "./api.js";

/** Items read per list; a fuller list shows as "100+". */
const COUNT_LIMIT = 100;

/** Gated decisions whose residual admits this key (or, for a key that cannot approve, every one). */
async function gatedWaiting(caps) {
  if (!caps.can("get", "/decisions/pending")) return null;
  const page = await api("GET", `/decisions/pending?limit=${COUNT_LIMIT}`);
  const mine = caps.can("post", "/decisions/{}/approve") ? page.decisions.filter((d) => d.caller_admitted !== false) : page.decisions;
  return { count: mine.length, more: typeof page.next_after === "string" || page.decisions.length >= COUNT_LIMIT };
}

/** Grants awaiting approval, less those this key issued (an issuer cannot approve its own grant). */
async function pendingWaiting(caps) {
  if (!caps.can("get", "/grants/pending")) return null;
  const page = await api("GET", `/grants/pending?limit=${COUNT_LIMIT}`);
  const identity = caps.me?.identity;
  const mine = caps.can("post", "/grants/{}/approve") ? page.grants.filter((g) => g.issued_by !== identity) : page.grants;
  return { count: mine.length, more: typeof page.next_cursor === "string" || page.grants.length >= COUNT_LIMIT };
}

/** The counts by view id (`gated`, `pending`); a view the key cannot read has none, and a failed read counts nothing. */
export async function waitingCounts(caps) {
  const [gated, pending] = await Promise.all([gatedWaiting(caps).catch(() => null), pendingWaiting(caps).catch(() => null)]);
  return { gated, pending };
}

/** A count as the navigation shows it. */
export function countText(waiting) {
  return waiting.more ? `${waiting.count}+` : String(waiting.count);
}

/** The view a key lands on: the first with something waiting for it, in the order approvers act. */
export function landingView(counts) {
  return ["gated", "pending"].find((id) => (counts[id]?.count ?? 0) > 0);
}
