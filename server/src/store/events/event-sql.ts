// The outbox and webhooks over SQL (docs/events.md): events written in the transaction of their
// effect, numbered in commit order; webhooks; and their deliveries, leased by one replica at a time.
//
// INVARIANT (commit-ordered-sequence): an event's `seq` is assigned in the order its transaction
// commits, so a reader that has seen `seq` n will never later see a committed event below n. On
// SQLite a transaction holds the database's write lock from its first write to its commit, so the
// rowid it gives is already in commit order. On PostgreSQL an event is inserted without a `seq`;
// just before COMMIT the driver numbers the transaction's events from the one-row counter
// `event_sequence`, whose row lock is held until that COMMIT returns (`SEQUENCE_PENDING_SQL`). The
// counter is the last lock a transaction takes, so it adds no lock-order cycle (no deadlock).

import type { Dialect, Row, SqlDriver, SqlValue } from "../sql/index.js";
import { ColumnReader, insertSql, parameters } from "../sql/index.js";

/** The tables of migration 10. */
export const EVENT_TABLES = ["events", "webhooks", "webhook_deliveries"] as const;

/** Safe to apply again over its own tables (an upgrade raced by replicas runs it once; a test reapplies it). */
export function eventsMigrationSql(dialect: Dialect): string {
  const events =
    dialect === "sqlite"
      ? `CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  at BIGINT NOT NULL,
  subject TEXT NOT NULL,
  agent_id TEXT,
  data TEXT NOT NULL
);`
      : `CREATE TABLE IF NOT EXISTS events (
  id TEXT PRIMARY KEY,
  pos BIGSERIAL NOT NULL,
  seq BIGINT UNIQUE,
  type TEXT NOT NULL,
  at BIGINT NOT NULL,
  subject TEXT NOT NULL,
  agent_id TEXT,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_unsequenced ON events (pos) WHERE seq IS NULL;
CREATE TABLE IF NOT EXISTS event_sequence (id INTEGER PRIMARY KEY CHECK (id = 1), last BIGINT NOT NULL);
INSERT INTO event_sequence (id, last) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;`;
  return `${events}
CREATE TABLE IF NOT EXISTS webhooks (
  id TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  event_types TEXT NOT NULL,
  secret TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'paused', 'deleted')),
  description TEXT,
  cursor_seq BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  created_by TEXT NOT NULL,
  changed_at BIGINT,
  changed_by TEXT
);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id TEXT PRIMARY KEY,
  webhook_id TEXT NOT NULL REFERENCES webhooks(id),
  event_seq BIGINT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
  attempts INTEGER NOT NULL,
  next_attempt_at BIGINT,
  lease_owner TEXT,
  lease_until BIGINT,
  last_status INTEGER,
  last_error TEXT,
  created_at BIGINT NOT NULL,
  delivered_at BIGINT,
  UNIQUE (webhook_id, event_seq)
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
`;
}

/**
 * PostgreSQL, run just before COMMIT by a transaction that wrote events: numbers its own events
 * (the only ones without a `seq` it can see, since a committed event always has one) in the order
 * it wrote them, from the counter, whose row it then holds until the commit returns.
 */
export const SEQUENCE_PENDING_SQL = `
WITH fresh AS (SELECT id, row_number() OVER (ORDER BY pos) AS n FROM events WHERE seq IS NULL),
total AS (SELECT count(*) AS k FROM fresh),
counter AS (
  UPDATE event_sequence SET last = last + (SELECT k FROM total) WHERE id = 1 AND (SELECT k FROM total) > 0
  RETURNING last - (SELECT k FROM total) AS base
)
UPDATE events SET seq = counter.base + fresh.n FROM counter, fresh WHERE events.id = fresh.id`;

export interface EventRow {
  readonly id: string;
  readonly type: string;
  readonly at: number;
  readonly subject: string;
  readonly agent_id: string | null;
  readonly data: Readonly<Record<string, unknown>>;
}

export interface StoredEvent extends EventRow {
  readonly seq: number;
}

export interface WebhookRow {
  readonly id: string;
  readonly url: string;
  readonly event_types: readonly string[];
  readonly secret: string;
  readonly status: "active" | "paused" | "deleted";
  readonly description: string | null;
  readonly cursor_seq: number;
  readonly created_at: number;
  readonly created_by: string;
}

export interface DeliveryRow {
  readonly id: string;
  readonly webhook_id: string;
  readonly event_seq: number;
  readonly event_id: string;
  readonly event_type: string;
  readonly status: "pending" | "delivered" | "dead";
  readonly attempts: number;
  readonly next_attempt_at: number | null;
  readonly lease_owner: string | null;
  readonly lease_until: number | null;
  readonly last_status: number | null;
  readonly last_error: string | null;
  readonly created_at: number;
  readonly delivered_at: number | null;
}

/** What one attempt came to. */
export type AttemptResult =
  | { readonly kind: "delivered"; readonly status: number; readonly at: number }
  | { readonly kind: "retry"; readonly status: number | null; readonly error: string; readonly nextAt: number }
  | { readonly kind: "dead"; readonly status: number | null; readonly error: string; readonly at: number };

export interface EventStore {
  /** Appends one event to the outbox of the open transaction. */
  appendEvent(event: EventRow): Promise<void>;
  /** Committed events after `seq` (up to `upTo` when given), in order, at most `limit`; only `types` when given. */
  eventsAfter(seq: number, limit: number, types?: readonly string[], upTo?: number): Promise<StoredEvent[]>;
  /** The highest committed sequence; 0 with none. */
  lastSeq(): Promise<number>;

  insertWebhook(row: WebhookRow): Promise<void>;
  /** The webhook; a deleted one only with `deleted`. */
  getWebhook(id: string, deleted?: boolean): Promise<WebhookRow | undefined>;
  listWebhooks(): Promise<WebhookRow[]>;
  countWebhooks(): Promise<number>;
  setWebhookStatus(id: string, from: readonly WebhookRow["status"][], to: WebhookRow["status"], at: number, by: string): Promise<boolean>;
  /** The webhook, locked for fan-out; undefined when another replica holds it (PostgreSQL) or it is not active. */
  lockWebhookForFanOut(id: string): Promise<WebhookRow | undefined>;
  /** Inserts a delivery per event (none twice) and moves the webhook's cursor. */
  addDeliveries(webhook: WebhookRow, events: readonly StoredEvent[], cursor: number, now: number, ids: () => string): Promise<void>;
  /**
   * Leases up to `limit` due deliveries of the webhook to `owner` until `leaseUntil`, counting one
   * attempt each; never more than `inFlightMax` leased at once for the webhook.
   */
  leaseDue(webhookId: string, owner: string, now: number, leaseUntil: number, limit: number, inFlightMax: number): Promise<DeliveryRow[]>;
  /** Records an attempt's result when `owner` still holds the lease; answers whether it did. */
  finishAttempt(id: string, owner: string, result: AttemptResult): Promise<boolean>;
  getDelivery(id: string): Promise<DeliveryRow | undefined>;
  /** When the webhook's next unleased pending delivery is due; null with none. A read only: no lock. */
  nextDue(webhookId: string, now: number): Promise<number | null>;
  listDeliveries(webhookId: string, after: string | undefined, limit: number): Promise<DeliveryRow[]>;
  /** Makes a delivery due again now, with its attempts counted afresh. */
  redeliver(id: string, now: number): Promise<boolean>;
  eventBySeq(seq: number): Promise<StoredEvent | undefined>;
}

const EVENTS = new ColumnReader("events");
const WEBHOOKS = new ColumnReader("webhooks");
const DELIVERIES = new ColumnReader("webhook_deliveries");
const WEBHOOK_STATUSES: readonly WebhookRow["status"][] = ["active", "paused", "deleted"];
const DELIVERY_STATUSES: readonly DeliveryRow["status"][] = ["pending", "delivered", "dead"];
const EVENT_COLUMNS = ["id", "type", "at", "subject", "agent_id", "data"] as const;
const INSERT_EVENT = insertSql("events", EVENT_COLUMNS);
const WEBHOOK_COLUMNS = ["id", "url", "event_types", "secret", "status", "description", "cursor_seq", "created_at", "created_by"] as const;

function eventFromRow(row: Row): StoredEvent {
  const c = EVENTS;
  return {
    seq: c.integer(row, "seq"),
    id: c.text(row, "id"),
    type: c.text(row, "type"),
    at: c.integer(row, "at"),
    subject: c.text(row, "subject"),
    agent_id: c.textOrNull(row, "agent_id"),
    data: c.jsonObject(row, "data"),
  };
}

function webhookFromRow(row: Row): WebhookRow {
  const c = WEBHOOKS;
  return {
    id: c.text(row, "id"),
    url: c.text(row, "url"),
    event_types: c.jsonStrings(row, "event_types"),
    secret: c.text(row, "secret"),
    status: c.oneOf(row, "status", WEBHOOK_STATUSES),
    description: c.textOrNull(row, "description"),
    cursor_seq: c.integer(row, "cursor_seq"),
    created_at: c.integer(row, "created_at"),
    created_by: c.text(row, "created_by"),
  };
}

function deliveryFromRow(row: Row): DeliveryRow {
  const c = DELIVERIES;
  return {
    id: c.text(row, "id"),
    webhook_id: c.text(row, "webhook_id"),
    event_seq: c.integer(row, "event_seq"),
    event_id: c.text(row, "event_id"),
    event_type: c.text(row, "event_type"),
    status: c.oneOf(row, "status", DELIVERY_STATUSES),
    attempts: c.integer(row, "attempts"),
    next_attempt_at: c.integerOrNull(row, "next_attempt_at"),
    lease_owner: c.textOrNull(row, "lease_owner"),
    lease_until: c.integerOrNull(row, "lease_until"),
    last_status: c.integerOrNull(row, "last_status"),
    last_error: c.textOrNull(row, "last_error"),
    created_at: c.integer(row, "created_at"),
    delivered_at: c.integerOrNull(row, "delivered_at"),
  };
}

/** A connection on which an event was written: numbered before its COMMIT (PostgreSQL). */
export interface OutboxConnection {
  markOutboxWritten?(): void;
}

export class EventSql implements EventStore {
  readonly #db: SqlDriver & OutboxConnection;

  constructor(db: SqlDriver) {
    this.#db = db;
  }

  async appendEvent(e: EventRow): Promise<void> {
    await this.#db.run(INSERT_EVENT, parameters(e, EVENT_COLUMNS));
    if (this.#db.dialect === "postgres") {
      if (this.#db.markOutboxWritten === undefined) throw new Error("an event is written only inside a transaction");
      this.#db.markOutboxWritten();
    }
  }

  async eventsAfter(seq: number, limit: number, types?: readonly string[], upTo?: number): Promise<StoredEvent[]> {
    const params: SqlValue[] = [seq];
    let typeClause = "";
    if (upTo !== undefined) {
      typeClause = " AND seq <= ?";
      params.push(upTo);
    }
    if (types !== undefined) {
      typeClause += ` AND type IN (${types.map(() => "?").join(", ")})`;
      params.push(...types);
    }
    params.push(limit);
    const rows = await this.#db.all(`SELECT * FROM events WHERE seq > ?${typeClause} ORDER BY seq LIMIT ?`, params);
    return rows.map(eventFromRow);
  }

  async lastSeq(): Promise<number> {
    const row = await this.#db.get("SELECT MAX(seq) AS m FROM events");
    return row === undefined ? 0 : (EVENTS.integerOrNull(row, "m") ?? 0);
  }

  async eventBySeq(seq: number): Promise<StoredEvent | undefined> {
    const row = await this.#db.get("SELECT * FROM events WHERE seq = ?", [seq]);
    return row && eventFromRow(row);
  }

  async insertWebhook(w: WebhookRow): Promise<void> {
    await this.#db.run(insertSql("webhooks", WEBHOOK_COLUMNS), parameters(w, WEBHOOK_COLUMNS));
  }

  async getWebhook(id: string, deleted = false): Promise<WebhookRow | undefined> {
    const row = await this.#db.get(`SELECT * FROM webhooks WHERE id = ?${deleted ? "" : " AND status <> 'deleted'"}`, [id]);
    return row && webhookFromRow(row);
  }

  async listWebhooks(): Promise<WebhookRow[]> {
    return (await this.#db.all("SELECT * FROM webhooks WHERE status <> 'deleted' ORDER BY id")).map(webhookFromRow);
  }

  async countWebhooks(): Promise<number> {
    return WEBHOOKS.integer((await this.#db.get("SELECT COUNT(*) AS c FROM webhooks WHERE status <> 'deleted'")) ?? {}, "c");
  }

  async setWebhookStatus(
    id: string,
    from: readonly WebhookRow["status"][],
    to: WebhookRow["status"],
    at: number,
    by: string,
  ): Promise<boolean> {
    const changed = await this.#db.run(
      `UPDATE webhooks SET status = ?, changed_at = ?, changed_by = ? WHERE id = ? AND status IN (${from.map(() => "?").join(", ")})`,
      [to, at, by, id, ...from],
    );
    return changed === 1;
  }

  async lockWebhookForFanOut(id: string): Promise<WebhookRow | undefined> {
    const lock = this.#db.dialect === "postgres" ? " FOR UPDATE SKIP LOCKED" : "";
    const row = await this.#db.get(`SELECT * FROM webhooks WHERE id = ? AND status = 'active'${lock}`, [id]);
    return row && webhookFromRow(row);
  }

  async addDeliveries(webhook: WebhookRow, events: readonly StoredEvent[], cursor: number, now: number, ids: () => string): Promise<void> {
    for (const e of events) {
      await this.#db.run(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_seq, event_id, event_type, status, attempts, next_attempt_at, created_at)
         VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?) ON CONFLICT (webhook_id, event_seq) DO NOTHING`,
        [ids(), webhook.id, e.seq, e.id, e.type, now, now],
      );
    }
    await this.#db.run("UPDATE webhooks SET cursor_seq = ? WHERE id = ? AND cursor_seq < ?", [cursor, webhook.id, cursor]);
  }

  async leaseDue(
    webhookId: string,
    owner: string,
    now: number,
    leaseUntil: number,
    limit: number,
    inFlightMax: number,
  ): Promise<DeliveryRow[]> {
    // The webhook's row serialises leasing across replicas, so the in-flight bound holds for all of them.
    const lock = this.#db.dialect === "postgres" ? " FOR UPDATE" : "";
    if ((await this.#db.get(`SELECT id FROM webhooks WHERE id = ? AND status = 'active'${lock}`, [webhookId])) === undefined) return [];
    const inFlight = DELIVERIES.integer(
      (await this.#db.get(
        "SELECT COUNT(*) AS c FROM webhook_deliveries WHERE webhook_id = ? AND status = 'pending' AND lease_until IS NOT NULL AND lease_until > ?",
        [webhookId, now],
      )) ?? {},
      "c",
    );
    const room = Math.min(limit, inFlightMax - inFlight);
    if (room <= 0) return [];
    const due = await this.#db.all(
      `SELECT id FROM webhook_deliveries WHERE webhook_id = ? AND status = 'pending' AND next_attempt_at <= ?
         AND (lease_until IS NULL OR lease_until <= ?) ORDER BY event_seq LIMIT ?`,
      [webhookId, now, now, room],
    );
    const leased: DeliveryRow[] = [];
    for (const row of due) {
      const changed = await this.#db.run(
        "UPDATE webhook_deliveries SET lease_owner = ?, lease_until = ?, attempts = attempts + 1 WHERE id = ? AND status = 'pending' AND (lease_until IS NULL OR lease_until <= ?)",
        [owner, leaseUntil, DELIVERIES.text(row, "id"), now],
      );
      if (changed === 1) leased.push((await this.getDelivery(DELIVERIES.text(row, "id")))!);
    }
    return leased;
  }

  async finishAttempt(id: string, owner: string, r: AttemptResult): Promise<boolean> {
    const owned = "WHERE id = ? AND lease_owner = ? AND status = 'pending'";
    if (r.kind === "delivered") {
      return (
        (await this.#db.run(
          `UPDATE webhook_deliveries SET status = 'delivered', last_status = ?, last_error = NULL, delivered_at = ?, lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL ${owned}`,
          [r.status, r.at, id, owner],
        )) === 1
      );
    }
    if (r.kind === "retry") {
      return (
        (await this.#db.run(
          `UPDATE webhook_deliveries SET last_status = ?, last_error = ?, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL ${owned}`,
          [r.status, r.error, r.nextAt, id, owner],
        )) === 1
      );
    }
    return (
      (await this.#db.run(
        `UPDATE webhook_deliveries SET status = 'dead', last_status = ?, last_error = ?, next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL ${owned}`,
        [r.status, r.error, id, owner],
      )) === 1
    );
  }

  async nextDue(webhookId: string, now: number): Promise<number | null> {
    const row = await this.#db.get(
      "SELECT MIN(next_attempt_at) AS due FROM webhook_deliveries WHERE webhook_id = ? AND status = 'pending' AND (lease_until IS NULL OR lease_until <= ?)",
      [webhookId, now],
    );
    return row === undefined ? null : DELIVERIES.integerOrNull(row, "due");
  }

  async getDelivery(id: string): Promise<DeliveryRow | undefined> {
    const row = await this.#db.get("SELECT * FROM webhook_deliveries WHERE id = ?", [id]);
    return row && deliveryFromRow(row);
  }

  async listDeliveries(webhookId: string, after: string | undefined, limit: number): Promise<DeliveryRow[]> {
    const params: SqlValue[] = [webhookId];
    const afterClause = after === undefined ? "" : " AND id > ?";
    if (after !== undefined) params.push(after);
    params.push(limit);
    return (await this.#db.all(`SELECT * FROM webhook_deliveries WHERE webhook_id = ?${afterClause} ORDER BY id LIMIT ?`, params)).map(
      deliveryFromRow,
    );
  }

  async redeliver(id: string, now: number): Promise<boolean> {
    return (
      (await this.#db.run(
        "UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL WHERE id = ?",
        [now, id],
      )) === 1
    );
  }
}
