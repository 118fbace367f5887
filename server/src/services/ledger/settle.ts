// Settlement: capture up to what an `allow` held, release the rest, and seal the settlement as its
// own record in the decision's chain (docs/decisions.md). The same amount again replays the settlement.

import type { SettleBody } from "@agent-authority/api";
import { Refusal } from "../common/index.js";
import { newId } from "../../ids.js";
import type { ChargeRow, LedgerRow } from "../../store/decisions/index.js";
import type { Store } from "../../store/core/index.js";
import { confinedToAgent, type Caller, type ServiceContext } from "../common/index.js";
import { sealRecord } from "../seal/index.js";
import { decisionRecord, settlementRecord } from "../seal/index.js";
import type { BatchSignatureField } from "../seal/index.js";
import { iso } from "../common/index.js";

export interface SettlementView {
  readonly ledger_id: string;
  readonly decision_ledger_id: string;
  readonly grant_id: string;
  readonly currency: string | null;
  readonly amount_minor: number;
  readonly held_minor: number;
  readonly released_minor: number;
  readonly settled_at: string;
  readonly signature: BatchSignatureField;
}

/** The decision record, or 404; an agent key sees only its own agent's decisions. */
export async function visibleDecision(tx: Store, caller: Caller, ledgerId: string): Promise<LedgerRow> {
  const row = await tx.decisionPath().getLedger(ledgerId);
  const confined = confinedToAgent(caller);
  if (row === undefined || row.kind !== "decision" || (confined !== null && row.agent_id !== confined)) {
    throw new Refusal("decision_not_found", `no decision \`${ledgerId}\``);
  }
  return row;
}

/** Takes the lock of the chain a record belongs to: its grant tree's, or the agent chain's. */
export async function lockRecordTree(tx: Store, row: LedgerRow): Promise<void> {
  if (row.tree_id.startsWith("grt_")) await tx.lockGrant(row.tree_id);
  else await tx.decisionPath().lockChain(row.tree_id);
}

/**
 * The settlement as answered, signed for this request: a settlement replayed with another `nonce`
 * is the same settlement under a signature that binds the new nonce.
 */
function settlementView(ctx: ServiceContext, row: LedgerRow, decision: LedgerRow, nonce: string | undefined): SettlementView {
  const sealed = settlementRecord(row);
  const request = decisionRecord(decision).request;
  const view = {
    ledger_id: row.id,
    decision_ledger_id: sealed.decision_ledger_id,
    grant_id: row.grant_id,
    currency: sealed.currency,
    amount_minor: sealed.amount_minor,
    held_minor: sealed.held_minor,
    released_minor: sealed.released_minor,
    settled_at: iso(row.created_at),
  };
  // Members in canonical order (RFC 8785), as the signer expects them.
  // A settlement is answered alone: a batch of one (decision 1901).
  const [signature] = ctx.signer.signAnswers([
    {
      agent_id: row.agent_id,
      amount_minor: view.amount_minor,
      currency: view.currency,
      decision_ledger_id: view.decision_ledger_id,
      grant_id: view.grant_id,
      held_minor: view.held_minor,
      ledger_id: view.ledger_id,
      nonce: nonce ?? null,
      released_minor: view.released_minor,
      settled_at: view.settled_at,
      tool: request.tool,
      type: "authority.settlement.v1",
    },
  ]);
  return { ...view, signature: signature! };
}

/**
 * A hold that expired gave its amount back to the budget, where another decision may have held it
 * since; capturing it late could spend the same cent twice, so it is refused (decision 0309).
 * INVARIANT (settled-within-budget): settled plus live held never exceeds a grant's budget.
 */
function requireLiveHold(ledgerId: string, charges: readonly ChargeRow[], now: number): void {
  const expiresAt = charges.reduce((min, c) => Math.min(min, c.expires_at), Number.POSITIVE_INFINITY);
  if (expiresAt <= now) {
    throw new Refusal(
      "hold_expired",
      `the hold of decision \`${ledgerId}\` expired at \`${iso(expiresAt)}\`; its amount went back to the budget`,
    );
  }
}

export async function settleDecision(ctx: ServiceContext, caller: Caller, ledgerId: string, body: SettleBody): Promise<SettlementView> {
  // Counted once committed, and only when this call sealed the record (a repeated settlement does not).
  let sealedHere = false;
  const view = await ctx.store.transaction(async (tx) => {
    sealedHere = false;
    const decision = await visibleDecision(tx, caller, ledgerId);
    await lockRecordTree(tx, decision);
    const ledger = tx.decisionPath();
    const charges = await ledger.chargesOf(ledgerId);
    const held = charges.reduce((max, c) => Math.max(max, c.amount_minor), 0);
    if (held === 0)
      throw new Refusal("nothing_held", `decision \`${ledgerId}\` placed no hold: only an \`allow\` with an amount can be settled`);
    const settled = charges.find((c) => c.settled_at !== null);
    if (settled !== undefined) {
      if (settled.settled_minor !== body.amount_minor) {
        throw new Refusal(
          "already_settled",
          `decision \`${ledgerId}\` was settled with \`${settled.settled_minor}\`; a settlement is final`,
        );
      }
      return settlementView(ctx, (await ledger.getLedger(settled.settlement_ledger_id!))!, decision, body.nonce);
    }
    if (body.amount_minor > held) {
      throw new Refusal("settle_exceeds_hold", `\`${body.amount_minor}\` exceeds the \`${held}\` held by decision \`${ledgerId}\``);
    }
    const now = ctx.now();
    const hold = decisionRecord(decision).holds[0];
    requireLiveHold(ledgerId, charges, now);
    const id = newId("led", now);
    const row = await sealRecord(ledger, {
      id,
      tree_id: decision.tree_id,
      kind: "settlement",
      grant_id: decision.grant_id,
      agent_id: decision.agent_id,
      outcome: null,
      created_at: now,
      body: {
        decision_ledger_id: ledgerId,
        amount_minor: body.amount_minor,
        held_minor: held,
        released_minor: held - body.amount_minor,
        currency: hold?.currency ?? null,
        settled_by: caller.identity,
        key_id: caller.keyId,
        grants: charges.map((c) => c.grant_id),
      },
    });
    await ledger.settleCharges(ledgerId, body.amount_minor, now, id);
    sealedHere = true;
    return settlementView(ctx, row, decision, body.nonce);
  });
  if (sealedHere) ctx.observer?.sealed("settlement");
  return view;
}
