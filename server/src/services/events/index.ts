// Events and webhooks: the outbox every effect writes, the event feed, webhook subscriptions and their dispatcher.

export { EVENT_LIMITS, EventFeed } from "./event-feed.js";
export { emitEvent, eventView } from "./events.js";
export { retryDelayMs, signMessage, WEBHOOK_DELIVERY_LIMITS, WebhookDispatcher } from "./webhook-dispatcher.js";
export { changeWebhook, createWebhook, getWebhook, listDeliveries, listWebhooks, redeliver } from "./webhooks.js";
export type { WebhookCreateBody } from "./webhooks.js";
