// The read step of the decision path (decision 0318): one statement per kind of row for the whole
// batch on PostgreSQL, the breakers' and the trees' locks first, each in one global order, then the
// agents' own chains of the grants not held; on SQLite the decision cache's rows, read where one
// decision at a time reads them (decision 0319).

import type { AuthorizeBody } from "@agent-authority/api";
import type { BatchReads, ClaimedKey, PresentedGrant, Store } from "../../../store/core/index.js";
import type { RequestClaim } from "../../common/index.js";
import type { Refusal, Caller, ServiceContext } from "../../common/index.js";
import { callerOfKey, missingRole, unauthenticated } from "../../keys/index.js";
import { ownChainOf, type BatchInput } from "./decide.js";

/**
 * A request handed to the decision step: by an authenticated caller, or by a key known only by the
 * hash of its secret (the HTTP layer's and the authorize worker's), which the read step looks up.
 */
export interface StepInput {
  readonly ctx: ServiceContext;
  readonly asker: Caller | { readonly keyHash: string };
  readonly body: AuthorizeBody;
  readonly request: RequestClaim | undefined;
  /** A stored answer at or before this time has expired. */
  readonly expiredUpTo: number;
}

/** Only agent keys authorize. */
const AUTHORIZE_ROLES = ["agent"] as const;

/** The 401 or 403 for a caller that may not authorize (`presented`: a key was sent); undefined when it may. */
export function authorizeRefusal(caller: Caller | undefined, presented: boolean): Refusal | undefined {
  if (caller === undefined) return unauthenticated(presented);
  return AUTHORIZE_ROLES.some((role) => caller.roles.includes(role)) ? undefined : missingRole("POST", "/v1/authorize", AUTHORIZE_ROLES);
}

/**
 * Each request as a decision of the batch, its caller known; or the 401 or 403 of a key unknown,
 * revoked or not an agent's, which writes nothing. A caller handed in already authenticated is
 * taken as it is. The keys presented by their hashes are read together, once for the batch (one
 * statement on PostgreSQL, from the decision cache on SQLite).
 */
export async function batchCallers(tx: Store, inputs: readonly StepInput[]): Promise<(BatchInput | Refusal)[]> {
  const hashes = new Set<string>();
  for (const { asker } of inputs) if ("keyHash" in asker) hashes.add(asker.keyHash);
  const keys = hashes.size === 0 ? new Map() : await tx.findKeysByHash([...hashes]);
  return inputs.map(({ ctx, asker, body, request, expiredUpTo }) => {
    let caller: Caller;
    if ("keyHash" in asker) {
      const presented = callerOfKey(keys.get(asker.keyHash));
      const refusal = authorizeRefusal(presented, true);
      if (refusal !== undefined) return refusal;
      caller = presented!;
    } else caller = asker;
    return { ctx, caller, body, expiredUpTo, claim: request === undefined ? undefined : { ...request, callerKeyId: caller.keyId } };
  });
}

/**
 * Reads what every decision of the batch works from, under its locks, at `now`: in one flight the
 * stored answers, the breakers' and the trees' locks, the chains, approvals and certificates; then,
 * only when a grant presented is not held, the agents' own chains' locks and heads.
 */
export async function readBatch(tx: Store, inputs: readonly BatchInput[], environment: string, now: number): Promise<BatchReads> {
  const claims: ClaimedKey[] = [];
  const presented = new Map<string, PresentedGrant>();
  const approvals = new Set<string>();
  for (const { caller, body, claim, expiredUpTo } of inputs) {
    if (claim !== undefined) claims.push({ caller_key_id: claim.callerKeyId, idempotency_key: claim.key, expired_up_to: expiredUpTo });
    // A caller that is no agent's holds no grant; its breakers, were there any, are its identity's.
    const agentId = caller.agentId ?? caller.identity;
    presented.set(`${agentId}\n${body.grant_id}`, { grant_id: body.grant_id, agent_id: agentId });
    if (body.approval_id !== undefined) approvals.add(body.approval_id);
  }
  const batch = tx.decisionBatch();
  const reads = await batch.read({ claims, presented: [...presented.values()], approvals: [...approvals] }, environment, now);
  const own = new Set<string>();
  for (const input of inputs) {
    const treeId = ownChainOf(input, reads.grants);
    if (treeId !== undefined) own.add(treeId);
  }
  if (own.size === 0) return reads;
  // INVARIANT (tree-serial): lock order breakers, trees, then own chains, each in id order.
  const heads = new Map(reads.heads);
  for (const [treeId, head] of await batch.ownChains([...own])) heads.set(treeId, head);
  return { ...reads, heads };
}
