// Preview: what a grant would decide for a sample action, before it exists. The engine decides on
// a one-link chain built from the request; nothing is written.

import type { GrantPreviewBody } from "@agent-authority/api";
import { decide, type ChainLink, type DecisionRequest, type DecisionState } from "@agent-authority/engine";
import type { Decision } from "@agent-authority/engine";
import type { ServiceContext } from "./context.js";
import { grantTerms } from "./grants.js";
import { checkPolicy } from "./policy.js";

const HOUR_MS = 3_600_000;
const PREVIEW_GRANT_ID = "grt_preview";

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
  const amount = body.budget_amount_minor ?? 0;
  const ttlHours = body.ttl_hours ?? 24;
  // The same defaults as issue; only the fields the lattice reads matter here.
  const terms = grantTerms({
    scope: body.scope,
    issued_at: now,
    expires_at: now + ttlHours * HOUR_MS,
    budget_amount_minor: amount,
    budget_currency: body.budget_currency ?? null,
    budget_count: body.budget_count ?? null,
    conditions: { clean_context: body.conditions?.clean_context ?? false },
    enforcement_mode: body.enforcement_mode ?? "enforce",
    audience: body.audience ?? null,
    principal_type: body.principal_type,
    principal_id: body.principal_id,
    delegation_policy: body.delegation_policy ?? "none",
    delegation_depth_max: body.delegation_depth_max ?? null,
    policy: body.policy ?? null,
  });
  const chain: ChainLink[] = [{
    grant_id: PREVIEW_GRANT_ID,
    agent_id: body.agent_id,
    status: "active",
    terms,
    usage: { uses: 0, settled_minor: 0, holds: [] },
  }];
  // The agent's real certificate, presented as its attestation: the certification gate answers
  // what it would answer for this agent as certified today.
  const certificate = await ctx.store.validCertificate(body.agent_id, ctx.environment);
  const action = body.action;
  const request: DecisionRequest = {
    grant_id: PREVIEW_GRANT_ID,
    agent_id: body.agent_id,
    tool: action.tool,
    amount_minor: action.amount_minor ?? null,
    currency: action.currency ?? null,
    audience: action.audience ?? null,
    args: action.args ?? null,
    context: action.context ?? null,
    attestation: certificate === undefined ? null : {
      manifest_hash: certificate.manifest_hash, content_hash: certificate.content_hash, provenance_version: certificate.provenance_version,
    },
    approval: action.approver === undefined || action.approver === null ? null : {
      approval_id: "preview", approver: action.approver, grant_id: PREVIEW_GRANT_ID, tool: action.tool,
      amount_ceiling_minor: action.amount_minor ?? 0, expires_at: now + HOUR_MS,
    },
  };
  const state: DecisionState = {
    environment: ctx.environment,
    certificate: certificate === undefined ? null : {
      certificate_id: certificate.id, agent_id: certificate.agent_id, environment: certificate.environment,
      revoked_at: certificate.revoked_at, manifest_hash: certificate.manifest_hash,
      content_hash: certificate.content_hash, provenance_version: certificate.provenance_version,
    },
  };
  const decision = decide(request, chain, state, now);
  return {
    outcome: decision.outcome,
    ...(decision.would_outcome === undefined ? {} : { would_outcome: decision.would_outcome }),
    enforcement_mode: decision.mode,
    decided_by: decision.decided_by,
    reason_code: decision.reason_code,
    reason: decision.reason,
    gates: decision.gates,
    ...(decision.residual === undefined ? {} : { residual: decision.residual }),
    approver: decision.approver,
    approval_required: body.require_approval === true || amount > ctx.autoApprovalCeilingMinor,
    ...(warnings.length > 0 ? { warnings } : {}),
    created: false,
  };
}
