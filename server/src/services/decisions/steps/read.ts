// The read step of a batch of decisions (decision 0318): one statement per kind of row for the
// whole batch on PostgreSQL, the breakers' and the trees' locks first, each in one global order;
// on SQLite the decision cache's rows, read where one decision at a time reads them (decision 0319).

import type { AuthorizeBody } from "@agent-authority/api";
import type { BatchReads, ClaimedKey, PresentedGrant, Store } from "../../../store/core/index.js";
import type { RequestClaim } from "../../common/index.js";
import type { Caller, ServiceContext } from "../../common/index.js";
import { callerOfKey } from "../../keys/index.js";
import type { BatchInput } from "./decide.js";

/**
 * A request handed to the batch step: by an authenticated caller, or by a key known only by the
 * hash of its secret (the authorize worker's), which the read step looks up.
 */
export interface StepInput {
  readonly ctx: ServiceContext;
  readonly asker: Caller | { readonly keyHash: string };
  readonly body: AuthorizeBody;
  readonly request: RequestClaim | undefined;
  /** A stored answer at or before this time has expired. */
  readonly expiredUpTo: number;
}

/**
 * Each request as a decision of the batch, its caller known; undefined for one the step leaves to
 * its own function: a key unknown, revoked, or not an agent's, which that function refuses.
 * The keys presented by their hashes are read together, once for the batch (one statement on
 * PostgreSQL, from the decision cache on SQLite).
 */
export async function batchCallers(tx: Store, inputs: readonly StepInput[]): Promise<(BatchInput | undefined)[]> {
  const hashes = new Set<string>();
  for (const { asker } of inputs) if ("keyHash" in asker) hashes.add(asker.keyHash);
  const keys = hashes.size === 0 ? new Map() : await tx.findKeysByHash([...hashes]);
  return inputs.map(({ ctx, asker, body, request, expiredUpTo }) => {
    const caller = "keyHash" in asker ? callerOfKey(keys.get(asker.keyHash)) : asker;
    if (caller === undefined || caller.agentId === null || !caller.roles.includes("agent")) return undefined;
    return { ctx, caller, body, expiredUpTo, claim: request === undefined ? undefined : { ...request, callerKeyId: caller.keyId } };
  });
}

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
