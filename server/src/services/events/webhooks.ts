// Webhooks (docs/events.md): subscribing a URL to event types with a signing secret shown once,
// listing, pausing, resuming, deleting, the deliveries of each and redelivery by hand. Delivery
// itself is the dispatcher's (webhook-dispatcher.ts).

import { randomBytes } from "node:crypto";
import { isIP } from "node:net";
import { WEBHOOK_LIMITS, type EventType } from "@agent-authority/api";
import { Refusal } from "../common/index.js";
import { newId } from "../../ids.js";
import type { DeliveryRow, WebhookRow } from "../../store/events/index.js";
import type { Caller, ServiceContext } from "../common/index.js";
import { iso } from "../common/index.js";

const WEBHOOK_ID = /^whk_[0-9a-hjkmnp-tv-z]{26}$/;
const DELIVERY_ID = /^whd_[0-9a-hjkmnp-tv-z]{26}$/;

/**
 * Whether an address is one a webhook must not reach unless private networks are allowed:
 * loopback, private (RFC 1918, RFC 4193), link-local (cloud metadata lives there), unspecified,
 * carrier-grade NAT, and IPv4 mapped into IPv6 of any of these (decision 0705).
 */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  // The URL parser writes a mapped IPv4 address in hex (`::ffff:7f00:1`): read it back as IPv4.
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  const fromHex =
    hex === null
      ? undefined
      : [parseInt(hex[1]!, 16) >> 8, parseInt(hex[1]!, 16) & 255, parseInt(hex[2]!, 16) >> 8, parseInt(hex[2]!, 16) & 255].join(".");
  const ip = mapped?.[1] ?? fromHex ?? address;
  if (isIP(ip) === 4) {
    const [a, b] = ip.split(".").map(Number) as [number, number];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127) ||
      a >= 224
    );
  }
  if (isIP(ip) === 6) {
    const lower = ip.toLowerCase();
    return lower === "::" || lower === "::1" || /^f[cd]/.test(lower) || /^fe[89ab]/.test(lower) || /^ff/.test(lower);
  }
  return false;
}

/** The URL as the server will call it, or 422 `webhook_url_refused`. */
export function checkWebhookUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Refusal("webhook_url_refused", "the webhook URL is not an absolute URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new Refusal("webhook_url_refused", `a webhook URL must be \`http\` or \`https\`, not \`${url.protocol.slice(0, 20)}\``);
  if (url.username !== "" || url.password !== "")
    throw new Refusal("webhook_url_refused", "a webhook URL must not carry credentials; the signature authenticates the server");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!allowPrivate && (host === "localhost" || host.endsWith(".localhost") || isPrivateAddress(host))) {
    throw new Refusal(
      "webhook_url_refused",
      "the webhook URL names a loopback, private or link-local address; set AUTHORITY_WEBHOOK_ALLOW_PRIVATE=on to allow it",
    );
  }
  return url;
}

export function webhookView(w: WebhookRow): Record<string, unknown> {
  return {
    id: w.id,
    url: w.url,
    event_types: [...w.event_types],
    status: w.status,
    description: w.description,
    created_at: iso(w.created_at),
    created_by: w.created_by,
  };
}

export function deliveryView(d: DeliveryRow): Record<string, unknown> {
  return {
    id: d.id,
    webhook_id: d.webhook_id,
    event_id: d.event_id,
    event_type: d.event_type,
    sequence: d.event_seq,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.next_attempt_at === null ? null : iso(d.next_attempt_at),
    last_status: d.last_status,
    last_error: d.last_error,
    created_at: iso(d.created_at),
    delivered_at: d.delivered_at === null ? null : iso(d.delivered_at),
  };
}

async function findWebhook(ctx: ServiceContext, id: string): Promise<WebhookRow> {
  if (!WEBHOOK_ID.test(id)) throw new Refusal("invalid_id", `\`webhook_id\` must look like \`whk_…\`, got \`${id.slice(0, 80)}\``);
  const webhook = await ctx.store.eventPath().getWebhook(id);
  if (webhook === undefined) throw new Refusal("webhook_not_found", `no webhook \`${id}\``);
  return webhook;
}

export interface WebhookCreateBody {
  readonly url: string;
  readonly event_types: readonly EventType[];
  readonly description?: string;
}

/** `POST /v1/webhooks`: deliveries start with the events committed after it; the secret is answered once. */
export async function createWebhook(ctx: ServiceContext, caller: Caller, body: WebhookCreateBody): Promise<Record<string, unknown>> {
  const url = checkWebhookUrl(body.url, ctx.webhookAllowPrivate === true);
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  const now = ctx.now();
  const row = await ctx.store.transaction(async (tx) => {
    const events = tx.eventPath();
    if ((await events.countWebhooks()) >= WEBHOOK_LIMITS.webhooksMax) {
      throw new Refusal("too_many_webhooks", `the server holds at most ${WEBHOOK_LIMITS.webhooksMax} webhooks; delete one first`);
    }
    const webhook: WebhookRow = {
      id: newId("whk", now),
      url: url.href,
      event_types: [...new Set(body.event_types)],
      secret,
      status: "active",
      description: body.description ?? null,
      cursor_seq: await events.lastSeq(),
      created_at: now,
      created_by: caller.identity,
    };
    await events.insertWebhook(webhook);
    return webhook;
  });
  return { ...webhookView(row), secret };
}

export async function listWebhooks(ctx: ServiceContext): Promise<{ webhooks: Record<string, unknown>[] }> {
  return { webhooks: (await ctx.store.eventPath().listWebhooks()).map(webhookView) };
}

export async function getWebhook(ctx: ServiceContext, id: string): Promise<Record<string, unknown>> {
  return webhookView(await findWebhook(ctx, id));
}

/** Pause, resume or delete: a move between states, 409 `webhook_not_active` from any other. */
export async function changeWebhook(
  ctx: ServiceContext,
  caller: Caller,
  id: string,
  action: "pause" | "resume" | "delete",
): Promise<Record<string, unknown>> {
  await findWebhook(ctx, id);
  const moves = {
    pause: { from: ["active"], to: "paused" },
    resume: { from: ["paused"], to: "active" },
    delete: { from: ["active", "paused"], to: "deleted" },
  } as const;
  const move = moves[action];
  const events = ctx.store.eventPath();
  if (!(await events.setWebhookStatus(id, move.from, move.to, ctx.now(), caller.identity))) {
    throw new Refusal(
      "webhook_not_active",
      `webhook \`${id}\` cannot be ${action === "resume" ? "resumed" : `${action}d`} from its present state`,
    );
  }
  ctx.webhookNudge?.();
  return webhookView((await events.getWebhook(id, true))!);
}

export async function listDeliveries(
  ctx: ServiceContext,
  id: string,
  after: string | undefined,
  limit: number,
): Promise<{ deliveries: Record<string, unknown>[]; next_after: string | null }> {
  await findWebhook(ctx, id);
  const rows = await ctx.store.eventPath().listDeliveries(id, after, limit);
  return { deliveries: rows.map(deliveryView), next_after: rows.length === limit ? rows[rows.length - 1]!.id : null };
}

/** Redelivery by hand: the delivery is due again now, with its `webhook-id` unchanged. */
export async function redeliver(ctx: ServiceContext, webhookId: string, deliveryId: string): Promise<Record<string, unknown>> {
  await findWebhook(ctx, webhookId);
  if (!DELIVERY_ID.test(deliveryId))
    throw new Refusal("invalid_id", `\`delivery_id\` must look like \`whd_…\`, got \`${deliveryId.slice(0, 80)}\``);
  const events = ctx.store.eventPath();
  const delivery = await events.getDelivery(deliveryId);
  if (delivery === undefined || delivery.webhook_id !== webhookId)
    throw new Refusal("delivery_not_found", `no delivery \`${deliveryId}\` of webhook \`${webhookId}\``);
  await events.redeliver(deliveryId, ctx.now());
  ctx.webhookNudge?.();
  return deliveryView((await events.getDelivery(deliveryId))!);
}
