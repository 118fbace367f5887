// Records of the store's tables as the store tests write them: one shape for every suite, with the
// fields a test cares about given as overrides.

import type { GrantRecord } from "@agent-authority/server";

/** The time every store test's records are issued at. */
export const T0 = Date.UTC(2026, 0, 5, 12, 0, 0);
const HOUR = 3_600_000;

let counter = 0;
/** Ids of the right shape (26 characters after the prefix), unique within a run. */
export function recordId(prefix: string): string {
  counter += 1;
  return `${prefix}_${String(counter).padStart(10, "0")}abcdefghjkmnpqrs`;
}

/** An active root grant of `agentId` for `payments.*`, 5,000 EUR for 24 hours, with no policy unless `over` gives one. */
export function grantRecord(agentId: string, over: Partial<GrantRecord> = {}): GrantRecord {
  const id = over.id ?? recordId("grt");
  return {
    id,
    root_id: id,
    parent_id: null,
    depth: 0,
    agent_id: agentId,
    principal_type: "human",
    principal_id: "alice@example.com",
    scope: { tool: ["payments.*"] },
    budget_amount_minor: 5_000,
    budget_currency: "EUR",
    budget_count: null,
    ttl_hours: 24,
    conditions: { clean_context: false },
    policy: null,
    delegation_policy: "attenuating",
    delegation_depth_max: null,
    audience: null,
    enforcement_mode: "enforce",
    status: "active",
    approval_required: false,
    issued_at: T0,
    expires_at: T0 + 24 * HOUR,
    issued_by: "issuer@example.com",
    approved_by: null,
    approved_at: null,
    family_id: null,
    family_version: null,
    revoked_at: null,
    revoked_by: null,
    revocation_reason: null,
    ...over,
  };
}
