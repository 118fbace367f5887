// A breaker read by its id, shared by the breaker endpoints and the counterfactual so that neither
// imports the other.

import { Refusal } from "../common/index.js";
import type { BreakerRow } from "../../store/breakers/index.js";
import type { Store } from "../../store/core/index.js";

const BREAKER_ID = /^brk_[0-9a-hjkmnp-tv-z]{26}$/;

/** The breaker, or 404; a malformed id is 400. */
export async function findBreaker(store: Store, id: string): Promise<BreakerRow> {
  if (!BREAKER_ID.test(id))
    throw new Refusal(
      "invalid_id",
      `\`breaker_id\` must look like \`brk_…\` (26 characters after the underscore), got \`${id.slice(0, 80)}\``,
    );
  const breaker = await store.breakerPath().getBreaker(id);
  if (breaker === undefined) throw new Refusal("breaker_not_found", `no breaker \`${id}\``);
  return breaker;
}
