// Events and webhooks' tables: the outbox, subscriptions and deliveries.

export { EVENT_TABLES, eventsMigrationSql, EventSql, SEQUENCE_PENDING_SQL } from "./event-sql.js";
export type { AttemptResult, DeliveryRow, EventStore, StoredEvent, WebhookRow } from "./event-sql.js";
