// The webhook dispatcher: one per process (per replica). It queues each new event for every active
// webhook subscribed to its type (fan-out), leases due deliveries, sends each signed with the
// Standard Webhooks scheme, and records the attempt: delivered, retried later with exponential
// backoff and jitter, or dead-lettered with an event of its own (docs/events.md).
//
// INVARIANT (one-flight): a delivery is sent only under a lease committed before the send, and a
// lease lasts longer than an attempt may (the attempt timeout plus a margin). Leasing locks the
// webhook's row, so across replicas a delivery is in flight from one of them at a time and the
// per-webhook concurrency bound holds for all of them together. A process killed mid-send leaves
// a lease that expires; the delivery is then sent again, with the same `webhook-id` (at least once).

import { createHmac, randomBytes } from "node:crypto";
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { hostname } from "node:os";
import { EVENT_TYPE_NAMES } from "@agent-authority/api";
import type { Logger } from "../../log.js";
import { newId } from "../../ids.js";
import type { AttemptResult, DeliveryRow, StoredEvent, WebhookRow } from "../../store/events/index.js";
import type { Store } from "../../store/core/index.js";
import { emitEvent, eventView } from "./events.js";
import { isPrivateAddress } from "./webhooks.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const WEBHOOK_DELIVERY_LIMITS = Object.freeze({
  /**
   * The waits before the 2nd, 3rd, … attempt, in milliseconds; after the last the delivery is
   * dead-lettered. Together about 25.7 hours: a receiver down for a day still gets everything.
   */
  retryScheduleMsDefault: Object.freeze([
    5_000,
    30_000,
    2 * MINUTE,
    10 * MINUTE,
    30 * MINUTE,
    HOUR,
    2 * HOUR,
    4 * HOUR,
    8 * HOUR,
    10 * HOUR,
  ]),
  /**
   * Each wait is drawn from its value up to this fraction more, so that retries of many deliveries
   * part; never less, so the schedule's sum is the least time a delivery is retried for.
   */
  retryJitterFraction: 0.2,
  attemptTimeoutMsDefault: 10_000,
  attemptTimeoutMsMin: 100,
  attemptTimeoutMsMax: 60_000,
  /** How much longer a lease lasts than an attempt may: the attempt is certainly over when it expires. */
  leaseMarginMs: 5_000,
  /** Deliveries of one webhook in flight at once, from all replicas together. */
  concurrencyPerWebhookDefault: 4,
  concurrencyPerWebhookMax: 64,
  /** Deliveries in flight at once from this process, all webhooks together. */
  inFlightPerProcessMax: 256,
  /** Events queued for one webhook per fan-out pass. */
  fanOutPageEvents: 500,
  /** Bytes of a receiver's answer read (and discarded); the rest is not waited for. */
  responseBytesMax: 65_536,
  /** The text of an attempt's error kept on the delivery. */
  errorCharsMax: 500,
});

export interface DispatcherSettings {
  readonly retryScheduleMs: readonly number[];
  readonly attemptTimeoutMs: number;
  readonly concurrencyPerWebhook: number;
  readonly allowPrivate: boolean;
  /** How often it looks for due work when nothing woke it, in milliseconds. */
  readonly tickMs: number;
}

/** The Standard Webhooks signature of one message: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`. */
export function signMessage(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`;
}

/** The wait before the next attempt after `attempts` attempts, jittered; undefined when none is left. */
export function retryDelayMs(schedule: readonly number[], attempts: number, random: () => number = Math.random): number | undefined {
  const base = schedule[attempts - 1];
  if (base === undefined) return undefined;
  const spread = WEBHOOK_DELIVERY_LIMITS.retryJitterFraction;
  return Math.round(base * (1 + spread * random()));
}

/** Resolves names as usual but refuses a private address unless allowed: checked on the address connected to, so DNS cannot smuggle one in. */
function guardedLookup(allowPrivate: boolean): RequestOptions["lookup"] {
  return ((host: string, options: object, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(host, { ...options, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, []);
      const list = addresses as LookupAddress[];
      if (!allowPrivate && list.some((a) => isPrivateAddress(a.address)))
        return callback(new Error(`\`${host}\` resolves to a private address`), []);
      if ((options as { all?: boolean }).all === true) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  }) as RequestOptions["lookup"];
}

/** One POST of a signed message; answers the status, or an error text. */
function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  allowPrivate: boolean,
): Promise<{ status: number } | { error: string }> {
  return new Promise((resolve) => {
    const target = new URL(url);
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    let settled = false;
    const finish = (result: { status: number } | { error: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = send(
      target,
      {
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        lookup: guardedLookup(allowPrivate),
      },
      (res) => {
        let read = 0;
        res.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > WEBHOOK_DELIVERY_LIMITS.responseBytesMax) res.destroy();
        });
        res.on("end", () => finish({ status: res.statusCode ?? 0 }));
        res.on("close", () => finish({ status: res.statusCode ?? 0 }));
        res.on("error", () => finish({ status: res.statusCode ?? 0 }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish({ error: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    req.on("error", (error) => finish({ error: error.message }));
    req.end(body);
  });
}

export class WebhookDispatcher {
  readonly #store: Store;
  readonly #settings: DispatcherSettings;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #owner = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  readonly #inFlight = new Map<string, number>();
  #total = 0;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #again = false;
  #stopped = false;
  readonly #sends = new Set<Promise<void>>();

  constructor(store: Store, settings: DispatcherSettings, logger: Logger, now: () => number = Date.now) {
    this.#store = store;
    this.#settings = settings;
    this.#logger = logger;
    this.#now = now;
  }

  start(): void {
    this.#timer = setInterval(() => this.nudge(), this.#settings.tickMs);
    this.#timer.unref();
    this.nudge();
  }

  /** Stops leasing; waits for the attempts in flight to end (each within its timeout). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await Promise.allSettled([...this.#sends]);
  }

  /** Runs a pass now (or right after the one running). */
  nudge(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    void this.#pass()
      .catch((error: unknown) => {
        this.#logger.log("warn", "webhook dispatch pass failed", { error: error instanceof Error ? error.message : String(error) });
      })
      .finally(() => {
        this.#running = false;
        if (this.#again) {
          this.#again = false;
          this.nudge();
        }
      });
  }

  /**
   * Reads first, writes only when there is work: a transaction takes SQLite's write lock, which
   * the decision path waits for, so an idle pass must take none.
   */
  async #pass(): Promise<void> {
    const events = this.#store.eventPath();
    const webhooks = await events.listWebhooks();
    if (webhooks.length === 0) return;
    const last = await events.lastSeq();
    for (const webhook of webhooks) {
      if (this.#stopped) return;
      if (webhook.status !== "active") continue;
      if (webhook.cursor_seq < last) await this.#fanOut(webhook.id);
      if ((this.#inFlight.get(webhook.id) ?? 0) >= this.#settings.concurrencyPerWebhook) continue;
      const due = await events.nextDue(webhook.id, this.#now());
      if (due !== null && due <= this.#now()) await this.#lease(webhook);
    }
  }

  /** Queues the events committed since the webhook's cursor; one replica at a time (the row's lock). */
  async #fanOut(webhookId: string): Promise<void> {
    await this.#store.transaction(async (tx) => {
      const events = tx.eventPath();
      const webhook = await events.lockWebhookForFanOut(webhookId);
      if (webhook === undefined) return;
      // Read first: an event committed later has a higher sequence (INVARIANT commit-ordered-sequence).
      const upTo = await events.lastSeq();
      if (upTo <= webhook.cursor_seq) return;
      const types = webhook.event_types.filter((type) => (EVENT_TYPE_NAMES as readonly string[]).includes(type));
      const page = await events.eventsAfter(webhook.cursor_seq, WEBHOOK_DELIVERY_LIMITS.fanOutPageEvents, types, upTo);
      const cursor = page.length === WEBHOOK_DELIVERY_LIMITS.fanOutPageEvents ? page[page.length - 1]!.seq : upTo;
      // A webhook never receives the dead-lettering of its own deliveries: that would feed itself.
      const queued = page.filter((e) => !(e.type === "webhook.delivery_dead_lettered" && e.data["webhook_id"] === webhook.id));
      await events.addDeliveries(webhook, queued, cursor, this.#now(), () => newId("whd", this.#now()));
    });
  }

  async #lease(webhook: WebhookRow): Promise<void> {
    const limit = Math.min(
      this.#settings.concurrencyPerWebhook - (this.#inFlight.get(webhook.id) ?? 0),
      WEBHOOK_DELIVERY_LIMITS.inFlightPerProcessMax - this.#total,
    );
    if (limit <= 0) return;
    const now = this.#now();
    const leaseUntil = now + this.#settings.attemptTimeoutMs + WEBHOOK_DELIVERY_LIMITS.leaseMarginMs;
    const leased = await this.#store.transaction((tx) =>
      tx.eventPath().leaseDue(webhook.id, this.#owner, now, leaseUntil, limit, this.#settings.concurrencyPerWebhook),
    );
    for (const delivery of leased) {
      this.#inFlight.set(webhook.id, (this.#inFlight.get(webhook.id) ?? 0) + 1);
      this.#total += 1;
      const send = this.#attempt(webhook, delivery)
        .catch((error: unknown) => {
          this.#logger.log("warn", "webhook attempt not recorded", {
            delivery_id: delivery.id,
            error: error instanceof Error ? error.message : String(error),
          });
        })
        .finally(() => {
          this.#inFlight.set(webhook.id, (this.#inFlight.get(webhook.id) ?? 1) - 1);
          this.#total -= 1;
          this.#sends.delete(send);
          this.nudge();
        });
      this.#sends.add(send);
    }
  }

  async #attempt(webhook: WebhookRow, delivery: DeliveryRow): Promise<void> {
    const event = await this.#store.eventPath().eventBySeq(delivery.event_seq);
    if (event === undefined) throw new Error(`event ${delivery.event_seq} of delivery ${delivery.id} is missing`);
    const body = JSON.stringify(eventView(event));
    const timestamp = Math.floor(this.#now() / 1000);
    const headers = {
      "content-type": "application/json",
      "user-agent": "agent-authority-webhooks",
      "webhook-id": delivery.id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signMessage(webhook.secret, delivery.id, timestamp, body),
    };
    const answer = await post(webhook.url, headers, body, this.#settings.attemptTimeoutMs, this.#settings.allowPrivate);
    await this.#record(delivery, event, answer);
  }

  async #record(delivery: DeliveryRow, event: StoredEvent, answer: { status: number } | { error: string }): Promise<void> {
    const now = this.#now();
    if ("status" in answer && answer.status >= 200 && answer.status < 300) {
      await this.#store.transaction((tx) =>
        tx.eventPath().finishAttempt(delivery.id, this.#owner, { kind: "delivered", status: answer.status, at: now }),
      );
      return;
    }
    const status = "status" in answer ? answer.status : null;
    const error = ("error" in answer ? answer.error : `the receiver answered ${answer.status}`).slice(
      0,
      WEBHOOK_DELIVERY_LIMITS.errorCharsMax,
    );
    const wait = retryDelayMs(this.#settings.retryScheduleMs, delivery.attempts);
    const result: AttemptResult =
      wait === undefined ? { kind: "dead", status, error, at: now } : { kind: "retry", status, error, nextAt: now + wait };
    await this.#store.transaction(async (tx) => {
      const recorded = await tx.eventPath().finishAttempt(delivery.id, this.#owner, result);
      // The dead letter's event commits with the dead state; deliveries of webhook events raise none (no loop).
      if (!recorded || result.kind !== "dead" || event.type.startsWith("webhook.")) return;
      await emitEvent(tx, "webhook.delivery_dead_lettered", {
        subject: delivery.id,
        agentId: null,
        at: now,
        data: {
          webhook_id: delivery.webhook_id,
          delivery_id: delivery.id,
          event_id: event.id,
          event_type: event.type,
          attempts: delivery.attempts,
          last_error: error,
        },
      });
    });
  }
}
