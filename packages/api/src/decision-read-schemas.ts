// JSON Schemas of the two reads of the decision path (decision 1000): gated decisions waiting for
// a human, and the sealed records of one grant tree with its chain's verification.

import { ledgerId, outcome } from "./decision-schemas.js";

const nullableString = { type: ["string", "null"] } as const;

export const pendingDecisionSchema = {
  $id: "PendingDecision",
  title: "PendingDecision",
  type: "object",
  required: [
    "ledger_id",
    "outcome",
    "grant_id",
    "agent_id",
    "agent_name",
    "request",
    "residual",
    "caller_admitted",
    "gates",
    "decided_at",
    "abandoned",
  ],
  properties: {
    ledger_id: ledgerId,
    outcome: { type: "string", enum: ["gated"] },
    enforcement_mode: { type: "string", enum: ["observe", "enforce"] },
    decided_by: { type: "string", enum: ["policy"] },
    reason_code: { type: "string" },
    reason: { type: "string" },
    gates: { type: "array", items: { $ref: "GateResult" } },
    residual: { type: "string", description: "Who can approve, as an expression over `approver`." },
    caller_admitted: {
      type: "boolean",
      description:
        "Whether the residual admits the calling key's identity; an approval by anyone else is refused with 422 `approver_not_admitted`.",
    },
    grant_id: { type: "string" },
    agent_id: { type: "string" },
    agent_name: { ...nullableString, description: "The agent's registered name." },
    request: {
      type: "object",
      description: "The request as the agent sent it (`tool`, `amount_minor`, `currency`, `args`, …).",
      properties: {
        tool: { type: "string" },
        amount_minor: { type: "integer" },
        currency: { type: "string" },
        args: { type: "object", description: "The action's own arguments, as the agent sent them: what the approver approves." },
      },
    },
    decided_at: { type: "string" },
    abandoned: {
      oneOf: [{ $ref: "DecisionAbandonment" }, { type: "null" }],
      description: "Set once the agent stopped waiting (its call was refused): approving now helps only a later retry of the same action.",
    },
  },
} as const;

export const pendingDecisionListSchema = {
  $id: "PendingDecisionList",
  title: "PendingDecisionList",
  type: "object",
  required: ["decisions", "next_after"],
  properties: {
    decisions: { type: "array", items: { $ref: "PendingDecision" } },
    next_after: { ...nullableString, description: "Pass as `after` for the next (older) page; null on the last page." },
  },
} as const;

export const ledgerRecordSchema = {
  $id: "LedgerRecord",
  title: "LedgerRecord",
  type: "object",
  required: ["seq", "ledger_id", "kind", "grant_id", "agent_id", "outcome", "decided_at", "prev_hash", "hash"],
  properties: {
    seq: { type: "integer", minimum: 1, description: "Position in the tree's chain, from 1." },
    ledger_id: ledgerId,
    kind: { type: "string", enum: ["decision", "settlement"] },
    grant_id: { type: "string" },
    agent_id: { type: "string" },
    request: { type: ["object", "null"], description: "For a decision: the request as the agent sent it; null for a settlement." },
    key_id: {
      ...nullableString,
      description: "The key that asked, as sealed: the agent's own, or the enforcement point's (`enforcer`) that asked for it.",
    },
    outcome: { oneOf: [outcome, { type: "null" }], description: "For a decision; null for a settlement." },
    would_outcome: { oneOf: [outcome, { type: "null" }] },
    mode: { type: ["string", "null"], enum: ["observe", "enforce", null] },
    decided_by: nullableString,
    reason_code: nullableString,
    reason: nullableString,
    gates: { type: "array", items: { $ref: "GateResult" } },
    residual: nullableString,
    approver: nullableString,
    approval_id: nullableString,
    settlement: {
      type: "object",
      description:
        "For a settlement only: its sealed fields (`decision_ledger_id`, `amount_minor`, `held_minor`, `released_minor`, `currency`, …).",
    },
    decided_at: { type: "string", description: "When the record was sealed." },
    prev_hash: { type: "string" },
    hash: { type: "string" },
  },
} as const;

export const treeLedgerSchema = {
  $id: "TreeLedger",
  title: "TreeLedger",
  description: "A page of one tree's sealed records; `verification` recomputes the tree's whole chain, not only this page.",
  type: "object",
  required: ["tree_id", "records", "verification", "next_after"],
  properties: {
    tree_id: { type: "string", description: "The root grant of the delegation tree." },
    records: { type: "array", items: { $ref: "LedgerRecord" } },
    verification: { $ref: "LedgerVerification" },
    next_after: { ...nullableString, description: "The last `seq` of this page, as text, to pass as `after`; null on the last page." },
  },
} as const;
