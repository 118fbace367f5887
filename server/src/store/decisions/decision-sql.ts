// The records of the decision path over SQL: the sealed ledger, charges (holds and settlements),
// approvals of gated decisions and idempotency keys. One copy of the SQL for both databases.

import { settledInOrder, type Row, type SqlDriver } from "../sql/index.js";
import { POSTGRESQL_PROFILE, takeNamedLock, type EngineProfile } from "../sql/index.js";
import { CacheKind, type DecisionCache } from "../sql/index.js";
import { ColumnReader, insertSql, parameters } from "../sql/index.js";

/** Migration 2: what the decision path needs beyond migration 1. */
export const DECISION_PATH_SQL = `
ALTER TABLE charges ADD COLUMN settlement_ledger_id TEXT;
CREATE UNIQUE INDEX decision_approvals_one_per_decision ON decision_approvals (ledger_id);
`;

/**
 * Migration 3: usage in constant time. Uses and settlements are permanent facts, so their running
 * totals are kept per grant, written in the same transaction as the charge or settlement they
 * count. Holds are never counted this way: the live ones are summed at `now` from an index of open
 * holds (INVARIANT live-holds), so an expired hold stops counting at once.
 */
export const GRANT_TOTALS_SQL = `
CREATE TABLE grant_totals (
  grant_id TEXT PRIMARY KEY REFERENCES grants(id),
  uses BIGINT NOT NULL,
  settled_minor BIGINT NOT NULL
);
INSERT INTO grant_totals (grant_id, uses, settled_minor)
  SELECT grant_id, COUNT(*), COALESCE(SUM(COALESCE(settled_minor, 0)), 0) FROM charges GROUP BY grant_id;
CREATE INDEX charges_open_holds ON charges (grant_id, expires_at) WHERE settled_at IS NULL AND released_at IS NULL AND amount_minor > 0;
`;

/** One sealed line of the ledger; `record` is the canonical JSON the hash covers. */
export interface LedgerRow {
  readonly id: string;
  readonly tree_id: string;
  readonly seq: number;
  readonly kind: "decision" | "settlement";
  readonly grant_id: string;
  readonly agent_id: string;
  readonly outcome: string | null;
  readonly record: string;
  readonly prev_hash: string;
  readonly hash: string;
  readonly created_at: number;
}

/**
 * A hold: one counted decision's amount on one grant of its chain, until settled, released or
 * expired. A decision without an amount places none; its uses are counted in `grant_totals` alone.
 */
export interface ChargeRow {
  readonly id: string;
  readonly ledger_id: string;
  readonly grant_id: string;
  readonly amount_minor: number;
  readonly expires_at: number;
  readonly settled_minor: number | null;
  readonly settled_at: number | null;
  readonly released_at: number | null;
  readonly settlement_ledger_id: string | null;
}

export interface DecisionApprovalRow {
  readonly id: string;
  readonly ledger_id: string;
  readonly grant_id: string;
  readonly tool: string;
  readonly amount_ceiling_minor: number;
  readonly currency: string | null;
  readonly approver: string;
  readonly approved_at: number;
  readonly expires_at: number;
  readonly used_at: number | null;
  readonly used_by_ledger_id: string | null;
}

export interface IdempotencyRow {
  readonly caller_key_id: string;
  readonly idempotency_key: string;
  readonly method: string;
  readonly path: string;
  readonly request_hash: string;
  readonly status: number;
  /** The first response exactly as sent: `content-type`, a newline, then the body. */
  readonly response: string;
  readonly created_at: number;
}

/** The decision path's view of the store; `Store.decisionPath()` answers one bound to its connection. */
export interface DecisionStore {
  /**
   * Serialises writers of a chain that belongs to no grant's tree (an agent's own chain) until the
   * transaction ends: an advisory lock on PostgreSQL, a lock row on engines without advisory
   * locks (engine.ts); SQLite's BEGIN IMMEDIATE already holds it.
   */
  lockChain(treeId: string): Promise<void>;
  /** The last record of a tree's chain, or undefined for a tree with none. */
  ledgerHead(treeId: string): Promise<{ seq: number; hash: string } | undefined>;
  appendLedger(row: LedgerRow): Promise<void>;
  getLedger(id: string): Promise<LedgerRow | undefined>;
  /** Tree ids in order, after `after`, at most `limit` of them. */
  ledgerTrees(after: string | null, limit: number): Promise<string[]>;
  /** A tree's records in chain order, after `afterSeq`, at most `limit`. */
  ledgerChain(treeId: string, afterSeq: number, limit: number): Promise<LedgerRow[]>;
  /**
   * Gated decisions without an approval whose grant is active and unexpired at `now`, newest
   * first (by ledger id), older than `before` when given, at most `limit`.
   */
  pendingGated(now: number, before: string | null, limit: number): Promise<LedgerRow[]>;
  /** How many of the decisions `pendingGated` lists there are, counted up to `limit`, and when the oldest was made. */
  gatedWaiting(now: number, limit: number): Promise<{ count: number; oldestAt: number | null }>;
  /** Counts one use of each grant in its totals (INVARIANT budget-monotone). */
  countUses(grantIds: readonly string[]): Promise<void>;
  /** Inserts a hold; its use is counted by `countUses`. */
  insertCharge(row: ChargeRow): Promise<void>;
  /** Uses, settled amounts (from the totals) and live holds at `now` (from open holds) per grant. */
  liveUsage(grantIds: readonly string[], now: number): Promise<Map<string, { uses: number; held_minor: number; settled_minor: number }>>;
  chargesOf(ledgerId: string): Promise<ChargeRow[]>;
  /** Settles every unsettled charge of the decision; answers how many it changed. */
  settleCharges(ledgerId: string, settledMinor: number, at: number, settlementLedgerId: string): Promise<number>;
  insertApproval(row: DecisionApprovalRow): Promise<void>;
  getApproval(id: string): Promise<DecisionApprovalRow | undefined>;
  approvalOfDecision(ledgerId: string): Promise<DecisionApprovalRow | undefined>;
  /** Marks the approval used when it is not yet; answers whether it did. */
  useApproval(id: string, at: number, ledgerId: string): Promise<boolean>;
  /** The stored answer of a key, unless it expired (stored at or before `expiredUpTo`). */
  getIdempotency(callerKeyId: string, key: string, expiredUpTo: number): Promise<IdempotencyRow | undefined>;
  /**
   * Stores the row under its key unless a live one is there; an expired one (stored at or before
   * `expiredUpTo`) is replaced. Answers whether it stored. On PostgreSQL an insert racing an
   * uncommitted one of the same key waits for that transaction to end.
   */
  putIdempotency(row: IdempotencyRow, expiredUpTo: number): Promise<boolean>;
  /** Sets the answer of a key this transaction claimed with `putIdempotency`. */
  answerIdempotency(callerKeyId: string, key: string, status: number, response: string): Promise<void>;
  /** Forgets at most `rowsMax` keys stored at or before `expiredUpTo`, oldest first; answers how many. */
  pruneIdempotency(expiredUpTo: number, rowsMax: number): Promise<number>;
}

export const LEDGER_COLUMNS = [
  "id",
  "tree_id",
  "seq",
  "kind",
  "grant_id",
  "agent_id",
  "outcome",
  "record",
  "prev_hash",
  "hash",
  "created_at",
] as const;
export const CHARGE_COLUMNS = [
  "id",
  "ledger_id",
  "grant_id",
  "amount_minor",
  "expires_at",
  "settled_minor",
  "settled_at",
  "released_at",
  "settlement_ledger_id",
] as const;
const APPROVAL_COLUMNS = [
  "id",
  "ledger_id",
  "grant_id",
  "tool",
  "amount_ceiling_minor",
  "currency",
  "approver",
  "approved_at",
  "expires_at",
  "used_at",
  "used_by_ledger_id",
] as const;
export const IDEMPOTENCY_COLUMNS = [
  "caller_key_id",
  "idempotency_key",
  "method",
  "path",
  "request_hash",
  "status",
  "response",
  "created_at",
] as const;
/** An insert that takes a free key or replaces an expired answer, and leaves a live one alone. */
const PUT_IDEMPOTENCY = `${insertSql("idempotency_keys", IDEMPOTENCY_COLUMNS)}
  ON CONFLICT (caller_key_id, idempotency_key) DO UPDATE SET
    ${IDEMPOTENCY_COLUMNS.slice(2)
      .map((c) => `${c} = excluded.${c}`)
      .join(", ")}
  WHERE idempotency_keys.created_at <= ?`;

/** An open hold of charges `h` that still counts at the time given as its one parameter (INVARIANT live-holds). */
export const OPEN_HOLD_AT = "h.settled_at IS NULL AND h.released_at IS NULL AND h.amount_minor > 0 AND h.expires_at > ?";

const COUNT_USE =
  "INSERT INTO grant_totals (grant_id, uses, settled_minor) VALUES (?, 1, 0) ON CONFLICT (grant_id) DO UPDATE SET uses = grant_totals.uses + 1";

const INSERT_LEDGER = insertSql("ledger", LEDGER_COLUMNS);
const INSERT_CHARGE = insertSql("charges", CHARGE_COLUMNS);
const LEDGER = new ColumnReader("ledger");
const CHARGES = new ColumnReader("charges");
const APPROVALS = new ColumnReader("decision_approvals");
const IDEMPOTENCY = new ColumnReader("idempotency_keys");
const TOTALS = new ColumnReader("grant_totals");
const LEDGER_KINDS: readonly LedgerRow["kind"][] = ["decision", "settlement"];

/**
 * A grant's usage as the decision cache keeps it (INVARIANT decision-cache): read at `at`, then
 * kept up to date by this connection's own uses and holds. It is what a read at `now` would
 * return while `at <= now < heldUntil`, the first expiry among the holds it counts.
 */
interface CachedUsage {
  readonly uses: number;
  readonly held_minor: number;
  readonly settled_minor: number;
  readonly at: number;
  readonly heldUntil: number;
}

/** A grant's usage, by grant id. */
const GRANT_USAGE = new CacheKind<CachedUsage>();
/** The last record this connection appended to a tree's chain, by tree id. */
const LEDGER_HEAD = new CacheKind<{ readonly seq: number; readonly hash: string }>();

/** Keeps the cache's head of a tree after this connection appended `head` to its chain (INVARIANT decision-cache). */
export function keepLedgerHead(
  cache: DecisionCache | undefined,
  treeId: string,
  head: { readonly seq: number; readonly hash: string },
): void {
  if (cache !== undefined) LEDGER_HEAD.set(cache, treeId, Object.freeze({ seq: head.seq, hash: head.hash }));
}

/** Keeps a grant's cached usage, if kept, up to date after this connection counted `uses` more uses of it. */
export function keepUses(cache: DecisionCache | undefined, grantId: string, uses: number): void {
  const cached = cache === undefined ? undefined : GRANT_USAGE.get(cache, grantId);
  if (cache !== undefined && cached !== undefined) GRANT_USAGE.set(cache, grantId, Object.freeze({ ...cached, uses: cached.uses + uses }));
}

/** Keeps a grant's cached usage, if kept, up to date after this connection inserted the charge `row`. */
export function keepCharge(cache: DecisionCache | undefined, row: ChargeRow): void {
  const cached = cache === undefined ? undefined : GRANT_USAGE.get(cache, row.grant_id);
  // An open hold counts from now until it expires; one already expired at `at` never counts.
  if (
    cache === undefined ||
    cached === undefined ||
    row.amount_minor <= 0 ||
    row.settled_at !== null ||
    row.released_at !== null ||
    row.expires_at <= cached.at
  )
    return;
  GRANT_USAGE.set(
    cache,
    row.grant_id,
    Object.freeze({
      ...cached,
      held_minor: cached.held_minor + row.amount_minor,
      heldUntil: Math.min(cached.heldUntil, row.expires_at),
    }),
  );
}

/** A row of `ledger` (the family path reads them too). */
export function ledgerFromRow(row: Row): LedgerRow {
  const c = LEDGER;
  return {
    id: c.text(row, "id"),
    tree_id: c.text(row, "tree_id"),
    seq: c.integer(row, "seq"),
    kind: c.oneOf(row, "kind", LEDGER_KINDS),
    grant_id: c.text(row, "grant_id"),
    agent_id: c.text(row, "agent_id"),
    outcome: c.textOrNull(row, "outcome"),
    record: c.text(row, "record"),
    prev_hash: c.text(row, "prev_hash"),
    hash: c.text(row, "hash"),
    created_at: c.integer(row, "created_at"),
  };
}

function chargeFromRow(row: Row): ChargeRow {
  const c = CHARGES;
  return {
    id: c.text(row, "id"),
    ledger_id: c.text(row, "ledger_id"),
    grant_id: c.text(row, "grant_id"),
    amount_minor: c.integer(row, "amount_minor"),
    expires_at: c.integer(row, "expires_at"),
    settled_minor: c.integerOrNull(row, "settled_minor"),
    settled_at: c.integerOrNull(row, "settled_at"),
    released_at: c.integerOrNull(row, "released_at"),
    settlement_ledger_id: c.textOrNull(row, "settlement_ledger_id"),
  };
}

export function approvalFromRow(row: Row): DecisionApprovalRow {
  const c = APPROVALS;
  return {
    id: c.text(row, "id"),
    ledger_id: c.text(row, "ledger_id"),
    grant_id: c.text(row, "grant_id"),
    tool: c.text(row, "tool"),
    amount_ceiling_minor: c.integer(row, "amount_ceiling_minor"),
    currency: c.textOrNull(row, "currency"),
    approver: c.text(row, "approver"),
    approved_at: c.integer(row, "approved_at"),
    expires_at: c.integer(row, "expires_at"),
    used_at: c.integerOrNull(row, "used_at"),
    used_by_ledger_id: c.textOrNull(row, "used_by_ledger_id"),
  };
}

export function idempotencyFromRow(row: Row): IdempotencyRow {
  const c = IDEMPOTENCY;
  return {
    caller_key_id: c.text(row, "caller_key_id"),
    idempotency_key: c.text(row, "idempotency_key"),
    method: c.text(row, "method"),
    path: c.text(row, "path"),
    request_hash: c.text(row, "request_hash"),
    status: c.integer(row, "status"),
    response: c.text(row, "response"),
    created_at: c.integer(row, "created_at"),
  };
}

/** The gated decisions that wait for an approval: of a live grant, and not approved yet (one parameter: now). */
const WAITING_GATED = `ledger l JOIN grants g ON g.id = l.grant_id
        WHERE l.kind = 'decision' AND l.outcome = 'gated' AND g.status = 'active' AND g.expires_at > ?
          AND NOT EXISTS (SELECT 1 FROM decision_approvals a WHERE a.ledger_id = l.id)`;

export class DecisionSql implements DecisionStore {
  readonly #db: SqlDriver;
  readonly #engine: EngineProfile;

  constructor(db: SqlDriver, engine: EngineProfile = POSTGRESQL_PROFILE) {
    this.#db = db;
    this.#engine = engine;
  }

  async lockChain(treeId: string): Promise<void> {
    await takeNamedLock(this.#db, this.#engine, { name: `ledger:${treeId}` });
  }

  async ledgerHead(treeId: string): Promise<{ seq: number; hash: string } | undefined> {
    // Inside a SQLite batch the head this connection appended last is kept (INVARIANT decision-cache).
    const cache = this.#db.decisionCache;
    const cached = cache === undefined ? undefined : LEDGER_HEAD.get(cache, treeId);
    if (cached !== undefined) return cached;
    const row = await this.#db.get("SELECT seq, hash FROM ledger WHERE tree_id = ? ORDER BY seq DESC LIMIT 1", [treeId]);
    return row === undefined ? undefined : { seq: LEDGER.integer(row, "seq"), hash: LEDGER.text(row, "hash") };
  }

  async appendLedger(row: LedgerRow): Promise<void> {
    // The Merkle log finds the record by its tree and place (decision 1941): nothing else is written.
    await this.#db.run(INSERT_LEDGER, parameters(row, LEDGER_COLUMNS));
    keepLedgerHead(this.#db.decisionCache, row.tree_id, row);
  }

  async getLedger(id: string): Promise<LedgerRow | undefined> {
    const row = await this.#db.get("SELECT * FROM ledger WHERE id = ?", [id]);
    return row && ledgerFromRow(row);
  }

  async ledgerTrees(after: string | null, limit: number): Promise<string[]> {
    const rows =
      after === null
        ? await this.#db.all("SELECT DISTINCT tree_id FROM ledger ORDER BY tree_id LIMIT ?", [limit])
        : await this.#db.all("SELECT DISTINCT tree_id FROM ledger WHERE tree_id > ? ORDER BY tree_id LIMIT ?", [after, limit]);
    return rows.map((row) => LEDGER.text(row, "tree_id"));
  }

  async ledgerChain(treeId: string, afterSeq: number, limit: number): Promise<LedgerRow[]> {
    const rows = await this.#db.all("SELECT * FROM ledger WHERE tree_id = ? AND seq > ? ORDER BY seq LIMIT ?", [treeId, afterSeq, limit]);
    return rows.map(ledgerFromRow);
  }

  async pendingGated(now: number, before: string | null, limit: number): Promise<LedgerRow[]> {
    const rows = await this.#db.all(
      `SELECT l.* FROM ${WAITING_GATED}${before === null ? "" : " AND l.id < ?"}
        ORDER BY l.id DESC LIMIT ?`,
      before === null ? [now, limit] : [now, before, limit],
    );
    return rows.map(ledgerFromRow);
  }

  async gatedWaiting(now: number, limit: number): Promise<{ count: number; oldestAt: number | null }> {
    const counted = await this.#db.get(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${WAITING_GATED} LIMIT ?) w`, [now, limit]);
    // Ids sort by creation time (ids.ts): the smallest is the oldest, found through the index of gated decisions.
    const oldest = await this.#db.get(`SELECT l.created_at FROM ${WAITING_GATED} ORDER BY l.id LIMIT 1`, [now]);
    return { count: LEDGER.integer(counted ?? {}, "n"), oldestAt: oldest === undefined ? null : LEDGER.integer(oldest, "created_at") };
  }

  async countUses(grantIds: readonly string[]): Promise<void> {
    // On PostgreSQL the statements are sent together (one round trip on a pipelining connection).
    if (this.#db.dialect === "postgres") {
      await settledInOrder(grantIds.map((grantId) => this.#db.run(COUNT_USE, [grantId])));
      return;
    }
    const cache = this.#db.decisionCache;
    for (const grantId of grantIds) {
      await this.#db.run(COUNT_USE, [grantId]);
      keepUses(cache, grantId, 1);
    }
  }

  async insertCharge(row: ChargeRow): Promise<void> {
    await this.#db.run(INSERT_CHARGE, parameters(row, CHARGE_COLUMNS));
    keepCharge(this.#db.decisionCache, row);
  }

  async liveUsage(
    grantIds: readonly string[],
    now: number,
  ): Promise<Map<string, { uses: number; held_minor: number; settled_minor: number }>> {
    const result = new Map<string, { uses: number; held_minor: number; settled_minor: number }>();
    const cache = this.#db.decisionCache;
    if (cache !== undefined && grantIds.length > 0) {
      for (const id of grantIds) {
        const cached = GRANT_USAGE.get(cache, id);
        // INVARIANT (live-holds): a kept sum of holds is exact only until the first of them expires.
        if (cached === undefined || now < cached.at || now >= cached.heldUntil) break;
        result.set(id, { uses: cached.uses, held_minor: cached.held_minor, settled_minor: cached.settled_minor });
      }
      if (result.size === grantIds.length) return result;
      result.clear();
    }
    for (const id of grantIds) result.set(id, { uses: 0, held_minor: 0, settled_minor: 0 });
    if (grantIds.length === 0) return result;
    // One statement for the whole chain. INVARIANT (live-holds): only open holds that have not
    // expired at `now` count, read through the index of open holds, which also gives the first
    // of them to expire (one step in that index).
    const open =
      "FROM charges c WHERE c.grant_id = g.id AND c.settled_at IS NULL AND c.released_at IS NULL AND c.amount_minor > 0 AND c.expires_at > ?";
    const rows = await this.#db.all(
      `SELECT g.id AS grant_id, COALESCE(t.uses, 0) AS uses, COALESCE(t.settled_minor, 0) AS settled,
              (SELECT COALESCE(SUM(c.amount_minor), 0) ${open}) AS held${cache === undefined ? "" : `, (SELECT MIN(c.expires_at) ${open}) AS held_until`}
         FROM grants g LEFT JOIN grant_totals t ON t.grant_id = g.id
        WHERE g.id IN (${grantIds.map(() => "?").join(", ")})`,
      cache === undefined ? [now, ...grantIds] : [now, now, ...grantIds],
    );
    const c = TOTALS;
    for (const row of rows) {
      const grantId = c.text(row, "grant_id");
      const usage = { uses: c.integer(row, "uses"), held_minor: c.integer(row, "held"), settled_minor: c.integer(row, "settled") };
      result.set(grantId, usage);
      if (cache === undefined) continue;
      const heldUntil = c.integerOrNull(row, "held_until") ?? Number.POSITIVE_INFINITY;
      GRANT_USAGE.set(cache, grantId, Object.freeze({ ...usage, at: now, heldUntil }));
    }
    return result;
  }

  async chargesOf(ledgerId: string): Promise<ChargeRow[]> {
    return (await this.#db.all("SELECT * FROM charges WHERE ledger_id = ? ORDER BY id", [ledgerId])).map(chargeFromRow);
  }

  async settleCharges(ledgerId: string, settledMinor: number, at: number, settlementLedgerId: string): Promise<number> {
    // Settling changes usage the decision cache may keep; a batch that settles forgets it all.
    this.#db.decisionCache?.clear();
    const changed = await this.#db.run(
      "UPDATE charges SET settled_minor = ?, settled_at = ?, released_at = ?, settlement_ledger_id = ? WHERE ledger_id = ? AND settled_at IS NULL",
      [settledMinor, at, at, settlementLedgerId, ledgerId],
    );
    await this.#db.run(
      "UPDATE grant_totals SET settled_minor = settled_minor + ? WHERE grant_id IN (SELECT grant_id FROM charges WHERE ledger_id = ? AND settlement_ledger_id = ?)",
      [settledMinor, ledgerId, settlementLedgerId],
    );
    return changed;
  }

  async insertApproval(row: DecisionApprovalRow): Promise<void> {
    await this.#db.run(insertSql("decision_approvals", APPROVAL_COLUMNS), parameters(row, APPROVAL_COLUMNS));
  }

  async getApproval(id: string): Promise<DecisionApprovalRow | undefined> {
    const row = await this.#db.get("SELECT * FROM decision_approvals WHERE id = ?", [id]);
    return row && approvalFromRow(row);
  }

  async approvalOfDecision(ledgerId: string): Promise<DecisionApprovalRow | undefined> {
    const row = await this.#db.get("SELECT * FROM decision_approvals WHERE ledger_id = ?", [ledgerId]);
    return row && approvalFromRow(row);
  }

  async useApproval(id: string, at: number, ledgerId: string): Promise<boolean> {
    const changed = await this.#db.run(
      "UPDATE decision_approvals SET used_at = ?, used_by_ledger_id = ? WHERE id = ? AND used_at IS NULL",
      [at, ledgerId, id],
    );
    return changed === 1;
  }

  async getIdempotency(callerKeyId: string, key: string, expiredUpTo: number): Promise<IdempotencyRow | undefined> {
    const row = await this.#db.get("SELECT * FROM idempotency_keys WHERE caller_key_id = ? AND idempotency_key = ? AND created_at > ?", [
      callerKeyId,
      key,
      expiredUpTo,
    ]);
    return row === undefined ? undefined : idempotencyFromRow(row);
  }

  async putIdempotency(row: IdempotencyRow, expiredUpTo: number): Promise<boolean> {
    const changed = await this.#db.run(PUT_IDEMPOTENCY, [...parameters(row, IDEMPOTENCY_COLUMNS), expiredUpTo]);
    return changed === 1;
  }

  async answerIdempotency(callerKeyId: string, key: string, status: number, response: string): Promise<void> {
    const changed = await this.#db.run(
      "UPDATE idempotency_keys SET status = ?, response = ? WHERE caller_key_id = ? AND idempotency_key = ?",
      [status, response, callerKeyId, key],
    );
    if (changed !== 1) throw new Error("answered an idempotency key this transaction did not claim");
  }

  async pruneIdempotency(expiredUpTo: number, rowsMax: number): Promise<number> {
    return this.#db.run(
      `DELETE FROM idempotency_keys WHERE (caller_key_id, idempotency_key) IN (
         SELECT caller_key_id, idempotency_key FROM idempotency_keys WHERE created_at <= ? ORDER BY created_at LIMIT ?)`,
      [expiredUpTo, rowsMax],
    );
  }
}
