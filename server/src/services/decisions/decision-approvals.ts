// Approvals of gated decisions (docs/decisions.md): a human approves one gated action; the approval is
// single use, bound to the decision's grant, tool and an amount ceiling, and expires.

import type { DecisionAbandonBody, DecisionApproveBody } from "@agent-authority/api";
import { residualAdmits } from "@agent-authority/engine";
import { Refusal } from "../common/index.js";
import { newId } from "../../ids.js";
import type { DecisionApprovalRow, LedgerRow } from "../../store/decisions/index.js";
import type { GrantEventRecord, Store } from "../../store/core/index.js";
import type { Caller, ServiceContext } from "../common/index.js";
import { emitEvent } from "../events/index.js";
import { abandonmentDetail, decisionRecord, type DecisionRecord } from "../seal/index.js";
import { lockRecordTree, visibleDecision } from "../ledger/index.js";
import { iso } from "../common/index.js";

const DEFAULT_APPROVAL_MINUTES = 60;
const MINUTE_MS = 60_000;

export interface DecisionApprovalView {
  readonly approval_id: string;
  readonly ledger_id: string;
  readonly grant_id: string;
  readonly tool: string;
  readonly amount_minor_max: number;
  readonly currency: string | null;
  readonly approver: string;
  readonly approved_at: string;
  readonly expires_at: string;
  readonly note: string | null;
}

function approvalView(row: DecisionApprovalRow, note: string | null): DecisionApprovalView {
  return {
    approval_id: row.id,
    ledger_id: row.ledger_id,
    grant_id: row.grant_id,
    tool: row.tool,
    amount_minor_max: row.amount_ceiling_minor,
    currency: row.currency,
    approver: row.approver,
    approved_at: iso(row.approved_at),
    expires_at: iso(row.expires_at),
    note,
  };
}

type SealedRequest = DecisionRecord;

/**
 * Only a policy that asks for an approver can be approved here; a grant awaiting approval is
 * approved on the grant (POST /grants/{id}/approve), and any other refusal has no approver.
 */
function requireGatedByPolicy(sealed: SealedRequest, ledgerId: string): asserts sealed is SealedRequest & { residual: string } {
  if (sealed.outcome !== "gated" || sealed.decided_by !== "policy" || typeof sealed.residual !== "string") {
    throw new Refusal("decision_not_gated", `decision \`${ledgerId}\` was not gated by its policy; only such a decision can be approved`);
  }
}

/**
 * An approval by someone the residual does not admit would only be refused when the agent
 * retries, after it had used up the decision's one approval: it is refused here instead. The
 * residual is read on the decision's own action, as the retry will be (decision 0130).
 */
function requireAdmittedApprover(sealed: SealedRequest & { residual: string }, approver: string): void {
  if (!residualAdmits(sealed.residual, approver, sealed.request.args)) {
    throw new Refusal(
      "approver_not_admitted",
      `\`${approver}\` is not an approver this decision admits: who can approve is \`${sealed.residual}\``,
      {
        residual: sealed.residual,
      },
    );
  }
}

/** The approval: for this decision's tool, up to its amount (or the ceiling asked), for a limited time. */
function approvalRow(
  decision: LedgerRow,
  sealed: SealedRequest,
  body: DecisionApproveBody,
  approver: string,
  now: number,
): DecisionApprovalRow {
  return {
    id: newId("apv", now),
    ledger_id: decision.id,
    grant_id: decision.grant_id,
    tool: sealed.request.tool,
    amount_ceiling_minor: body.amount_minor_max ?? sealed.request.amount_minor ?? 0,
    currency: sealed.request.currency ?? null,
    approver,
    approved_at: now,
    expires_at: now + (body.expires_in_minutes ?? DEFAULT_APPROVAL_MINUTES) * MINUTE_MS,
    used_at: null,
    used_by_ledger_id: null,
  };
}

/** The `decision.approved` event for subscribers. */
async function emitApproved(tx: Store, row: DecisionApprovalRow, agentId: string): Promise<void> {
  await emitEvent(tx, "decision.approved", {
    subject: row.ledger_id,
    agentId,
    at: row.approved_at,
    data: {
      ledger_id: row.ledger_id,
      approval_id: row.id,
      grant_id: row.grant_id,
      agent_id: agentId,
      approver: row.approver,
      tool: row.tool,
      amount_ceiling_minor: row.amount_ceiling_minor,
      currency: row.currency,
      expires_at: iso(row.expires_at),
    },
  });
}

export async function approveDecision(
  ctx: ServiceContext,
  caller: Caller,
  ledgerId: string,
  body: DecisionApproveBody,
): Promise<DecisionApprovalView> {
  // From the decision to its approval, told to the metrics once the approval has committed.
  let latencyMs = 0;
  const view = await ctx.store.transaction(async (tx) => {
    const decision = await visibleDecision(tx, caller, ledgerId);
    await lockRecordTree(tx, decision);
    const sealed = decisionRecord(decision);
    requireGatedByPolicy(sealed, ledgerId);
    const ledger = tx.decisionPath();
    if ((await ledger.approvalOfDecision(ledgerId)) !== undefined) {
      throw new Refusal("decision_already_approved", `decision \`${ledgerId}\` was already approved; an approval covers one action`);
    }
    requireAdmittedApprover(sealed, caller.identity);
    const now = ctx.now();
    const row = approvalRow(decision, sealed, body, caller.identity, now);
    await ledger.insertApproval(row);
    latencyMs = now - decision.created_at;
    await emitApproved(tx, row, decision.agent_id);
    return approvalView(row, body.note ?? null);
  });
  ctx.observer?.decisionApproved(latencyMs);
  return view;
}

/** The approval of a gated decision, for the agent that waits for it (and for humans who audit it). */
export async function decisionApproval(ctx: ServiceContext, caller: Caller, ledgerId: string): Promise<DecisionApprovalView> {
  const decision = await visibleDecision(ctx.store, caller, ledgerId);
  const row = await ctx.store.decisionPath().approvalOfDecision(decision.id);
  if (row === undefined) throw new Refusal("approval_not_found", `decision \`${ledgerId}\` has no approval yet`);
  return approvalView(row, null);
}

export interface DecisionAbandonmentView {
  readonly ledger_id: string;
  readonly grant_id: string;
  readonly reason: "timeout" | "cancelled";
  readonly waited_ms: number;
  readonly abandoned_at: string;
}

function abandonmentView(event: GrantEventRecord): DecisionAbandonmentView {
  const detail = abandonmentDetail(event);
  return {
    ledger_id: detail.ledger_id,
    grant_id: event.grant_id,
    reason: detail.reason,
    waited_ms: detail.waited_ms,
    abandoned_at: iso(event.at),
  };
}

/** The abandonments recorded on `grantId`'s history, by ledger id (the first report of each). */
export async function abandonmentsOf(store: Store, grantId: string): Promise<Map<string, DecisionAbandonmentView>> {
  const found = new Map<string, DecisionAbandonmentView>();
  for (const event of await store.listGrantEvents(grantId)) {
    if (event.kind !== "approval_wait_abandoned") continue;
    const view = abandonmentView(event);
    if (!found.has(view.ledger_id)) found.set(view.ledger_id, view);
  }
  return found;
}

/**
 * `POST /v1/decisions/{ledger_id}/abandoned`: the agent stopped waiting for a human to approve its
 * gated decision. Appended to the grant's history (no approval is created or refused by it); the
 * console shows it beside the decision. The first report stands: a repeat answers it unchanged.
 */
export async function abandonDecisionWait(
  ctx: ServiceContext,
  caller: Caller,
  ledgerId: string,
  body: DecisionAbandonBody,
): Promise<DecisionAbandonmentView> {
  return ctx.store.transaction(async (tx) => {
    const decision = await visibleDecision(tx, caller, ledgerId);
    await lockRecordTree(tx, decision);
    const sealed = decisionRecord(decision);
    if (sealed.outcome !== "gated" || sealed.decided_by !== "policy") {
      throw new Refusal("decision_not_gated", `decision \`${ledgerId}\` was not gated by its policy; nothing waited for its approval`);
    }
    const earlier = (await abandonmentsOf(tx, decision.grant_id)).get(ledgerId);
    if (earlier !== undefined) return earlier;
    const at = ctx.now();
    const event: GrantEventRecord = {
      id: newId("evt", at),
      grant_id: decision.grant_id,
      kind: "approval_wait_abandoned",
      actor: caller.identity,
      at,
      detail: { ledger_id: ledgerId, reason: body.reason, waited_ms: body.waited_ms },
    };
    await tx.appendGrantEvent(event);
    return abandonmentView(event);
  });
}
