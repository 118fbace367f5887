// The write step of the decision path (decision 0318): what the decide step produced, written with
// one statement per table for a whole batch, and the `decision.gated` events.

import type { AuthorizeBody } from "@agent-authority/api";
import type { Decision } from "@agent-authority/engine";
import type { Store } from "../../../store/core/index.js";
import { emitEvent } from "../../events/index.js";
import type { BatchDecisions } from "./decide.js";

/** `decision.gated`, in the decision's own transaction: a human is needed before the action can go on. */
export function emitGated(
  tx: Store,
  ledgerId: string,
  agentId: string,
  body: AuthorizeBody,
  decision: Decision,
  now: number,
): Promise<void> {
  return emitEvent(tx, "decision.gated", {
    subject: ledgerId,
    agentId,
    at: now,
    data: {
      ledger_id: ledgerId,
      grant_id: body.grant_id,
      agent_id: agentId,
      tool: body.tool,
      amount_minor: body.amount_minor ?? null,
      currency: body.currency ?? null,
      residual: decision.residual ?? null,
      decided_by: decision.decided_by,
    },
  });
}

/**
 * Writes a decided batch: the sealed records with their places in the Merkle queue, the breaker
 * signals of agents without breakers, the grants' totals, the holds and the stored answers, one
 * statement each in one flight. Throws when an answer's key was taken meanwhile.
 */
export function writeBatch(tx: Store, decided: BatchDecisions): Promise<void> {
  return tx.decisionBatch().write(decided.writes);
}

/** One `decision.gated` event per gated decision of a batch, in batch order. */
export async function emitGatedEvents(tx: Store, decided: BatchDecisions): Promise<void> {
  for (const g of decided.gated) await emitGated(tx, g.ledgerId, g.agentId, g.body, g.decision, g.now);
}
