// The read step of a batch of decisions (decision 0318): one statement per kind of row for the
// whole batch, the breakers' and the trees' locks first, each in one global order.

import type { BatchReads, ClaimedKey, PresentedGrant, Store } from "../../store/store.js";
import type { BatchInput } from "./decide.js";

/** Reads what every decision of the batch works from, under its locks, in one flight at `now`. */
export function readBatch(tx: Store, inputs: readonly BatchInput[], environment: string, now: number): Promise<BatchReads> {
  const claims: ClaimedKey[] = [];
  const presented = new Map<string, PresentedGrant>();
  for (const { caller, body, claim, expiredUpTo } of inputs) {
    if (claim !== undefined) claims.push({ caller_key_id: claim.callerKeyId, idempotency_key: claim.key, expired_up_to: expiredUpTo });
    if (caller.agentId !== null)
      presented.set(`${caller.agentId}\n${body.grant_id}`, { grant_id: body.grant_id, agent_id: caller.agentId });
  }
  return tx.decisionBatch().read(claims, [...presented.values()], environment, now);
}
