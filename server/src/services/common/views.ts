// Records as the v1 API shows them: times as RFC 3339 strings, computed statuses, usage.

import type { Agent, ApiKey, Certificate, Grant, GrantStatus } from "@agent-authority/api";
import type { AgentRecord, CertificateRecord, GrantRecord, GrantUsage, KeyRecord } from "../../store/core/index.js";

/** The last instant written and its text: the decisions of a batch share one `now`, written several times each. */
let lastMs = Number.NaN;
let lastText = "";

/** An instant as RFC 3339 text (UTC, milliseconds). */
export function iso(ms: number): string {
  if (ms !== lastMs) {
    lastText = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastText;
}
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

/** A grant's status as of `now`: expiry is computed from `expires_at`, never stored. */
export function grantStatus(grant: GrantRecord, now: number): GrantStatus {
  if (grant.status === "revoked") return "revoked";
  if (grant.expires_at <= now) return "expired";
  return grant.status;
}

export function grantView(grant: GrantRecord, usage: GrantUsage, now: number): Grant {
  return {
    id: grant.id,
    status: grantStatus(grant, now),
    enforcement_mode: grant.enforcement_mode,
    agent_id: grant.agent_id,
    principal_type: grant.principal_type,
    principal_id: grant.principal_id,
    scope: { tool: [...grant.scope.tool] },
    budget_amount_minor: grant.budget_amount_minor,
    budget_currency: grant.budget_currency,
    budget_count: grant.budget_count,
    ttl_hours: grant.ttl_hours,
    conditions: { clean_context: grant.conditions.clean_context },
    policy: grant.policy,
    delegation_policy: grant.delegation_policy,
    delegation_depth_max: grant.delegation_depth_max,
    audience: grant.audience,
    approval_required: grant.approval_required,
    parent_id: grant.parent_id,
    root_id: grant.root_id,
    issued_at: iso(grant.issued_at),
    expires_at: iso(grant.expires_at),
    issued_by: grant.issued_by,
    approved_by: grant.approved_by,
    approved_at: isoOrNull(grant.approved_at),
    family_id: grant.family_id,
    // Stored as text; families number their versions, so the answer carries the integer.
    family_version:
      grant.family_version === null || !/^[0-9]+$/.test(grant.family_version) ? grant.family_version : Number(grant.family_version),
    revoked_at: isoOrNull(grant.revoked_at),
    revoked_by: grant.revoked_by,
    revocation_reason: grant.revocation_reason,
    uses: usage.uses,
    held_minor: usage.held_minor,
    settled_minor: usage.settled_minor,
  };
}

export function agentView(agent: AgentRecord): Agent {
  return {
    id: agent.id,
    name: agent.name,
    description: agent.description,
    created_at: iso(agent.created_at),
    created_by: agent.created_by,
  };
}

export function certificateView(c: CertificateRecord): Certificate {
  return {
    id: c.id,
    agent_id: c.agent_id,
    environment: c.environment,
    status: c.revoked_at === null ? "valid" : "revoked",
    issued_by: c.issued_by,
    issued_by_email: c.issued_by_email,
    issued_at: iso(c.issued_at),
    basis: c.basis,
    provenance_version: c.provenance_version,
    manifest_hash: c.manifest_hash,
    content_hash: c.content_hash,
    market_profile: c.market_profile,
    checks: [...c.checks],
    revoked_at: isoOrNull(c.revoked_at),
    revoked_by: c.revoked_by,
    revocation_reason: c.revocation_reason,
    superseded_by: c.superseded_by,
  };
}

export function keyView(k: KeyRecord): ApiKey {
  return {
    id: k.id,
    identity: k.identity,
    kind: k.kind,
    roles: [...k.roles],
    agent_id: k.agent_id,
    agent_ids: k.agent_ids === null ? null : [...k.agent_ids],
    email: k.email,
    status: k.revoked_at === null ? "active" : "revoked",
    created_at: iso(k.created_at),
    created_by: k.created_by,
    revoked_at: isoOrNull(k.revoked_at),
    revoked_by: k.revoked_by,
    revocation_reason: k.revocation_reason,
  };
}
