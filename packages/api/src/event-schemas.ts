// Events (docs/events.md): every type with the roles that may read it and the schema of its
// payload, the envelope the stream and webhooks carry, and the bodies and answers of webhooks.

import { API_LIMITS } from "./limits.js";

/** The roles of endpoints.ts, spelled here so that this module imports no other schema module (no cycle); the server checks they agree. */
type Role = "admin" | "issuer" | "approver" | "certifier" | "auditor" | "agent" | "enforcer";

type Schema = Readonly<Record<string, unknown>>;

const idBody = "[0-9a-hjkmnp-tv-z]{26}";
const idOf = (prefix: string, what: string): Schema => ({
  type: "string",
  pattern: `^${prefix}_${idBody}$`,
  description: `${what}, \`${prefix}_…\`.`,
});
const timestamp = { type: "string", description: "An RFC 3339 UTC time with milliseconds." } as const;
const nullableString = { type: ["string", "null"] } as const;
const grantId = idOf("grt", "A grant id");
const agentId = idOf("agt", "An agent id");
const ledgerId = idOf("led", "A ledger id");
const breakerId = idOf("brk", "A breaker id");
const contractId = idOf("ctr", "A contract id");
const webhookId = idOf("whk", "A webhook id");
const deliveryId = idOf("whd", "A webhook delivery id");
const mode = { type: "string", enum: ["observe", "enforce"] } as const;

/** Who may read the events of a type on the stream: the roles of the endpoints that read the same records. */
const GRANT_READERS: readonly Role[] = ["admin", "issuer", "approver", "certifier", "auditor", "agent"];
const DECISION_READERS: readonly Role[] = ["admin", "approver", "auditor", "agent"];
const OVERSIGHT_READERS: readonly Role[] = ["admin", "issuer", "approver", "certifier", "auditor"];
const ADMIN_ONLY: readonly Role[] = ["admin"];

function payload(required: readonly string[], properties: Record<string, unknown>, description: string): Schema {
  return { type: "object", required: [...required], properties, description };
}

/**
 * Every event type: who may read it and what its `data` holds. An `agent` key reads only the
 * events of its own agent (their `agent_id`). Types are added within v1, never removed.
 */
export const EVENT_TYPES = Object.freeze({
  "grant.issued": {
    readers: GRANT_READERS,
    data: payload(
      ["grant_id", "agent_id", "status", "enforcement_mode", "issued_by"],
      {
        grant_id: grantId,
        agent_id: agentId,
        status: { type: "string", enum: ["pending_approval", "active"] },
        enforcement_mode: mode,
        issued_by: { type: "string" },
        approval_required: { type: "boolean" },
        family_id: nullableString,
        family_version: { type: ["integer", "null"] },
      },
      "A grant was issued (or instantiated from a family); `status` `pending_approval` means it waits for a human.",
    ),
  },
  "grant.approved": {
    readers: GRANT_READERS,
    data: payload(
      ["grant_id", "agent_id", "approved_by"],
      {
        grant_id: grantId,
        agent_id: agentId,
        approved_by: { type: "string" },
        note: nullableString,
      },
      "A pending grant was approved and is active.",
    ),
  },
  "grant.delegated": {
    readers: GRANT_READERS,
    data: payload(
      ["grant_id", "parent_id", "agent_id", "issued_by"],
      {
        grant_id: grantId,
        parent_id: grantId,
        root_id: grantId,
        agent_id: agentId,
        issued_by: { type: "string" },
        enforcement_mode: mode,
      },
      "A narrower or equal child grant was delegated.",
    ),
  },
  "grant.revoked": {
    readers: GRANT_READERS,
    data: payload(
      ["grant_id", "agent_id", "revoked", "revoked_by"],
      {
        grant_id: grantId,
        agent_id: agentId,
        revoked: {
          type: "array",
          items: grantId,
          description: "Every grant of the subtree this revocation revoked, the grant itself first.",
        },
        revoked_by: { type: "string", description: "The identity, or the breaker id when a breaker revoked." },
        reason: nullableString,
        breaker_id: nullableString,
        trip_id: nullableString,
      },
      "A grant was revoked with its whole delegation subtree.",
    ),
  },
  "grant.enforcement_changed": {
    readers: GRANT_READERS,
    data: payload(
      ["grant_id", "agent_id", "from", "to", "changed_by"],
      {
        grant_id: grantId,
        agent_id: agentId,
        from: mode,
        to: mode,
        changed_by: { type: "string" },
      },
      "A grant's enforcement mode was made stricter.",
    ),
  },
  "decision.gated": {
    readers: DECISION_READERS,
    data: payload(
      ["ledger_id", "grant_id", "agent_id", "tool"],
      {
        ledger_id: ledgerId,
        grant_id: grantId,
        agent_id: agentId,
        tool: { type: "string" },
        amount_minor: { type: ["integer", "null"] },
        currency: nullableString,
        residual: nullableString,
        decided_by: {
          type: "string",
          description: "The gate that gated it: `policy` (a human approves the action) or `status` (the grant awaits approval).",
        },
      },
      "A decision was `gated`: it waits for a human approval (`POST /v1/decisions/{ledger_id}/approve`).",
    ),
  },
  "decision.approved": {
    readers: DECISION_READERS,
    data: payload(
      ["ledger_id", "approval_id", "grant_id", "agent_id", "approver"],
      {
        ledger_id: ledgerId,
        approval_id: { type: "string" },
        grant_id: grantId,
        agent_id: agentId,
        approver: { type: "string" },
        tool: { type: "string" },
        amount_ceiling_minor: { type: "integer" },
        currency: nullableString,
        expires_at: timestamp,
      },
      "A human approved a gated decision; the agent may retry with `approval_id`.",
    ),
  },
  "certificate.issued": {
    readers: OVERSIGHT_READERS,
    data: payload(
      ["certificate_id", "agent_id", "environment", "issued_by"],
      {
        certificate_id: idOf("crt", "A certificate id"),
        agent_id: agentId,
        environment: { type: "string" },
        issued_by: { type: "string" },
        supersedes: nullableString,
      },
      "An agent was certified; `supersedes` names the certificate it replaced, revoked by field.",
    ),
  },
  "certificate.revoked": {
    readers: OVERSIGHT_READERS,
    data: payload(
      ["certificate_id", "agent_id", "environment", "revoked_by"],
      {
        certificate_id: idOf("crt", "A certificate id"),
        agent_id: agentId,
        environment: { type: "string" },
        revoked_by: { type: "string" },
        reason: nullableString,
        superseded_by: nullableString,
      },
      "A certificate was revoked (by hand, or superseded by a new one).",
    ),
  },
  "contract.breached": {
    readers: OVERSIGHT_READERS,
    data: payload(
      ["contract_id", "agent_id", "metric", "ceiling", "declared_by", "ledger_id"],
      {
        contract_id: contractId,
        agent_id: agentId,
        metric: { type: "string" },
        ceiling: { type: "number" },
        declared_by: { type: "string" },
        ledger_id: ledgerId,
        n: { type: "integer" },
        successes: { type: "integer" },
        lower_bound: { type: "number" },
      },
      "A contract watched by a breaker entered `breached` after the decision `ledger_id`.",
    ),
  },
  "breaker.tripped": {
    readers: OVERSIGHT_READERS,
    data: payload(
      ["breaker_id", "trip_id", "agent_id", "contract_id", "action", "mode", "performed", "would", "declared_by"],
      {
        breaker_id: breakerId,
        trip_id: { type: "string" },
        agent_id: agentId,
        contract_id: contractId,
        ledger_id: ledgerId,
        action: { type: "string", enum: ["notify", "revoke"] },
        mode: { type: "string", enum: ["observe", "armed"] },
        performed: { type: "boolean", description: "Whether the action was performed (armed) or only recorded (observe)." },
        would: {
          type: "object",
          description: "What the action does, or in `observe` would have done: the grants it revokes, or that it raises a finding.",
          properties: { revoke: { type: "array", items: grantId }, raise_finding: { type: "boolean" } },
        },
        declared_by: { type: "string", description: "The human who declared the contract." },
        grant_ids: { type: "array", items: grantId },
        finding_id: nullableString,
      },
      "A breaker tripped: its contract entered `breached`.",
    ),
  },
  "breaker.armed": {
    readers: OVERSIGHT_READERS,
    data: payload(
      ["breaker_id", "agent_id", "contract_id", "action", "armed_by", "basis", "expecting_trips"],
      {
        breaker_id: breakerId,
        agent_id: agentId,
        contract_id: contractId,
        action: { type: "string", enum: ["notify", "revoke"] },
        armed_by: { type: "string" },
        basis: { type: "string" },
        expecting_trips: { type: "integer" },
      },
      "A breaker was armed: its next trip performs its action.",
    ),
  },
  "finding.raised": {
    readers: OVERSIGHT_READERS,
    data: payload(
      ["finding_id", "kind", "agent_id", "breaker_id", "trip_id", "message"],
      {
        finding_id: { type: "string" },
        kind: { type: "string" },
        agent_id: agentId,
        breaker_id: breakerId,
        trip_id: { type: "string" },
        message: { type: "string" },
      },
      "An armed `notify` breaker raised a finding.",
    ),
  },
  "webhook.delivery_dead_lettered": {
    readers: ADMIN_ONLY,
    data: payload(
      ["webhook_id", "delivery_id", "event_id", "event_type", "attempts"],
      {
        webhook_id: webhookId,
        delivery_id: deliveryId,
        event_id: { type: "string" },
        event_type: { type: "string" },
        attempts: { type: "integer" },
        last_error: nullableString,
      },
      "A webhook delivery failed every retry and is dead-lettered; it can be redelivered by hand.",
    ),
  },
} as const satisfies Record<string, { readers: readonly Role[]; data: Schema }>);

export type EventType = keyof typeof EVENT_TYPES;
export const EVENT_TYPE_NAMES: readonly EventType[] = Object.freeze(Object.keys(EVENT_TYPES) as EventType[]);

/** Schema component name of a type's event: `grant.enforcement_changed` → `EventGrantEnforcementChanged`. */
export function eventSchemaName(type: EventType): string {
  return `Event${type
    .split(/[._]/)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join("")}`;
}

/** One event as the stream and webhooks carry it, for one type. */
function eventSchemaOf(type: EventType): Schema & { $id: string } {
  return {
    $id: eventSchemaName(type),
    title: eventSchemaName(type),
    type: "object",
    required: ["id", "type", "sequence", "time", "subject", "data"],
    properties: {
      id: { type: "string", pattern: `^evn_${idBody}$`, description: "The event's id, `evn_…`." },
      type: { const: type },
      sequence: {
        type: "integer",
        minimum: 1,
        description: "Increasing in commit order across the server's replicas; the stream's `id:`.",
      },
      time: timestamp,
      subject: { type: "string", description: "The id of the record the event is about." },
      data: EVENT_TYPES[type].data,
    },
  };
}

export const eventSchemas = EVENT_TYPE_NAMES.map(eventSchemaOf);

/** Any event: one of the types, told apart by `type`. */
export const eventSchema = {
  $id: "Event",
  title: "Event",
  description: "An event as `GET /v1/events` sends it in `data:` and a webhook receives it as its body.",
  oneOf: EVENT_TYPE_NAMES.map((type) => ({ $ref: eventSchemaName(type) })),
} as const;

export const WEBHOOK_LIMITS = Object.freeze({
  urlCharsMax: 2_048,
  /** Webhooks registered at once (paused ones included, deleted ones not). */
  webhooksMax: 100,
  descriptionCharsMax: 500,
});

/** The body of `POST /v1/webhooks`. */
export const webhookCreateBodySchema = {
  $id: "WebhookCreateBody",
  title: "WebhookCreateBody",
  type: "object",
  additionalProperties: false,
  required: ["url", "event_types"],
  properties: {
    url: { type: "string", minLength: 1, maxLength: WEBHOOK_LIMITS.urlCharsMax, description: "An absolute `http` or `https` URL." },
    event_types: {
      type: "array",
      minItems: 1,
      maxItems: EVENT_TYPE_NAMES.length,
      uniqueItems: true,
      items: { type: "string", enum: [...EVENT_TYPE_NAMES] },
      description: "The event types delivered to it.",
    },
    description: { type: "string", maxLength: WEBHOOK_LIMITS.descriptionCharsMax },
  },
} as const;

export const webhookSchema = {
  $id: "Webhook",
  title: "Webhook",
  type: "object",
  required: ["id", "url", "event_types", "status", "created_at", "created_by"],
  properties: {
    id: webhookId,
    url: { type: "string" },
    event_types: { type: "array", items: { type: "string" } },
    status: { type: "string", enum: ["active", "paused", "deleted"] },
    description: nullableString,
    created_at: timestamp,
    created_by: { type: "string" },
  },
} as const;

export const webhookCreatedSchema = {
  $id: "WebhookCreated",
  title: "WebhookCreated",
  type: "object",
  required: [...webhookSchema.required, "secret"],
  properties: {
    ...webhookSchema.properties,
    secret: {
      type: "string",
      pattern: "^whsec_[A-Za-z0-9+/]+={0,2}$",
      description: "The Standard Webhooks signing secret: in this answer only.",
    },
  },
} as const;

export const webhookListSchema = {
  $id: "WebhookList",
  title: "WebhookList",
  type: "object",
  required: ["webhooks"],
  properties: { webhooks: { type: "array", items: { $ref: "Webhook" } } },
} as const;

export const webhookDeliverySchema = {
  $id: "WebhookDelivery",
  title: "WebhookDelivery",
  type: "object",
  required: ["id", "webhook_id", "event_id", "event_type", "sequence", "status", "attempts", "created_at"],
  properties: {
    id: deliveryId,
    webhook_id: webhookId,
    event_id: { type: "string" },
    event_type: { type: "string" },
    sequence: { type: "integer" },
    status: { type: "string", enum: ["pending", "delivered", "dead"], description: "`dead`: every retry failed (dead-lettered)." },
    attempts: { type: "integer" },
    next_attempt_at: { type: ["string", "null"] },
    last_status: { type: ["integer", "null"] },
    last_error: nullableString,
    created_at: timestamp,
    delivered_at: { type: ["string", "null"] },
  },
} as const;

export const webhookDeliveryListSchema = {
  $id: "WebhookDeliveryList",
  title: "WebhookDeliveryList",
  type: "object",
  required: ["deliveries", "next_after"],
  properties: { deliveries: { type: "array", items: { $ref: "WebhookDelivery" } }, next_after: nullableString },
} as const;

/** The bodies of pause, resume, delete and redeliver: nothing, or a reason. */
export const webhookActionBodySchema = {
  $id: "WebhookActionBody",
  title: "WebhookActionBody",
  type: "object",
  additionalProperties: false,
  properties: { reason: { type: "string", maxLength: API_LIMITS.textCharsMax } },
} as const;

export const WEBHOOK_SCHEMAS = [
  webhookSchema,
  webhookCreatedSchema,
  webhookListSchema,
  webhookDeliverySchema,
  webhookDeliveryListSchema,
  eventSchema,
  ...eventSchemas,
] as const;
