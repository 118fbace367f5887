// JSON Schemas of behavioural contracts and circuit breakers (docs/breakers.md): declaring a contract,
// creating, arming and disarming a breaker, the counterfactual and findings. Request schemas
// refuse unknown fields; response schemas allow them.

import { API_LIMITS } from "./limits.js";

const idBody = "[0-9a-hjkmnp-tv-z]{26}";
const contractId = { type: "string", pattern: `^ctr_${idBody}$`, description: "A contract id, `ctr_…`." } as const;
const breakerId = { type: "string", pattern: `^brk_${idBody}$`, description: "A breaker id, `brk_…`." } as const;
const metric = { type: "string", enum: ["refusal_rate", "deny_rate", "gated_rate", "exhausted_rate", "out_of_scope_rate"] } as const;
const fraction = { type: "number", minimum: 0, maximum: 1 } as const;
const timestamp = { type: "string", description: "An RFC 3339 UTC time with milliseconds." } as const;

/** The body of `POST /v1/agents/{agent_id}/contracts`; the declarer is the calling human. */
export const contractCreateBodySchema = {
  $id: "ContractCreateBody",
  title: "ContractCreateBody",
  type: "object",
  additionalProperties: false,
  required: ["metric", "ceiling"],
  properties: {
    metric: { ...metric, description: "The per-decision rate the contract bounds." },
    ceiling: { ...fraction, description: "The highest rate the contract allows, as a fraction." },
    window_decisions: { type: "integer", minimum: 1, maximum: 1_000_000, description: "The last N decisions of the agent." },
    window_hours: {
      type: "number",
      exclusiveMinimum: 0,
      maximum: 2_160,
      description: "The decisions of the last H hours (at most 90 days).",
    },
    description: { type: "string", maxLength: API_LIMITS.textCharsMax },
  },
  description: "Exactly one of `window_decisions` and `window_hours`.",
} as const;

/** The body of `POST /v1/agents/{agent_id}/breakers`; a breaker is always created in `observe`. */
export const breakerCreateBodySchema = {
  $id: "BreakerCreateBody",
  title: "BreakerCreateBody",
  type: "object",
  additionalProperties: false,
  required: ["contract_id", "action"],
  properties: {
    contract_id: contractId,
    action: {
      type: "string",
      enum: ["notify", "revoke"],
      description: "`notify` raises a finding; `revoke` revokes every grant of the agent with its subtree.",
    },
  },
} as const;

/** The body of `POST /v1/breakers/{breaker_id}/arm`. */
export const breakerArmBodySchema = {
  $id: "BreakerArmBody",
  title: "BreakerArmBody",
  type: "object",
  additionalProperties: false,
  required: ["basis", "expecting_trips"],
  properties: {
    basis: { type: "string", minLength: 1, maxLength: API_LIMITS.textCharsMax, description: "Why arming is justified." },
    expecting_trips: {
      type: "integer",
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: "The trip count of the last 90 days, as the counterfactual showed it.",
    },
  },
} as const;

/** The body of `POST /v1/breakers/{breaker_id}/disarm`. */
export const breakerDisarmBodySchema = {
  $id: "BreakerDisarmBody",
  title: "BreakerDisarmBody",
  type: "object",
  additionalProperties: false,
  properties: { reason: { type: "string", maxLength: API_LIMITS.textCharsMax } },
} as const;

export const contractSchema = {
  $id: "Contract",
  title: "Contract",
  type: "object",
  required: ["id", "agent_id", "metric", "ceiling", "declared_by", "declared_at", "status", "n", "successes", "rate", "interval"],
  properties: {
    id: contractId,
    agent_id: { type: "string" },
    metric,
    ceiling: fraction,
    window_decisions: { type: ["integer", "null"] },
    window_hours: { type: ["number", "null"] },
    description: { type: ["string", "null"] },
    declared_by: { type: "string", description: "The human who declared it; every trip carries this name." },
    declared_by_email: { type: ["string", "null"] },
    declared_at: timestamp,
    status: { type: "string", enum: ["breached", "within", "not_demonstrated"] },
    n: { type: "integer", description: "Decisions in the window now." },
    successes: { type: "integer", description: "Decisions in the window that count towards the metric." },
    rate: { type: ["number", "null"], description: "successes / n; null with no decision." },
    interval: {
      type: "object",
      required: ["lower", "upper"],
      properties: { lower: fraction, upper: fraction },
      description: "The 95% Wilson score interval of the rate.",
    },
    measured_at: timestamp,
  },
} as const;

export const contractListSchema = {
  $id: "ContractList",
  title: "ContractList",
  type: "object",
  required: ["contracts"],
  properties: { contracts: { type: "array", items: { $ref: "Contract" } } },
} as const;

export const tripSchema = {
  $id: "Trip",
  title: "Trip",
  type: "object",
  required: ["id", "breaker_id", "ledger_id", "at", "mode", "action", "declared_by", "grant_ids"],
  properties: {
    id: { type: "string" },
    breaker_id: breakerId,
    contract_id: contractId,
    ledger_id: { type: "string", description: "The decision after which the contract entered `breached`." },
    at: timestamp,
    mode: { type: "string", enum: ["observe", "armed"], description: "In `observe` nothing was changed." },
    action: { type: "string", enum: ["notify", "revoke"] },
    performed: { type: "boolean", description: "Whether the action was performed (armed) or only recorded (observe)." },
    declared_by: { type: "string", description: "Who declared the contract." },
    armed_by: { type: ["string", "null"] },
    n: { type: "integer" },
    successes: { type: "integer" },
    interval: { type: "object", properties: { lower: fraction, upper: fraction } },
    grant_ids: { type: "array", items: { type: "string" }, description: "Revoked, or for `observe` the ones it would have revoked." },
    finding_id: { type: ["string", "null"] },
  },
} as const;

export const breakerSchema = {
  $id: "Breaker",
  title: "Breaker",
  type: "object",
  required: ["id", "agent_id", "contract_id", "action", "mode", "created_at", "created_by", "trips"],
  properties: {
    id: breakerId,
    agent_id: { type: "string" },
    contract_id: contractId,
    action: { type: "string", enum: ["notify", "revoke"] },
    mode: { type: "string", enum: ["observe", "armed"] },
    created_at: timestamp,
    created_by: { type: "string" },
    armed_at: { type: ["string", "null"] },
    armed_by: { type: ["string", "null"] },
    basis: { type: ["string", "null"] },
    expecting_trips: { type: ["integer", "null"] },
    contract: { $ref: "Contract" },
    trips: { type: "array", items: { $ref: "Trip" } },
    history: {
      type: "array",
      items: {
        type: "object",
        properties: { kind: { type: "string" }, actor: { type: "string" }, at: timestamp, detail: { type: "object" } },
      },
    },
  },
} as const;

export const counterfactualSchema = {
  $id: "Counterfactual",
  title: "Counterfactual",
  type: "object",
  required: ["window_days", "breakers"],
  properties: {
    window_days: { type: "integer", const: 90 },
    breakers: {
      type: "array",
      items: {
        type: "object",
        required: ["breaker_id", "trips", "trip_times"],
        properties: { breaker_id: breakerId, trips: { type: "integer" }, trip_times: { type: "array", items: timestamp } },
      },
    },
  },
} as const;

export const findingListSchema = {
  $id: "FindingList",
  title: "FindingList",
  type: "object",
  required: ["findings", "next_after"],
  properties: {
    findings: {
      type: "array",
      items: {
        type: "object",
        required: ["id", "kind", "agent_id", "breaker_id", "trip_id", "at"],
        properties: {
          id: { type: "string" },
          kind: { type: "string", enum: ["breaker_trip"] },
          agent_id: { type: "string" },
          breaker_id: breakerId,
          trip_id: { type: "string" },
          at: timestamp,
          detail: { type: "object" },
        },
      },
    },
    next_after: { type: ["string", "null"] },
  },
} as const;
