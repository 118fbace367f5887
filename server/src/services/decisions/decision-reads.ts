// The two reads of the decision path the approvals console needs (decision 1000): gated decisions
// waiting for a human, and the sealed records of one grant tree with its chain's verification.

import { residualAdmits } from "@agent-authority/engine";
import { Refusal } from "../common/index.js";
import type { LedgerRow } from "../../store/decisions/index.js";
import type { Page, Store } from "../../store/core/index.js";
import type { Caller, ServiceContext } from "../common/index.js";
import { abandonmentsOf, type DecisionAbandonmentView } from "./decision-approvals.js";
import { checkTreeChain, type LedgerVerification } from "../seal/index.js";
import { decisionRecord, ledgerRecord } from "../seal/index.js";
import { iso } from "../common/index.js";

const LEDGER_ID = /^led_[0-9a-hjkmnp-tv-z]{26}$/;
const SEQ = /^[0-9]{1,15}$/;

export interface PendingDecisionView {
  readonly ledger_id: string;
  readonly outcome: "gated";
  readonly enforcement_mode: unknown;
  readonly decided_by: "policy";
  readonly reason_code: string | null;
  readonly reason: string | null;
  readonly gates: unknown;
  readonly residual: string;
  /** Whether the residual admits the caller: the console offers to approve only then. */
  readonly caller_admitted: boolean;
  readonly grant_id: string;
  readonly agent_id: string;
  readonly agent_name: string | null;
  readonly request: unknown;
  readonly decided_at: string;
  /** Set once the agent stopped waiting for the approval. */
  readonly abandoned: DecisionAbandonmentView | null;
}

/**
 * `GET /v1/decisions/pending`: gated decisions a human can still approve, newest first. A record
 * gated for any other reason than its policy (nothing to approve) is skipped, so a page may hold
 * fewer than `limit` decisions; `next_after` still moves past every record the page read.
 */
export async function listPendingDecisions(
  ctx: ServiceContext,
  caller: Caller,
  page: Page,
): Promise<{ decisions: PendingDecisionView[]; next_after: string | null }> {
  if (page.after !== undefined && !LEDGER_ID.test(page.after)) throw new Refusal("invalid_query", "`after` must be a ledger id, `led_…`");
  const rows = await ctx.store.decisionPath().pendingGated(ctx.now(), page.after ?? null, page.limit);
  const decisions: PendingDecisionView[] = [];
  const agentNames = new Map<string, string | null>();
  const abandonments = new Map<string, Map<string, DecisionAbandonmentView>>();
  for (const row of rows) {
    const sealed = decisionRecord(row);
    const residual = sealed.residual;
    if (sealed.decided_by !== "policy" || residual === null) continue;
    if (!agentNames.has(row.agent_id)) agentNames.set(row.agent_id, (await ctx.store.getAgent(row.agent_id))?.name ?? null);
    if (!abandonments.has(row.grant_id)) abandonments.set(row.grant_id, await abandonmentsOf(ctx.store, row.grant_id));
    decisions.push({
      ledger_id: row.id,
      outcome: "gated",
      enforcement_mode: sealed.mode,
      decided_by: "policy",
      reason_code: sealed.reason_code,
      reason: sealed.reason,
      gates: sealed.gates.map((g) => g.sealed),
      residual,
      caller_admitted: residualAdmits(residual, caller.identity, sealed.request.args),
      grant_id: row.grant_id,
      agent_id: row.agent_id,
      agent_name: agentNames.get(row.agent_id) ?? null,
      request: sealed.request.sealed,
      decided_at: iso(row.created_at),
      abandoned: abandonments.get(row.grant_id)?.get(row.id) ?? null,
    });
  }
  return { decisions, next_after: rows.length === page.limit ? rows[rows.length - 1]!.id : null };
}

/** One sealed record as stored, with its chain position and hashes; nothing is recomputed. */
export function ledgerRecordView(row: LedgerRow): Record<string, unknown> {
  const record = ledgerRecord(row);
  const sealed = record.kind === "decision" ? record.decision : undefined;
  return {
    seq: row.seq,
    ledger_id: row.id,
    kind: row.kind,
    grant_id: row.grant_id,
    agent_id: row.agent_id,
    request: sealed?.request.sealed ?? null,
    key_id: sealed?.key_id ?? null,
    outcome: row.outcome,
    would_outcome: sealed?.would_outcome ?? null,
    mode: sealed?.mode ?? null,
    decided_by: sealed?.decided_by ?? null,
    reason_code: sealed?.reason_code ?? null,
    reason: sealed?.reason ?? null,
    gates: sealed?.gates.map((g) => g.sealed) ?? [],
    residual: sealed?.residual ?? null,
    approver: sealed?.approver ?? null,
    approval_id: sealed?.approval_id ?? null,
    ...(record.kind === "settlement" ? { settlement: record.settlement.sealed } : {}),
    decided_at: iso(row.created_at),
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}

/** Recomputes one tree's whole chain, in pages; the first broken link, as `GET /v1/ledger/verify` says it. */
export async function verifyTree(store: Store, treeId: string): Promise<LedgerVerification> {
  const { records, broken } = await checkTreeChain(store.decisionPath(), treeId);
  return { ok: broken === null, trees: records === 0 ? 0 : 1, records, broken };
}

/** `GET /v1/grants/{grant_id}/ledger`: the records of the grant's whole tree, in chain order. */
export async function grantLedger(ctx: ServiceContext, grantId: string, page: Page): Promise<Record<string, unknown>> {
  if (page.after !== undefined && !SEQ.test(page.after))
    throw new Refusal("invalid_query", "`after` must be a record's `seq`, a whole number");
  const grant = await ctx.store.getGrant(grantId);
  if (grant === undefined) throw new Refusal("grant_not_found", `no grant \`${grantId}\``);
  const treeId = grant.root_id;
  const rows = await ctx.store.decisionPath().ledgerChain(treeId, page.after === undefined ? 0 : Number(page.after), page.limit);
  const verification = await verifyTree(ctx.store, treeId);
  return {
    tree_id: treeId,
    records: rows.map(ledgerRecordView),
    verification,
    next_after: rows.length === page.limit ? String(rows[rows.length - 1]!.seq) : null,
  };
}
