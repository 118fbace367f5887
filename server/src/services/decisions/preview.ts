// Preview: what a grant would decide for a sample action, before it exists. The engine decides on
// a one-link chain built from the request; nothing is written. Unlike the CLI's preview (0403),
// which fixes every fact a family leaves open, the server answers for its own world: its clock,
// and the agent's real certificate.

import type { GrantPreviewBody } from "@agent-authority/api";
import { decide, HOUR_MS, type ChainLink, type Decision, type DecisionRequest, type DecisionState } from "@agent-authority/engine";
import { decisionOutcomeFields, decisionState } from "./decision-text.js";
import type { ServiceContext } from "../common/index.js";
import { grantFromIssueBody, grantTerms } from "../grants/index.js";
import { checkPolicy } from "../grants/index.js";

export interface GrantPreview {
  readonly outcome: Decision["outcome"];
  readonly would_outcome?: Decision["outcome"];
  readonly enforcement_mode: Decision["mode"];
  readonly decided_by: Decision["decided_by"];
  readonly reason_code: string;
  readonly reason: string;
  readonly gates: Decision["gates"];
  readonly residual?: string;
  readonly approver: string | null;
  readonly approval_required: boolean;
  readonly warnings?: readonly unknown[];
  readonly created: false;
}

export async function previewGrant(ctx: ServiceContext, body: GrantPreviewBody): Promise<GrantPreview> {
  const warnings = checkPolicy(body.policy);
  const now = ctx.now();
  const { action, ...issueBody } = body;
  const grant = grantFromIssueBody(issueBody, "preview", ctx.autoApprovalCeilingMinor, now);
  // Decided as if issued and approved now, with no usage.
  const chain: ChainLink[] = [
    {
      grant_id: grant.id,
      agent_id: grant.agent_id,
      status: "active",
      terms: grantTerms(grant),
      usage: { uses: 0, settled_minor: 0, holds: [] },
    },
  ];
  // The agent's real certificate, presented as its attestation: the certification gate answers
  // what it would answer for this agent as certified today.
  const certificate = await ctx.store.validCertificate(grant.agent_id, ctx.environment);
  const request: DecisionRequest = {
    grant_id: grant.id,
    agent_id: grant.agent_id,
    tool: action.tool,
    amount_minor: action.amount_minor ?? null,
    currency: action.currency ?? null,
    audience: action.audience ?? null,
    args: action.args ?? null,
    context: action.context ?? null,
    attestation:
      certificate === undefined
        ? null
        : {
            manifest_hash: certificate.manifest_hash,
            content_hash: certificate.content_hash,
            provenance_version: certificate.provenance_version,
          },
    approval:
      action.approver === undefined || action.approver === null
        ? null
        : {
            approval_id: "preview",
            approver: action.approver,
            grant_id: grant.id,
            tool: action.tool,
            amount_ceiling_minor: action.amount_minor ?? 0,
            expires_at: now + HOUR_MS,
          },
  };
  const state: DecisionState = decisionState(ctx.environment, certificate);
  const decision = decide(request, chain, state, now);
  return {
    ...decisionOutcomeFields(decision),
    approval_required: grant.approval_required,
    ...(warnings.length > 0 ? { warnings } : {}),
    created: false,
  };
}
