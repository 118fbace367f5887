// TypeScript shapes of the v1 bodies and responses; they mirror the JSON Schemas in schemas.ts.

import type { Role } from "./endpoints.js";

export type EnforcementMode = "observe" | "enforce";
export type GrantStatus = "pending_approval" | "active" | "revoked" | "expired";
export type PrincipalType = "human" | "team" | "service";
export type DelegationPolicy = "none" | "attenuating";
export type Outcome = "allow" | "deny" | "exhausted" | "gated";

export interface GrantIssueBody {
  agent_id: string;
  principal_type: PrincipalType;
  principal_id: string;
  scope: { tool: string[] };
  budget_amount_minor?: number;
  budget_currency?: string;
  budget_count?: number;
  ttl_hours?: number;
  conditions?: { clean_context?: boolean };
  policy?: string;
  delegation_policy?: DelegationPolicy;
  delegation_depth_max?: number;
  audience?: string;
  enforcement_mode?: EnforcementMode;
  require_approval?: boolean;
}

export interface SampleAction {
  tool: string;
  amount_minor?: number;
  currency?: string;
  audience?: string;
  args?: Record<string, unknown>;
  context?: { clean?: boolean };
  approver?: string | null;
}

export interface GrantPreviewBody extends GrantIssueBody {
  action: SampleAction;
}

export type GrantDelegateBody = Partial<Omit<GrantIssueBody, "require_approval">> & { agent_id: string };

export interface GrantEnforcementBody {
  enforcement_mode: EnforcementMode;
}
export interface ReasonBody {
  reason?: string;
}
export interface AgentCreateBody {
  name: string;
  description?: string;
}

export interface CertificationBody {
  environment?: string;
  basis: string;
  provenance_version: string;
  manifest_hash: string;
  content_hash: string;
  market_profile?: string;
  checks: string[];
}

export interface KeyCreateBody {
  identity: string;
  kind: "human" | "service";
  roles: Role[];
  agent_id?: string;
  agent_ids?: string[];
  email?: string;
}

export interface Agent {
  id: string;
  name: string;
  description: string | null;
  created_at: string;
  created_by: string;
}

export interface Grant {
  id: string;
  status: GrantStatus;
  enforcement_mode: EnforcementMode;
  agent_id: string;
  principal_type: PrincipalType;
  principal_id: string;
  scope: { tool: string[] };
  budget_amount_minor: number;
  budget_currency: string | null;
  budget_count: number | null;
  ttl_hours: number;
  conditions: { clean_context: boolean };
  policy: string | null;
  delegation_policy: DelegationPolicy;
  delegation_depth_max: number | null;
  audience: string | null;
  approval_required: boolean;
  parent_id: string | null;
  root_id: string;
  issued_at: string;
  expires_at: string;
  issued_by: string;
  approved_by: string | null;
  approved_at: string | null;
  family_id: string | null;
  family_version: number | string | null;
  revoked_at: string | null;
  revoked_by: string | null;
  revocation_reason: string | null;
  uses: number;
  held_minor: number;
  settled_minor: number;
}

export interface GrantRevocation {
  grant_id: string;
  revoked: string[];
  revoked_at: string;
}

export interface Certificate {
  id: string;
  agent_id: string;
  environment: string;
  status: "valid" | "revoked";
  issued_by: string;
  issued_by_email: string | null;
  issued_at: string;
  basis: string;
  provenance_version: string;
  manifest_hash: string;
  content_hash: string;
  market_profile: string | null;
  checks: string[];
  revoked_at: string | null;
  revoked_by: string | null;
  revocation_reason: string | null;
  superseded_by: string | null;
}

export interface CertificationStatus {
  agent_id: string;
  environment: string;
  certified: boolean;
  certificate: Certificate | null;
  certificates: Certificate[];
}

export interface ApiKey {
  id: string;
  identity: string;
  kind: "human" | "service";
  roles: Role[];
  agent_id: string | null;
  agent_ids: string[] | null;
  email: string | null;
  status: "active" | "revoked";
  created_at: string;
  created_by: string | null;
  revoked_at: string | null;
  revoked_by: string | null;
  revocation_reason: string | null;
}

export interface ApiKeyCreated extends ApiKey {
  key: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;
  detail?: string;
  instance?: string;
  [extension: string]: unknown;
}

export interface Attestation {
  manifest_hash: string;
  content_hash: string;
  provenance_version: string;
}

export interface AuthorizeBody {
  grant_id: string;
  tool: string;
  amount_minor?: number;
  currency?: string;
  audience?: string;
  args?: Record<string, unknown>;
  context?: { clean?: boolean };
  attestation?: Attestation;
  approval_id?: string;
  nonce?: string;
}

export interface SettleBody {
  amount_minor: number;
  nonce?: string;
}

export interface DecisionApproveBody {
  amount_minor_max?: number;
  expires_in_minutes?: number;
  note?: string;
}

export interface DecisionAbandonBody {
  reason: "timeout" | "cancelled";
  waited_ms: number;
}

export type ContractMetric = "refusal_rate" | "deny_rate" | "gated_rate" | "exhausted_rate" | "out_of_scope_rate";

export interface ContractCreateBody {
  metric: ContractMetric;
  ceiling: number;
  window_decisions?: number;
  window_hours?: number;
  description?: string;
}

export interface BreakerCreateBody {
  contract_id: string;
  action: "notify" | "revoke";
}

export interface BreakerArmBody {
  basis: string;
  expecting_trips: number;
}

export interface BreakerDisarmBody {
  reason?: string;
}
