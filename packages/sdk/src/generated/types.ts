// Types of the v1 request and response bodies, generated from the JSON Schemas of @agent-authority/api.
// Do not edit: run `node packages/sdk/generate.mjs` after the schemas change (a test fails on drift).

export interface Agent {
  /** An agent id, `agt_…`. */
  readonly id: string;
  readonly name: string;
  readonly description?: string | null;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly created_at: string;
  readonly created_by: string;
}

export interface AgentCreateBody {
  readonly name: string;
  readonly description?: string;
}

export interface AgentList {
  readonly agents: readonly Agent[];
  readonly next_after?: string | null;
}

export interface ApiIndex {
  /** The major version the path carries. */
  readonly api_version: "v1";
  readonly server_version: string;
  readonly links: {
    /** The OpenAPI 3.1 document of v1. */
    readonly openapi: string;
    readonly health: string;
    readonly ready: string;
    readonly metrics: string;
    /** The approvals console, for the humans in the loop. */
    readonly console: string;
  };
  /** Where the documentation is: pages of the project's source tree (`docs/`), named by path. */
  readonly docs: {
    readonly api: string;
    readonly operations: string;
    readonly security: string;
  };
}

export interface AuthorizeBody {
  /** A grant id, `grt_…`. */
  readonly grant_id: string;
  /** The action's tool. A name outside `A-Z a-z 0-9 _ . : * -` is decided `deny` by the scope gate (`scope.out_of_scope`). */
  readonly tool: string;
  readonly amount_minor?: number;
  /** ISO 4217 currency code, e.g. `EUR`. */
  readonly currency?: string;
  readonly audience?: string;
  /** The action's own arguments (JSON values), bound as `args.<name>`. */
  readonly args?: { readonly [key: string]: unknown };
  readonly context?: {
    readonly clean?: boolean;
  };
  /** What the agent is, in the certificate's own field names; checked in `enforce`. */
  readonly attestation?: {
    readonly manifest_hash: string;
    readonly content_hash: string;
    readonly provenance_version: string;
  };
  /** Presents a human approval of an earlier `gated` decision. */
  readonly approval_id?: string;
  /** A fresh value per request, echoed in the signed statement (`signature.statement.nonce`): an answer to another request cannot pass for this one. */
  readonly nonce?: string;
}

export interface Breaker {
  /** A breaker id, `brk_…`. */
  readonly id: string;
  readonly agent_id: string;
  /** A contract id, `ctr_…`. */
  readonly contract_id: string;
  readonly action: "notify" | "revoke";
  readonly mode: "observe" | "armed";
  /** An RFC 3339 UTC time with milliseconds. */
  readonly created_at: string;
  readonly created_by: string;
  readonly armed_at?: string | null;
  readonly armed_by?: string | null;
  readonly basis?: string | null;
  readonly expecting_trips?: number | null;
  readonly contract?: Contract;
  readonly trips: readonly Trip[];
  readonly history?: ReadonlyArray<{
    readonly kind?: string;
    readonly actor?: string;
    /** An RFC 3339 UTC time with milliseconds. */
    readonly at?: string;
    readonly detail?: { readonly [key: string]: unknown };
  }>;
}

export interface BreakerArmBody {
  /** Why arming is justified. */
  readonly basis: string;
  /** The trip count of the last 90 days, as the counterfactual showed it. */
  readonly expecting_trips: number;
}

export interface BreakerCreateBody {
  /** A contract id, `ctr_…`. */
  readonly contract_id: string;
  /** `notify` raises a finding; `revoke` revokes every grant of the agent with its subtree. */
  readonly action: "notify" | "revoke";
}

export interface BreakerDisarmBody {
  readonly reason?: string;
}

export interface Certificate {
  readonly id: string;
  /** An agent id, `agt_…`. */
  readonly agent_id: string;
  readonly environment: string;
  readonly status: "valid" | "revoked";
  readonly issued_by: string;
  readonly issued_by_email?: string | null;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly issued_at: string;
  readonly basis: string;
  readonly provenance_version?: string;
  readonly manifest_hash?: string;
  readonly content_hash?: string;
  readonly market_profile?: string | null;
  readonly checks: readonly string[];
  readonly revoked_at?: string | null;
  readonly revoked_by?: string | null;
  readonly revocation_reason?: string | null;
  readonly superseded_by?: string | null;
}

export interface CertificateList {
  readonly certificates: readonly Certificate[];
  readonly next_after?: string | null;
}

export interface CertificateRevokeBody {
  readonly reason?: string;
}

export interface CertificationBody {
  /** Absent: the server's environment. */
  readonly environment?: string;
  readonly basis: string;
  readonly provenance_version: string;
  readonly manifest_hash: string;
  readonly content_hash: string;
  readonly market_profile?: string;
  readonly checks: readonly string[];
}

export interface CertificationStatus {
  /** An agent id, `agt_…`. */
  readonly agent_id: string;
  /** The server's environment, the only one a certificate is valid for. */
  readonly environment: string;
  readonly certified: boolean;
  /** The valid certificate for this environment. */
  readonly certificate: Certificate | null;
  /** Every certificate of the agent, newest first. */
  readonly certificates: readonly Certificate[];
}

export interface Contract {
  /** A contract id, `ctr_…`. */
  readonly id: string;
  readonly agent_id: string;
  readonly metric: "refusal_rate" | "deny_rate" | "gated_rate" | "exhausted_rate" | "out_of_scope_rate";
  readonly ceiling: number;
  readonly window_decisions?: number | null;
  readonly window_hours?: number | null;
  readonly description?: string | null;
  /** The human who declared it; every trip carries this name. */
  readonly declared_by: string;
  readonly declared_by_email?: string | null;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly declared_at: string;
  readonly status: "breached" | "within" | "not_demonstrated";
  /** Decisions in the window now. */
  readonly n: number;
  /** Decisions in the window that count towards the metric. */
  readonly successes: number;
  /** successes / n; null with no decision. */
  readonly rate: number | null;
  /** The 95% Wilson score interval of the rate. */
  readonly interval: {
    readonly lower: number;
    readonly upper: number;
  };
  /** An RFC 3339 UTC time with milliseconds. */
  readonly measured_at?: string;
}

/** Exactly one of `window_decisions` and `window_hours`. */
export interface ContractCreateBody {
  /** The per-decision rate the contract bounds. */
  readonly metric: "refusal_rate" | "deny_rate" | "gated_rate" | "exhausted_rate" | "out_of_scope_rate";
  /** The highest rate the contract allows, as a fraction. */
  readonly ceiling: number;
  /** The last N decisions of the agent. */
  readonly window_decisions?: number;
  /** The decisions of the last H hours (at most 90 days). */
  readonly window_hours?: number;
  readonly description?: string;
}

export interface ContractList {
  readonly contracts: readonly Contract[];
}

export interface Counterfactual {
  readonly window_days: 90;
  readonly breakers: ReadonlyArray<{
    /** A breaker id, `brk_…`. */
    readonly breaker_id: string;
    readonly trips: number;
    readonly trip_times: readonly string[];
  }>;
}

export interface Decision {
  /** A sealed ledger record, `led_…`. */
  readonly ledger_id: string;
  /** `allow` permits; a refusal is HTTP 200 too. */
  readonly outcome: "allow" | "deny" | "exhausted" | "gated";
  /** In `observe` only: what `enforce` would say. */
  readonly would_outcome?: "allow" | "deny" | "exhausted" | "gated";
  readonly enforcement_mode: "observe" | "enforce";
  /** The gate that decided a refusal; null when every gate passed. */
  readonly decided_by: string | null;
  readonly reason_code: string;
  readonly reason: string;
  readonly gates: readonly GateResult[];
  /** For `gated`: who could approve, as an expression over `approver`. */
  readonly residual?: string;
  /** The human whose approval this decision used. */
  readonly approver: string | null;
  /** An approval of a gated decision, `apv_…`. */
  readonly approval_id?: string;
  /** The holds an `allow` with an amount placed: one on the grant and one on every ancestor. */
  readonly holds?: ReadonlyArray<{
    readonly grant_id?: string;
    readonly amount_minor?: number;
    readonly currency?: string | null;
    readonly expires_at?: string;
  }>;
  readonly decided_at: string;
  readonly signature: Signature;
}

export interface DecisionAbandonBody {
  /** `timeout`: no approval within the agent's wait; `cancelled`: the agent's client cancelled the call. */
  readonly reason: "timeout" | "cancelled";
  /** How long the agent waited, in milliseconds. */
  readonly waited_ms: number;
}

export interface DecisionAbandonment {
  /** A sealed ledger record, `led_…`. */
  readonly ledger_id: string;
  readonly grant_id: string;
  readonly reason: "timeout" | "cancelled";
  readonly waited_ms: number;
  readonly abandoned_at: string;
}

export interface DecisionApproval {
  /** An approval of a gated decision, `apv_…`. */
  readonly approval_id: string;
  /** A sealed ledger record, `led_…`. */
  readonly ledger_id: string;
  readonly grant_id: string;
  readonly tool: string;
  readonly amount_minor_max: number;
  readonly currency?: string | null;
  readonly approver: string;
  readonly approved_at: string;
  readonly expires_at: string;
  readonly note?: string | null;
}

export interface DecisionApproveBody {
  /** The largest amount the approval covers; absent: the gated decision's amount. */
  readonly amount_minor_max?: number;
  /** Absent: 60 minutes. */
  readonly expires_in_minutes?: number;
  readonly note?: string;
}

/** Verified offline by `authority receipt verify FILE --keys JWKS` (docs/verification.md). */
export interface DecisionReceipt {
  readonly format: "agent-authority.receipt.v1";
  readonly ledger_id: string;
  /** The key of GET /v1/signing-keys that signed the checkpoint and the receipt. */
  readonly kid: string;
  /** A signed checkpoint (C2SP tlog-checkpoint signed note) whose tree holds every record of the receipt. */
  readonly checkpoint: string;
  readonly record: {
    /** The record's position in the ledger's global order: its leaf in the Merkle tree. */
    readonly leaf_index: number;
    /** The hash of the previous record of its chain (64 zeros for the first). */
    readonly prev_hash: string;
    /** SHA-256 of `prev_hash`, a newline and `record`; the leaf is SHA-256(0x00 || these 32 bytes). */
    readonly hash: string;
    /** The sealed record: its canonical JSON, exactly the text its hash covers. */
    readonly record: string;
    /** Base64 SHA-256 hashes from the leaf up to the checkpoint's root (RFC 9162 §2.1.3). */
    readonly inclusion_proof: readonly string[];
  };
  /** The settlement records of the decision (at most one). */
  readonly settlements: ReadonlyArray<{
    /** The record's position in the ledger's global order: its leaf in the Merkle tree. */
    readonly leaf_index: number;
    /** The hash of the previous record of its chain (64 zeros for the first). */
    readonly prev_hash: string;
    /** SHA-256 of `prev_hash`, a newline and `record`; the leaf is SHA-256(0x00 || these 32 bytes). */
    readonly hash: string;
    /** The sealed record: its canonical JSON, exactly the text its hash covers. */
    readonly record: string;
    /** Base64 SHA-256 hashes from the leaf up to the checkpoint's root (RFC 9162 §2.1.3). */
    readonly inclusion_proof: readonly string[];
  }>;
  /** Ed25519 over the canonical JSON of `statement`, whose `receipt_sha256` is the SHA-256 of the canonical JSON of the receipt without `signature`. */
  readonly signature: {
    readonly alg: "EdDSA";
    readonly kid: string;
    readonly statement: {
      readonly ledger_id: string;
      readonly receipt_sha256: string;
      readonly type: "authority.receipt.v1";
    };
    readonly value: string;
  };
}

export interface Diagnostic {
  readonly code: string;
  readonly severity: "error" | "warning";
  readonly message: string;
  readonly span: Span;
  readonly help?: string;
}

/** Least strict first: `observe` never refuses and records what `enforce` would have said. */
export type EnforcementMode = "observe" | "enforce";

/** An event as `GET /v1/events` sends it in `data:` and a webhook receives it as its body. */
export type Event = EventGrantIssued | EventGrantApproved | EventGrantDelegated | EventGrantRevoked | EventGrantEnforcementChanged | EventDecisionGated | EventDecisionApproved | EventCertificateIssued | EventCertificateRevoked | EventContractBreached | EventBreakerTripped | EventBreakerArmed | EventFindingRaised | EventWebhookDeliveryDeadLettered;

export interface EventBreakerArmed {
  /** The event's id, `evn_…`. */
  readonly id: string;
  readonly type: "breaker.armed";
  /** Increasing in commit order across the server's replicas; the stream's `id:`. */
  readonly sequence: number;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly time: string;
  /** The id of the record the event is about. */
  readonly subject: string;
  /** A breaker was armed: its next trip performs its action. */
  readonly data: {
    /** A breaker id, `brk_…`. */
    readonly breaker_id: string;
    /** An agent id, `agt_…`. */
    readonly agent_id: string;
    /** A contract id, `ctr_…`. */
    readonly contract_id: string;
    readonly action: "notify" | "revoke";
    readonly armed_by: string;
    readonly basis: string;
    readonly expecting_trips: number;
  };
}

export interface EventBreakerTripped {
  /** The event's id, `evn_…`. */
  readonly id: string;
  readonly type: "breaker.tripped";
  /** Increasing in commit order across the server's replicas; the stream's `id:`. */
  readonly sequence: number;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly time: string;
  /** The id of the record the event is about. */
  readonly subject: string;
  /** A breaker tripped: its contract entered `breached`. */
  readonly data: {
    /** A breaker id, `brk_…`. */
    readonly breaker_id: string;
    readonly trip_id: string;
    /** An agent id, `agt_…`. */
    readonly agent_id: string;
    /** A contract id, `ctr_…`. */
    readonly contract_id: string;
    /** A ledger id, `led_…`. */
    readonly ledger_id?: string;
    readonly action: "notify" | "revoke";
    readonly mode: "observe" | "armed";
    /** Whether the action was performed (armed) or only recorded (observe). */
    readonly performed: boolean;
    /** What the action does, or in `observe` would have done: the grants it revokes, or that it raises a finding. */
    readonly would: {
      readonly revoke?: readonly string[];
      readonly raise_finding?: boolean;
    };
    /** The human who declared the contract. */
    readonly declared_by: string;
    readonly grant_ids?: readonly string[];
    readonly finding_id?: string | null;
  };
}

export interface EventCertificateIssued {
  /** The event's id, `evn_…`. */
  readonly id: string;
  readonly type: "certificate.issued";
  /** Increasing in commit order across the server's replicas; the stream's `id:`. */
  readonly sequence: number;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly time: string;
  /** The id of the record the event is about. */
  readonly subject: string;
  /** An agent was certified; `supersedes` names the certificate it replaced, revoked by field. */
  readonly data: {
    /** A certificate id, `crt_…`. */
    readonly certificate_id: string;
    /** An agent id, `agt_…`. */
    readonly agent_id: string;
    readonly environment: string;
    readonly issued_by: string;
    readonly supersedes?: string | null;
  };
}

export interface EventCertificateRevoked {
  /** The event's id, `evn_…`. */
  readonly id: string;
  readonly type: "certificate.revoked";
  /** Increasing in commit order across the server's replicas; the stream's `id:`. */
  readonly sequence: number;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly time: string;
  /** The id of the record the event is about. */
  readonly subject: string;
  /** A certificate was revoked (by hand, or superseded by a new one). */
  readonly data: {
    /** A certificate id, `crt_…`. */
    readonly certificate_id: string;
    /** An agent id, `agt_…`. */
    readonly agent_id: string;
    readonly environment: string;
    readonly revoked_by: string;
    readonly reason?: string | null;
    readonly superseded_by?: string | null;
  };
}

export interface EventContractBreached {
  /** The event's id, `evn_…`. */
  readonly id: string;
  readonly type: "contract.breached";
  /** Increasing in commit order across the server's replicas; the stream's `id:`. */
  readonly sequence: number;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly time: string;
  /** The id of the record the event is about. */
  readonly subject: string;
  /** A contract watched by a breaker entered `breached` after the decision `ledger_id`. */
  readonly data: {
    /** A contract id, `ctr_…`. */
    readonly contract_id: string;
    /** An agent id, `agt_…`. */
    readonly agent_id: string;
    readonly metric: string;
    readonly ceiling: number;
    readonly declared_by: string;
    /** A ledger id, `led_…`. */
    readonly ledger_id: string;
    readonly n?: number;
    readonly successes?: number;
    readonly lower_bound?: number;
  };
}

export interface EventDecisionApproved {
  /** The event's id, `evn_…`. */
  readonly id: string;
  readonly type: "decision.approved";
  /** Increasing in commit order across the server's replicas; the stream's `id:`. */
  readonly sequence: number;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly time: string;
  /** The id of the record the event is about. */
  readonly subject: string;
  /** A human approved a gated decision; the agent may retry with `approval_id`. */
  readonly data: {
    /** A ledger id, `led_…`. */
    readonly ledger_id: string;
    readonly approval_id: string;
    /** A grant id, `grt_…`. */
    readonly grant_id: string;
    /** An agent id, `agt_…`. */
    readonly agent_id: string;
    readonly approver: string;
    readonly tool?: string;
    readonly amount_ceiling_minor?: number;
    readonly currency?: string | null;
    /** An RFC 3339 UTC time with milliseconds. */
    readonly expires_at?: string;
  };
}

export interface EventDecisionGated {
  /** The event's id, `evn_…`. */
  readonly id: string;
  readonly type: "decision.gated";
  /** Increasing in commit order across the server's replicas; the stream's `id:`. */
  readonly sequence: number;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly time: string;
  /** The id of the record the event is about. */
  readonly subject: string;
  /** A decision was `gated`: it waits for a human approval (`POST /v1/decisions/{ledger_id}/approve`). */
  readonly data: {
    /** A ledger id, `led_…`. */
    readonly ledger_id: string;
    /** A grant id, `grt_…`. */
    readonly grant_id: string;
    /** An agent id, `agt_…`. */
    readonly agent_id: string;
    readonly tool: string;
    readonly amount_minor?: number | null;
    readonly currency?: string | null;
    readonly residual?: string | null;
    /** The gate that gated it: `policy` (a human approves the action) or `status` (the grant awaits approval). */
    readonly decided_by?: string;
  };
}

export interface EventFindingRaised {
  /** The event's id, `evn_…`. */
  readonly id: string;
  readonly type: "finding.raised";
  /** Increasing in commit order across the server's replicas; the stream's `id:`. */
  readonly sequence: number;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly time: string;
  /** The id of the record the event is about. */
  readonly subject: string;
  /** An armed `notify` breaker raised a finding. */
  readonly data: {
    readonly finding_id: string;
    readonly kind: string;
    /** An agent id, `agt_…`. */
    readonly agent_id: string;
    /** A breaker id, `brk_…`. */
    readonly breaker_id: string;
    readonly trip_id: string;
    readonly message: string;
  };
}

export interface EventGrantApproved {
  /** The event's id, `evn_…`. */
  readonly id: string;
  readonly type: "grant.approved";
  /** Increasing in commit order across the server's replicas; the stream's `id:`. */
  readonly sequence: number;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly time: string;
  /** The id of the record the event is about. */
  readonly subject: string;
  /** A pending grant was approved and is active. */
  readonly data: {
    /** A grant id, `grt_…`. */
    readonly grant_id: string;
    /** An agent id, `agt_…`. */
    readonly agent_id: string;
    readonly approved_by: string;
    readonly note?: string | null;
  };
}

export interface EventGrantDelegated {
  /** The event's id, `evn_…`. */
  readonly id: string;
  readonly type: "grant.delegated";
  /** Increasing in commit order across the server's replicas; the stream's `id:`. */
  readonly sequence: number;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly time: string;
  /** The id of the record the event is about. */
  readonly subject: string;
  /** A narrower or equal child grant was delegated. */
  readonly data: {
    /** A grant id, `grt_…`. */
    readonly grant_id: string;
    /** A grant id, `grt_…`. */
    readonly parent_id: string;
    /** A grant id, `grt_…`. */
    readonly root_id?: string;
    /** An agent id, `agt_…`. */
    readonly agent_id: string;
    readonly issued_by: string;
    readonly enforcement_mode?: "observe" | "enforce";
  };
}

export interface EventGrantEnforcementChanged {
  /** The event's id, `evn_…`. */
  readonly id: string;
  readonly type: "grant.enforcement_changed";
  /** Increasing in commit order across the server's replicas; the stream's `id:`. */
  readonly sequence: number;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly time: string;
  /** The id of the record the event is about. */
  readonly subject: string;
  /** A grant's enforcement mode was made stricter. */
  readonly data: {
    /** A grant id, `grt_…`. */
    readonly grant_id: string;
    /** An agent id, `agt_…`. */
    readonly agent_id: string;
    readonly from: "observe" | "enforce";
    readonly to: "observe" | "enforce";
    readonly changed_by: string;
  };
}

export interface EventGrantIssued {
  /** The event's id, `evn_…`. */
  readonly id: string;
  readonly type: "grant.issued";
  /** Increasing in commit order across the server's replicas; the stream's `id:`. */
  readonly sequence: number;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly time: string;
  /** The id of the record the event is about. */
  readonly subject: string;
  /** A grant was issued (or instantiated from a family); `status` `pending_approval` means it waits for a human. */
  readonly data: {
    /** A grant id, `grt_…`. */
    readonly grant_id: string;
    /** An agent id, `agt_…`. */
    readonly agent_id: string;
    readonly status: "pending_approval" | "active";
    readonly enforcement_mode: "observe" | "enforce";
    readonly issued_by: string;
    readonly approval_required?: boolean;
    readonly family_id?: string | null;
    readonly family_version?: number | null;
  };
}

export interface EventGrantRevoked {
  /** The event's id, `evn_…`. */
  readonly id: string;
  readonly type: "grant.revoked";
  /** Increasing in commit order across the server's replicas; the stream's `id:`. */
  readonly sequence: number;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly time: string;
  /** The id of the record the event is about. */
  readonly subject: string;
  /** A grant was revoked with its whole delegation subtree. */
  readonly data: {
    /** A grant id, `grt_…`. */
    readonly grant_id: string;
    /** An agent id, `agt_…`. */
    readonly agent_id: string;
    /** Every grant of the subtree this revocation revoked, the grant itself first. */
    readonly revoked: readonly string[];
    /** The identity, or the breaker id when a breaker revoked. */
    readonly revoked_by: string;
    readonly reason?: string | null;
    readonly breaker_id?: string | null;
    readonly trip_id?: string | null;
  };
}

export interface EventWebhookDeliveryDeadLettered {
  /** The event's id, `evn_…`. */
  readonly id: string;
  readonly type: "webhook.delivery_dead_lettered";
  /** Increasing in commit order across the server's replicas; the stream's `id:`. */
  readonly sequence: number;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly time: string;
  /** The id of the record the event is about. */
  readonly subject: string;
  /** A webhook delivery failed every retry and is dead-lettered; it can be redelivered by hand. */
  readonly data: {
    /** A webhook id, `whk_…`. */
    readonly webhook_id: string;
    /** A webhook delivery id, `whd_…`. */
    readonly delivery_id: string;
    readonly event_id: string;
    readonly event_type: string;
    readonly attempts: number;
    readonly last_error?: string | null;
  };
}

export interface FamilyDiagnostic {
  /** The family compiler's stable code, e.g. `schema` or `policy/unknown-name`. */
  readonly code: string;
  readonly severity: "error";
  readonly message: string;
  readonly help?: string;
  /** The field the error is about, as a dotted path (`parameters.agent_id.pattern`), when it is about one field. */
  readonly field?: string;
  /** Line of the body as the compiler reads it, pretty-printed with one-space indents. */
  readonly line: number;
  readonly column: number;
}

export interface FamilyImpact {
  /** A family id, `fam_…`: stable across the family's versions. */
  readonly family_id: string;
  readonly current_version?: number | null;
  readonly candidate_version: number;
  readonly candidate_content_hash: string;
  readonly days: number;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly since: string;
  /** Sealed decisions replayed under the candidate's terms. */
  readonly replayed: number;
  /** How many of them would get another enforce outcome. */
  readonly changed: number;
  /** Whether the window held more decisions than one preview replays. */
  readonly truncated?: boolean;
  /** The symbolic diff of the current version and the candidate, for any action (docs/analysis.md): `relation` (`equivalent`, `narrows`, `widens`, `incomparable`, `unknown`), `widening` and `narrowing` witnesses (each with its `axis`, `input` and `parameters`), and `reason` when unknown. */
  readonly symbolic?: {
    readonly relation: "equivalent" | "narrows" | "widens" | "incomparable" | "unknown";
    readonly widening: ReadonlyArray<{ readonly [key: string]: unknown }>;
    readonly narrowing: ReadonlyArray<{ readonly [key: string]: unknown }>;
    readonly reason?: string;
  };
  /** Per mode the candidate runs the replayed grants in: how many grants, decisions replayed, decisions `enforce` would refuse, and decisions that mode itself refuses (in `observe`, only those on a grant that is not usable). */
  readonly candidate_modes: ReadonlyArray<{
    readonly mode: "observe" | "enforce";
    readonly grants: number;
    readonly replayed: number;
    readonly enforce_refusals: number;
    readonly refusals: number;
  }>;
  readonly changes: ReadonlyArray<{
    readonly ledger_id: string;
    readonly grant_id: string;
    /** An RFC 3339 UTC time with milliseconds. */
    readonly decided_at: string;
    readonly tool: string;
    readonly before: {
      readonly outcome: "allow" | "deny" | "gated" | "exhausted";
      readonly decided_by?: "grant" | "status" | "window" | "audience" | "certification" | "scope" | "conditions" | "policy" | "budget" | null;
      readonly reason_code?: string;
    };
    /** `outcome` is what `enforce` would decide, whatever mode the candidate runs in; `answer` is what the candidate answers in its own `mode` (`observe` refuses only a grant that is not usable at all). */
    readonly after: {
      readonly outcome: "allow" | "deny" | "gated" | "exhausted";
      readonly decided_by?: "grant" | "status" | "window" | "audience" | "certification" | "scope" | "conditions" | "policy" | "budget" | null;
      readonly reason_code?: string;
      readonly reason?: string;
      readonly mode: "observe" | "enforce";
      readonly answer: "allow" | "deny" | "gated" | "exhausted";
    };
  }>;
  readonly skipped: ReadonlyArray<{
    readonly grant_id: string;
    readonly decisions?: number;
    readonly reason: string;
  }>;
}

/** The candidate as compiled JSON (`family`) or as the YAML a reviewer reads (`source`): exactly one of the two. */
export type FamilyImpactBody = {
  /** The candidate version, as `authority compile` writes it. */
  readonly family: GrantFamilyBody;
  /** The candidate version's YAML file, compiled by the server as `authority compile` compiles it; an error answers `invalid_family` with each diagnostic's line and column in this text. */
  readonly source?: string;
  /** Replay the sealed decisions of the last N days. Default: `30`. */
  readonly days?: number;
} | {
  /** The candidate version, as `authority compile` writes it. */
  readonly family?: GrantFamilyBody;
  /** The candidate version's YAML file, compiled by the server as `authority compile` compiles it; an error answers `invalid_family` with each diagnostic's line and column in this text. */
  readonly source: string;
  /** Replay the sealed decisions of the last N days. Default: `30`. */
  readonly days?: number;
};

export interface FamilyInstantiateBody {
  /** A value for every parameter without a default; each is checked against its type and bounds. */
  readonly parameters?: { readonly [key: string]: number | string | boolean };
  /** A reviewed version of the family; absent: the latest. */
  readonly version?: number;
}

export interface FindingList {
  readonly findings: ReadonlyArray<{
    readonly id: string;
    readonly kind: "breaker_trip";
    readonly agent_id: string;
    /** A breaker id, `brk_…`. */
    readonly breaker_id: string;
    readonly trip_id: string;
    /** An RFC 3339 UTC time with milliseconds. */
    readonly at: string;
    readonly detail?: { readonly [key: string]: unknown };
  }>;
  readonly next_after: string | null;
}

export interface GateResult {
  readonly gate: "grant" | "status" | "window" | "audience" | "certification" | "scope" | "conditions" | "policy" | "budget";
  readonly result: "pass" | "fail" | "skipped" | "not_reached";
  /** A stable reason code such as `scope.out_of_scope`. */
  readonly code: string;
  readonly reason: string;
  /** What this gate decides when it fails. */
  readonly outcome?: "allow" | "deny" | "exhausted" | "gated";
  readonly grant_id?: string;
}

export interface Grant {
  /** A grant id, `grt_…`. */
  readonly id: string;
  readonly status: "pending_approval" | "active" | "revoked" | "expired";
  /** Least strict first: `observe` never refuses and records what `enforce` would have said. */
  readonly enforcement_mode: "observe" | "enforce";
  /** An agent id, `agt_…`. */
  readonly agent_id: string;
  readonly principal_type: "human" | "team" | "service";
  readonly principal_id: string;
  readonly scope: {
    readonly tool?: readonly string[];
  };
  readonly budget_amount_minor: number;
  readonly budget_currency?: string | null;
  /** `null`: no use limit. */
  readonly budget_count: number | null;
  readonly ttl_hours: number;
  readonly conditions: {
    readonly clean_context?: boolean;
  };
  readonly policy?: string | null;
  readonly delegation_policy: "none" | "attenuating";
  readonly delegation_depth_max?: number | null;
  readonly audience?: string | null;
  readonly approval_required?: boolean;
  readonly parent_id: string | null;
  readonly root_id: string;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly issued_at: string;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly expires_at: string;
  readonly issued_by: string;
  readonly approved_by?: string | null;
  readonly approved_at?: string | null;
  readonly family_id?: string | null;
  readonly family_version?: number | string | null;
  readonly revoked_at?: string | null;
  readonly revoked_by?: string | null;
  readonly revocation_reason?: string | null;
  readonly uses: number;
  readonly held_minor: number;
  readonly settled_minor: number;
  /** Policy lint warnings, on issue only. */
  readonly warnings?: readonly Diagnostic[];
}

export interface GrantApproveBody {
  readonly note?: string;
}

export interface GrantDelegateBody {
  /** An agent id, `agt_…`. */
  readonly agent_id: string;
  readonly principal_type?: "human" | "team" | "service";
  readonly principal_id?: string;
  readonly scope?: {
    /** Tool names; an entry `ns.*` covers every tool whose name starts with `ns.`. */
    readonly tool: readonly string[];
  };
  /** Absent: the parent's remaining amount. */
  readonly budget_amount_minor?: number;
  /** ISO 4217 currency code, e.g. `EUR`. */
  readonly budget_currency?: string;
  /** Absent: the parent's remaining count. */
  readonly budget_count?: number;
  /** Absent: the child expires with the parent. */
  readonly ttl_hours?: number;
  readonly conditions?: {
    /** The action must come from a clean context. */
    readonly clean_context?: boolean;
  };
  /** The child's own expression; its effective policy is this AND every ancestor's. */
  readonly policy?: string;
  /** Default: `"none"`. */
  readonly delegation_policy?: "none" | "attenuating";
  /** Further delegation levels allowed below this grant; absent means no cap. */
  readonly delegation_depth_max?: number;
  readonly audience?: string;
  /** Least strict first: `observe` never refuses and records what `enforce` would have said. */
  readonly enforcement_mode?: "observe" | "enforce";
}

export interface GrantEnforcementBody {
  /** Least strict first: `observe` never refuses and records what `enforce` would have said. */
  readonly enforcement_mode: "observe" | "enforce";
}

export interface GrantFamily {
  /** A family id, `fam_…`: stable across the family's versions. */
  readonly id: string;
  /** The family's `id` in its YAML file. */
  readonly name: string;
  readonly version: number;
  /** Recomputed by the server from the reviewed content (decision 0401). */
  readonly content_hash: string;
  readonly reviewed_by: readonly string[];
  readonly description?: string;
  readonly parameters: { readonly [key: string]: unknown };
  readonly grant: { readonly [key: string]: unknown };
  readonly approval?: { readonly [key: string]: unknown };
  readonly examples?: ReadonlyArray<{ readonly [key: string]: unknown }>;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly pushed_at: string;
  readonly pushed_by: string;
  /** In the answer of `GET /v1/grant-families/{family_id}`: the family's version numbers, newest first (at most 100); numbers may skip, since a push may raise the version by more than one. */
  readonly versions?: readonly number[];
  /** In the answer of a push: whether this push made the version. */
  readonly created?: boolean;
}

export interface GrantFamilyBody {
  /** Stable name of the family. */
  readonly id: string;
  readonly version: number;
  readonly reviewed_by: readonly string[];
  readonly description?: string;
  readonly parameters: { readonly [key: string]: {
    readonly type: "int" | "string" | "bool";
    readonly description?: string;
  } & { readonly [member: string]: unknown } };
  readonly grant: {
    readonly agent_id: string;
    readonly principal_type: "human" | "team" | "service" | string;
    readonly principal_id: string;
    readonly scope: {
      /** Tool names; an entry `ns.*` covers every tool whose name starts with `ns.`. */
      readonly tool: readonly string[];
    };
    readonly budget_amount_minor?: number | string;
    readonly budget_currency?: string;
    readonly budget_count?: number | string;
    readonly ttl_hours?: number | string;
    readonly conditions?: {
      readonly clean_context?: boolean | string;
    };
    readonly policy?: string;
    readonly delegation_policy?: "none" | "attenuating" | string;
    readonly delegation_depth_max?: number | string;
    readonly audience?: string;
    readonly enforcement_mode?: "observe" | "enforce" | string;
  };
  readonly approval?: {
    /** Every grant of the family is born `pending_approval`. */
    readonly required?: boolean;
    /** A grant whose `budget_amount_minor` exceeds this is born `pending_approval`. */
    readonly above_budget_minor?: number;
    readonly reason?: string;
  };
  readonly examples?: ReadonlyArray<{
    readonly name: string;
    readonly parameters?: { readonly [key: string]: number | string | boolean };
    readonly action: {
      readonly tool: string;
      readonly amount_minor?: number;
      /** ISO 4217 currency code, e.g. `EUR`. */
      readonly currency?: string;
      readonly audience?: string;
      /** The action's own arguments (JSON values). */
      readonly args?: { readonly [key: string]: unknown };
      readonly context?: {
        readonly clean?: boolean;
      };
      /** Evaluate as if this human had approved the action. */
      readonly approver?: string | null;
      /** When the action happens (RFC 3339); absent: 2026-01-05T12:00:00Z. */
      readonly at?: string;
    };
    readonly usage?: {
      readonly uses?: number;
      readonly spent_minor?: number;
    };
    readonly expect: "allow" | "deny" | "gated" | "exhausted";
    readonly gate?: "grant" | "status" | "window" | "audience" | "certification" | "scope" | "conditions" | "policy" | "budget";
    readonly residual?: string;
  }>;
  /** SHA-256 of the reviewed content. Optional: the server computes it; when given, it must match. */
  readonly content_hash?: string;
}

export interface GrantFamilyList {
  readonly families: readonly GrantFamily[];
  readonly next_after: string | null;
}

export interface GrantIssueBody {
  /** An agent id, `agt_…`. */
  readonly agent_id: string;
  readonly principal_type: "human" | "team" | "service";
  readonly principal_id: string;
  readonly scope: {
    /** Tool names; an entry `ns.*` covers every tool whose name starts with `ns.`. */
    readonly tool: readonly string[];
  };
  /** Amount budget in minor units; absent means 0 (no spending). */
  readonly budget_amount_minor?: number;
  /** ISO 4217 currency code, e.g. `EUR`. */
  readonly budget_currency?: string;
  /** Absent means no use limit. */
  readonly budget_count?: number;
  /** Default: `24`. */
  readonly ttl_hours?: number;
  readonly conditions?: {
    /** The action must come from a clean context. */
    readonly clean_context?: boolean;
  };
  /** A policy expression (docs/policy-language.md). */
  readonly policy?: string;
  /** Default: `"none"`. */
  readonly delegation_policy?: "none" | "attenuating";
  /** Further delegation levels allowed below this grant; absent means no cap. */
  readonly delegation_depth_max?: number;
  readonly audience?: string;
  /** Least strict first: `observe` never refuses and records what `enforce` would have said. Default: `"enforce"`. */
  readonly enforcement_mode?: "observe" | "enforce";
  /** Born `pending_approval` until a human other than the issuer approves. */
  readonly require_approval?: boolean;
}

export interface GrantList {
  readonly grants: readonly Grant[];
  readonly next_after?: string | null;
}

export interface GrantPage {
  readonly grants: readonly Grant[];
  /** Pass back unchanged as `cursor` for the next page; null on the last page. Opaque: do not build or parse it. */
  readonly next_cursor: string | null;
}

export interface GrantPreview {
  readonly outcome: "allow" | "deny" | "exhausted" | "gated";
  /** In `observe` only: what `enforce` would say. */
  readonly would_outcome?: "allow" | "deny" | "exhausted" | "gated";
  /** Least strict first: `observe` never refuses and records what `enforce` would have said. */
  readonly enforcement_mode: "observe" | "enforce";
  /** The gate that decided a refusal; null when every gate passed. */
  readonly decided_by: string | null;
  readonly reason_code: string;
  readonly reason: string;
  readonly gates: readonly GateResult[];
  /** For `gated`: who could approve, as an expression over `approver`. */
  readonly residual?: string;
  readonly approver?: string | null;
  /** Whether the grant would be born `pending_approval`; the preview decides as if approved. */
  readonly approval_required: boolean;
  readonly warnings?: readonly Diagnostic[];
  /** Always false: a preview creates nothing. */
  readonly created: false;
}

export interface GrantPreviewBody {
  /** An agent id, `agt_…`. */
  readonly agent_id: string;
  readonly principal_type: "human" | "team" | "service";
  readonly principal_id: string;
  readonly scope: {
    /** Tool names; an entry `ns.*` covers every tool whose name starts with `ns.`. */
    readonly tool: readonly string[];
  };
  /** Amount budget in minor units; absent means 0 (no spending). */
  readonly budget_amount_minor?: number;
  /** ISO 4217 currency code, e.g. `EUR`. */
  readonly budget_currency?: string;
  /** Absent means no use limit. */
  readonly budget_count?: number;
  /** Default: `24`. */
  readonly ttl_hours?: number;
  readonly conditions?: {
    /** The action must come from a clean context. */
    readonly clean_context?: boolean;
  };
  /** A policy expression (docs/policy-language.md). */
  readonly policy?: string;
  /** Default: `"none"`. */
  readonly delegation_policy?: "none" | "attenuating";
  /** Further delegation levels allowed below this grant; absent means no cap. */
  readonly delegation_depth_max?: number;
  readonly audience?: string;
  /** Least strict first: `observe` never refuses and records what `enforce` would have said. Default: `"enforce"`. */
  readonly enforcement_mode?: "observe" | "enforce";
  /** Born `pending_approval` until a human other than the issuer approves. */
  readonly require_approval?: boolean;
  readonly action: SampleAction;
}

export interface GrantRevocation {
  /** A grant id, `grt_…`. */
  readonly grant_id: string;
  /** Exactly the ids this request revoked: the grant and its subtree. */
  readonly revoked: readonly string[];
  /** An RFC 3339 UTC time with milliseconds. */
  readonly revoked_at: string;
}

export interface GrantRevokeBody {
  readonly reason?: string;
}

export type GrantStatus = "pending_approval" | "active" | "revoked" | "expired";

export interface Health {
  readonly status: "ok" | "unavailable";
  readonly version?: string;
  readonly environment?: string;
}

export interface Key {
  readonly id: string;
  readonly identity: string;
  readonly kind: "human" | "service";
  readonly roles: ReadonlyArray<"admin" | "issuer" | "approver" | "certifier" | "auditor" | "agent" | "enforcer">;
  readonly agent_id?: string | null;
  /** For an `enforcer` key: the agents it may ask for; null for any other key. */
  readonly agent_ids?: readonly string[] | null;
  readonly email?: string | null;
  readonly status: "active" | "revoked";
  /** An RFC 3339 UTC time with milliseconds. */
  readonly created_at: string;
  readonly created_by?: string | null;
  readonly revoked_at?: string | null;
  readonly revoked_by?: string | null;
  readonly revocation_reason?: string | null;
}

export interface KeyCreateBody {
  /** An email for a human, a service name for a service. */
  readonly identity: string;
  readonly kind: "human" | "service";
  readonly roles: ReadonlyArray<"admin" | "issuer" | "approver" | "certifier" | "auditor" | "agent" | "enforcer">;
  /** Required with the `agent` role, refused without it. */
  readonly agent_id?: string;
  /** The agents an `enforcer` key may ask for through AuthZEN: required with that role, refused without it. */
  readonly agent_ids?: readonly string[];
  readonly email?: string;
}

export type KeyCreated = Key & {
  /** The secret, shown only in this response; the server keeps its hash. */
  readonly key: string;
};

export interface KeyList {
  readonly keys: readonly Key[];
  readonly next_after?: string | null;
}

export interface KeyRevokeBody {
  readonly reason?: string;
}

export interface LedgerConsistency {
  readonly first: number;
  readonly second: number;
  /** Base64 SHA-256 hashes in the order of RFC 9162 §2.1.4 (SUBPROOF); empty when `first` is 0 or equals `second`. */
  readonly proof: readonly string[];
}

export interface LedgerRecord {
  /** Position in the tree's chain, from 1. */
  readonly seq: number;
  /** A sealed ledger record, `led_…`. */
  readonly ledger_id: string;
  readonly kind: "decision" | "settlement";
  readonly grant_id: string;
  readonly agent_id: string;
  /** For a decision: the request as the agent sent it; null for a settlement. */
  readonly request?: { readonly [key: string]: unknown } | null;
  /** The key that asked, as sealed: the agent's own, or the enforcement point's (`enforcer`) that asked for it. */
  readonly key_id?: string | null;
  /** For a decision; null for a settlement. */
  readonly outcome: "allow" | "deny" | "exhausted" | "gated" | null;
  readonly would_outcome?: "allow" | "deny" | "exhausted" | "gated" | null;
  readonly mode?: "observe" | "enforce" | null;
  readonly decided_by?: string | null;
  readonly reason_code?: string | null;
  readonly reason?: string | null;
  readonly gates?: readonly GateResult[];
  readonly residual?: string | null;
  readonly approver?: string | null;
  readonly approval_id?: string | null;
  /** For a settlement only: its sealed fields (`decision_ledger_id`, `amount_minor`, `held_minor`, `released_minor`, `currency`, …). */
  readonly settlement?: { readonly [key: string]: unknown };
  /** When the record was sealed. */
  readonly decided_at: string;
  readonly prev_hash: string;
  readonly hash: string;
}

export interface LedgerVerification {
  readonly ok: boolean;
  /** Chains checked: one per delegation tree. */
  readonly trees: number;
  readonly records: number;
  /** The first broken link, in tree order then chain order, then in the Merkle log's order. */
  readonly broken: null | {
    readonly tree_id: string;
    readonly seq: number;
    readonly ledger_id: string;
    readonly problem: string;
    /** Set when the break is in the ledger's Merkle log: the leaf's position (`tree_id` is empty when the record is gone). */
    readonly position?: number;
  };
}

export interface PendingDecision {
  /** A sealed ledger record, `led_…`. */
  readonly ledger_id: string;
  readonly outcome: "gated";
  readonly enforcement_mode?: "observe" | "enforce";
  readonly decided_by?: "policy";
  readonly reason_code?: string;
  readonly reason?: string;
  readonly gates: readonly GateResult[];
  /** Who can approve, as an expression over `approver`. */
  readonly residual: string;
  /** Whether the residual admits the calling key's identity; an approval by anyone else is refused with 422 `approver_not_admitted`. */
  readonly caller_admitted: boolean;
  readonly grant_id: string;
  readonly agent_id: string;
  /** The agent's registered name. */
  readonly agent_name: string | null;
  /** The request as the agent sent it (`tool`, `amount_minor`, `currency`, `args`, …). */
  readonly request: {
    readonly tool?: string;
    readonly amount_minor?: number;
    readonly currency?: string;
    /** The action's own arguments, as the agent sent them: what the approver approves. */
    readonly args?: { readonly [key: string]: unknown };
  };
  readonly decided_at: string;
  /** Set once the agent stopped waiting (its call was refused): approving now helps only a later retry of the same action. */
  readonly abandoned: DecisionAbandonment | null;
}

export interface PendingDecisionList {
  readonly decisions: readonly PendingDecision[];
  /** Pass as `after` for the next (older) page; null on the last page. */
  readonly next_after: string | null;
}

/** RFC 9457 problem details, served as `application/problem+json`. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail?: string;
  readonly instance?: string;
  /** Stable; see the problem-code list. */
  readonly code: string;
  /** Body validation errors. */
  readonly errors?: ReadonlyArray<{
    readonly pointer?: string;
    readonly message?: string;
    readonly code?: string;
  }>;
  /** Policy errors with spans (`invalid_policy`), or a grant family's errors with line and column (`invalid_family`). */
  readonly diagnostics?: ReadonlyArray<Diagnostic | FamilyDiagnostic>;
  /** Every axis a delegate request widens. */
  readonly widenings?: ReadonlyArray<{
    readonly axis?: string;
    readonly parent?: unknown;
    readonly child?: unknown;
    readonly message?: string;
  }>;
}

export type Role = "admin" | "issuer" | "approver" | "certifier" | "auditor" | "agent" | "enforcer";

export interface SampleAction {
  readonly tool: string;
  readonly amount_minor?: number;
  /** ISO 4217 currency code, e.g. `EUR`. */
  readonly currency?: string;
  readonly audience?: string;
  /** The action's own arguments (JSON values). */
  readonly args?: { readonly [key: string]: unknown };
  readonly context?: {
    readonly clean?: boolean;
  };
  /** Evaluate as if this human had approved the action. */
  readonly approver?: string | null;
}

export interface SettleBody {
  /** What was actually spent: at most the amount held; the rest is released. */
  readonly amount_minor: number;
  /** A fresh value per request, echoed in the signed statement (`signature.statement.nonce`): an answer to another request cannot pass for this one. */
  readonly nonce?: string;
}

export interface Settlement {
  /** The settlement's own sealed record. */
  readonly ledger_id: string;
  /** A sealed ledger record, `led_…`. */
  readonly decision_ledger_id: string;
  readonly grant_id?: string;
  readonly currency?: string | null;
  /** Captured. */
  readonly amount_minor: number;
  /** What the decision held. */
  readonly held_minor?: number;
  /** Held but not captured, released at once. */
  readonly released_minor: number;
  readonly settled_at: string;
  readonly signature: Signature;
}

/** The server's signature of the answer's `statement`, by the key `kid` of GET /v1/signing-keys. With `v: 2` (every new answer), `value` is Ed25519 over the text `agent-authority answer batch v2`, `tree_size` and `root`, each followed by a newline: the root of the RFC 9162 Merkle tree of the statements answered together, whose leaf `leaf_index` is SHA-256(0x00 ‖ the canonical JSON (RFC 8785) of `statement`) and `path` its inclusion path. Without `v` (answers of earlier versions), `value` is Ed25519 over the canonical JSON of `statement`. */
export interface Signature {
  /** The signature's form: 2, a batch signature; absent, one signature per statement. */
  readonly v?: 2;
  readonly alg: "EdDSA";
  /** The signing key: its JWK thumbprint (RFC 7638). */
  readonly kid: string;
  readonly statement: {
    readonly type: "authority.decision.v1";
    readonly ledger_id: string;
    readonly outcome: "allow" | "deny" | "exhausted" | "gated";
    readonly grant_id: string;
    readonly agent_id: string;
    readonly tool: string;
    readonly amount_minor: number | null;
    readonly currency: string | null;
    /** SHA-256 (hex) of the canonical JSON (RFC 8785) of `args` as sent; null without args. */
    readonly args_sha256: string | null;
    readonly decided_at: string;
    /** The request's `nonce`; null when it sent none. */
    readonly nonce: string | null;
  } | {
    readonly type: "authority.settlement.v1";
    readonly ledger_id: string;
    readonly decision_ledger_id: string;
    readonly grant_id: string;
    readonly agent_id: string;
    readonly tool: string;
    readonly amount_minor: number;
    readonly held_minor: number;
    readonly released_minor: number;
    readonly currency: string | null;
    readonly settled_at: string;
    readonly nonce: string | null;
  };
  /** How many statements were signed together (`v: 2`). */
  readonly tree_size?: number;
  /** The statement's leaf in the batch's tree (`v: 2`). */
  readonly leaf_index?: number;
  /** The RFC 9162 inclusion path from the statement's leaf to `root`, lowest first, base64url (`v: 2`). */
  readonly path?: readonly string[];
  /** The batch tree's root hash, base64url (`v: 2`). */
  readonly root?: string;
  /** The 64-byte signature in base64url without padding. */
  readonly value: string;
}

export interface SigningKey {
  readonly kty: "OKP";
  readonly crv: "Ed25519";
  /** The public key (RFC 8037). */
  readonly x: string;
  readonly kid: string;
  readonly alg: "EdDSA";
  readonly use: "sig";
  /** `active` signs now; a `retired` key signs nothing new and stays listed so that its signatures verify. */
  readonly status: "active" | "retired";
  readonly created_at: string;
  readonly retired_at: string | null;
}

export interface SigningKeyRotateBody {
  /** The active key's kid, as GET /v1/signing-keys lists it. */
  readonly retire_kid: string;
  /** Why, for the log. */
  readonly reason?: string;
}

/** A JSON Web Key Set (RFC 7517) of every key the server has signed with. */
export interface SigningKeySet {
  readonly keys: readonly SigningKey[];
}

/** Half-open UTF-16 offsets into the policy text. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** A page of one tree's sealed records; `verification` recomputes the tree's whole chain, not only this page. */
export interface TreeLedger {
  /** The root grant of the delegation tree. */
  readonly tree_id: string;
  readonly records: readonly LedgerRecord[];
  readonly verification: LedgerVerification;
  /** The last `seq` of this page, as text, to pass as `after`; null on the last page. */
  readonly next_after: string | null;
}

export interface Trip {
  readonly id: string;
  /** A breaker id, `brk_…`. */
  readonly breaker_id: string;
  /** A contract id, `ctr_…`. */
  readonly contract_id?: string;
  /** The decision after which the contract entered `breached`. */
  readonly ledger_id: string;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly at: string;
  /** In `observe` nothing was changed. */
  readonly mode: "observe" | "armed";
  readonly action: "notify" | "revoke";
  /** Whether the action was performed (armed) or only recorded (observe). */
  readonly performed?: boolean;
  /** Who declared the contract. */
  readonly declared_by: string;
  readonly armed_by?: string | null;
  readonly n?: number;
  readonly successes?: number;
  readonly interval?: {
    readonly lower?: number;
    readonly upper?: number;
  };
  /** Revoked, or for `observe` the ones it would have revoked. */
  readonly grant_ids: readonly string[];
  readonly finding_id?: string | null;
}

export interface Webhook {
  /** A webhook id, `whk_…`. */
  readonly id: string;
  readonly url: string;
  readonly event_types: readonly string[];
  readonly status: "active" | "paused" | "deleted";
  readonly description?: string | null;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly created_at: string;
  readonly created_by: string;
}

export interface WebhookActionBody {
  readonly reason?: string;
}

export interface WebhookCreateBody {
  /** An absolute `http` or `https` URL. */
  readonly url: string;
  /** The event types delivered to it. */
  readonly event_types: ReadonlyArray<"grant.issued" | "grant.approved" | "grant.delegated" | "grant.revoked" | "grant.enforcement_changed" | "decision.gated" | "decision.approved" | "certificate.issued" | "certificate.revoked" | "contract.breached" | "breaker.tripped" | "breaker.armed" | "finding.raised" | "webhook.delivery_dead_lettered">;
  readonly description?: string;
}

export interface WebhookCreated {
  /** A webhook id, `whk_…`. */
  readonly id: string;
  readonly url: string;
  readonly event_types: readonly string[];
  readonly status: "active" | "paused" | "deleted";
  readonly description?: string | null;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly created_at: string;
  readonly created_by: string;
  /** The Standard Webhooks signing secret: in this answer only. */
  readonly secret: string;
}

export interface WebhookDelivery {
  /** A webhook delivery id, `whd_…`. */
  readonly id: string;
  /** A webhook id, `whk_…`. */
  readonly webhook_id: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly sequence: number;
  /** `dead`: every retry failed (dead-lettered). */
  readonly status: "pending" | "delivered" | "dead";
  readonly attempts: number;
  readonly next_attempt_at?: string | null;
  readonly last_status?: number | null;
  readonly last_error?: string | null;
  /** An RFC 3339 UTC time with milliseconds. */
  readonly created_at: string;
  readonly delivered_at?: string | null;
}

export interface WebhookDeliveryList {
  readonly deliveries: readonly WebhookDelivery[];
  readonly next_after: string | null;
}

export interface WebhookList {
  readonly webhooks: readonly Webhook[];
}

/** The stable problem codes of v1; branch on these, never on a title or detail. */
export type ProblemCode =
  | "agent_not_found"
  | "already_settled"
  | "approval_not_found"
  | "approver_not_admitted"
  | "body_too_deep"
  | "body_too_large"
  | "breaker_already_armed"
  | "breaker_not_armed"
  | "breaker_not_found"
  | "certificate_already_revoked"
  | "certificate_not_found"
  | "certification_required"
  | "contention"
  | "contract_not_found"
  | "decision_already_approved"
  | "decision_not_found"
  | "decision_not_gated"
  | "delegation_chain_too_long"
  | "delegation_widens"
  | "delivery_not_found"
  | "family_not_found"
  | "family_parameters_invalid"
  | "family_version_conflict"
  | "forbidden"
  | "grant_already_revoked"
  | "grant_not_active"
  | "grant_not_found"
  | "grant_not_pending"
  | "headers_too_large"
  | "hold_expired"
  | "human_required"
  | "idempotency_key_reused"
  | "internal_error"
  | "invalid_body"
  | "invalid_cursor"
  | "invalid_family"
  | "invalid_id"
  | "invalid_idempotency_key"
  | "invalid_key_request"
  | "invalid_last_event_id"
  | "invalid_policy"
  | "invalid_query"
  | "invalid_text"
  | "key_already_revoked"
  | "key_not_found"
  | "key_secret_shown_once"
  | "last_admin_key"
  | "malformed_json"
  | "malformed_request"
  | "method_not_allowed"
  | "not_an_escalation"
  | "not_ready"
  | "nothing_held"
  | "request_timeout"
  | "route_not_found"
  | "self_approval"
  | "settle_exceeds_hold"
  | "signing_key_not_active"
  | "too_many_streams"
  | "too_many_webhooks"
  | "trip_count_mismatch"
  | "unauthenticated"
  | "unavailable"
  | "unknown_field"
  | "unsupported_media_type"
  | "webhook_not_active"
  | "webhook_not_found"
  | "webhook_url_refused";
