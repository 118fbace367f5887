// A batch of decisions on SQLite (decision 0319): the reads go where one decision at a time reads,
// mostly the connection's decision cache, with no locks to take (the batch holds the database's
// write lock); the writes are one statement per table for the whole batch, and keep the cache's
// usage and chain heads what a read would now return (INVARIANT decision-cache).

import type { BreakerStore } from "../breakers/index.js";
import { BatchWriteConflict } from "./decision-batch-sql.js";
import {
  CHARGE_COLUMNS,
  IDEMPOTENCY_COLUMNS,
  keepCharge,
  keepLedgerHead,
  keepUses,
  LEDGER_COLUMNS,
  type DecisionApprovalRow,
  type DecisionStore,
  type IdempotencyRow,
} from "../decisions/index.js";
import type { SqlDriver, SqlValue } from "../sql/index.js";
import { parameters } from "../sql/index.js";
import type {
  BatchReadRequest,
  BatchReads,
  BatchWrites,
  CertificateRecord,
  DecisionBatchStore,
  GrantRecord,
  GrantUsage,
  Store,
} from "./store.js";

const SIGNAL_COLUMNS = ["ledger_id", "agent_id", "at", "signal"] as const;

/**
 * The size class of `n` rows: the next power of two. A statement carries that many rows, those
 * past `n` all NULL and skipped by its `WHERE column1 IS NOT NULL`, so that its text, and its
 * prepared statement, is one per class (nine up to a full batch of 256), not one per size.
 */
function sizeClass(n: number): number {
  let size = 1;
  while (size < n) size *= 2;
  return size;
}

/**
 * `INSERT INTO table (columns) SELECT … FROM (VALUES …)` for `size` rows. `ordered`: in the order
 * given, by an ordinal in the text (rows keyed by INTEGER PRIMARY KEY then get ascending keys in
 * it); the sort costs about a microsecond a row, so only the tables whose keys say the order have it.
 * `tail` follows the WHERE clause (an upsert's ON CONFLICT).
 */
function rowsInsert(table: string, columns: readonly string[], size: number, ordered: boolean, tail = ""): string {
  const placeholders = columns.map(() => "?").join(", ");
  const values = Array.from({ length: size }, (_, i) => (ordered ? `(${placeholders}, ${i})` : `(${placeholders})`)).join(", ");
  const selected = columns.map((_, i) => `column${i + 1}`).join(", ");
  const order = ordered ? ` ORDER BY column${columns.length + 1}` : "";
  return `INSERT INTO ${table} (${columns.join(", ")}) SELECT ${selected} FROM (VALUES ${values}) WHERE column1 IS NOT NULL${order}${tail}`;
}

/** Statement texts by table and size class, made once each. */
class ClassedStatements {
  readonly #texts = new Map<number, string>();
  readonly #make: (size: number) => string;
  readonly #width: number;

  constructor(width: number, make: (size: number) => string) {
    this.#width = width;
    this.#make = make;
  }

  /** The statement for `rows` and its parameters, padded with NULL rows to the size class. */
  of(rows: readonly (readonly SqlValue[])[]): { sql: string; params: SqlValue[] } {
    const size = sizeClass(rows.length);
    let sql = this.#texts.get(size);
    if (sql === undefined) {
      sql = this.#make(size);
      this.#texts.set(size, sql);
    }
    const params: SqlValue[] = rows.flat();
    for (let i = rows.length * this.#width; i < size * this.#width; i += 1) params.push(null);
    return { sql, params };
  }
}

// Each text starts `INSERT INTO <decision path table> `: the decision cache stays whole (sqlite-driver.ts).
const WRITE_LEDGER = new ClassedStatements(LEDGER_COLUMNS.length, (size) => rowsInsert("ledger", LEDGER_COLUMNS, size, false));
// In order: an agent's breakers see its decisions in the order they were sealed (INVARIANT signals-in-order).
const WRITE_SIGNALS = new ClassedStatements(SIGNAL_COLUMNS.length, (size) => rowsInsert("decision_signals", SIGNAL_COLUMNS, size, true));
const WRITE_USES = new ClassedStatements(3, (size) =>
  rowsInsert(
    "grant_totals",
    ["grant_id", "uses", "settled_minor"],
    size,
    false,
    " ON CONFLICT (grant_id) DO UPDATE SET uses = grant_totals.uses + excluded.uses",
  ),
);
const WRITE_CHARGES = new ClassedStatements(CHARGE_COLUMNS.length, (size) => rowsInsert("charges", CHARGE_COLUMNS, size, false));
// A free key is taken, an expired answer replaced, a live one left alone (and then counted missing).
const WRITE_ANSWERS = new ClassedStatements(IDEMPOTENCY_COLUMNS.length, (size) =>
  rowsInsert(
    "idempotency_keys",
    IDEMPOTENCY_COLUMNS,
    size,
    false,
    ` ON CONFLICT (caller_key_id, idempotency_key) DO UPDATE SET ${IDEMPOTENCY_COLUMNS.slice(2)
      .map((c) => `${c} = excluded.${c}`)
      .join(", ")} WHERE idempotency_keys.created_at <= ?`,
  ),
);

export class DecisionBatchSqlite implements DecisionBatchStore {
  readonly #db: SqlDriver;
  readonly #store: Store;
  readonly #decisions: DecisionStore;
  readonly #breakers: BreakerStore;

  /** `store`, `decisions` and `breakers` are bound to the batch's connection `db`. */
  constructor(db: SqlDriver, store: Store, decisions: DecisionStore, breakers: BreakerStore) {
    this.#db = db;
    this.#store = store;
    this.#decisions = decisions;
    this.#breakers = breakers;
  }

  /**
   * The batch's reads through the methods one decision at a time uses, so from the decision cache
   * where that path finds its rows (grant chains, usage, heads, certificates, breakers), each read
   * at most once for the batch. Stored answers and approvals are read by their primary keys, one
   * statement each.
   */
  async read({ claims, presented, approvals: approvalIds }: BatchReadRequest, environment: string, now: number): Promise<BatchReads> {
    const answers: IdempotencyRow[] = [];
    for (const claim of claims) {
      const row = await this.#decisions.getIdempotency(claim.caller_key_id, claim.idempotency_key, claim.expired_up_to);
      if (row !== undefined) answers.push(row);
    }
    const approvals = new Map<string, DecisionApprovalRow>();
    for (const id of new Set(approvalIds)) {
      const approval = await this.#decisions.getApproval(id);
      if (approval !== undefined) approvals.set(id, approval);
    }
    const watchedAgents = new Set<string>();
    const certificates = new Map<string, CertificateRecord>();
    for (const agentId of new Set(presented.map((p) => p.agent_id))) {
      if ((await this.#breakers.watchedBreakers(agentId, false)).length > 0) watchedAgents.add(agentId);
      const certificate = await this.#store.validCertificate(agentId, environment);
      if (certificate !== undefined) certificates.set(agentId, certificate);
    }
    const grants = new Map<string, GrantRecord>();
    const usage = new Map<string, GrantUsage>();
    const heads = new Map<string, { seq: number; hash: string }>();
    for (const { grant_id, agent_id } of presented) {
      if (grants.has(grant_id)) continue;
      const chain = await this.#store.grantChain(grant_id);
      const leaf = chain[chain.length - 1];
      // Only a grant the agent holds is decided by the step; its chain is read whole or not at all.
      if (leaf === undefined || leaf.id !== grant_id || leaf.agent_id !== agent_id) continue;
      for (const grant of chain) grants.set(grant.id, grant);
      // INVARIANT (live-holds): usage at the batch's time, kept by the cache or read at `now`.
      const read = await this.#decisions.liveUsage(
        chain.map((g) => g.id),
        now,
      );
      for (const [id, used] of read) usage.set(id, used);
      const treeId = leaf.root_id;
      if (!heads.has(treeId)) {
        const head = await this.#decisions.ledgerHead(treeId);
        if (head !== undefined) heads.set(treeId, head);
      }
    }
    return { answers, approvals, watchedAgents, grants, usage, heads, certificates };
  }

  /** No lock to take (the batch holds the database); each chain's head, from the cache where kept. */
  async ownChains(treeIds: readonly string[]): Promise<Map<string, { seq: number; hash: string }>> {
    const heads = new Map<string, { seq: number; hash: string }>();
    for (const treeId of new Set(treeIds)) {
      const head = await this.#decisions.ledgerHead(treeId);
      if (head !== undefined) heads.set(treeId, head);
    }
    return heads;
  }

  /**
   * One statement per table, then the decision cache brought up to date with what they wrote.
   * Throws BatchWriteConflict when an answer's key was found taken.
   */
  async write(writes: BatchWrites): Promise<void> {
    const db = this.#db;
    const run = async (statements: ClassedStatements, rows: readonly (readonly SqlValue[])[], extra: readonly SqlValue[] = []) => {
      if (rows.length === 0) return 0;
      const { sql, params } = statements.of(rows);
      return db.run(sql, [...params, ...extra]);
    };
    await run(
      WRITE_LEDGER,
      writes.ledger.map((row) => parameters(row, LEDGER_COLUMNS)),
    );
    await run(
      WRITE_SIGNALS,
      writes.signals.map((row) => parameters(row, SIGNAL_COLUMNS)),
    );
    await run(
      WRITE_USES,
      [...writes.uses].map(([grantId, n]) => [grantId, n, 0]),
    );
    await run(
      WRITE_CHARGES,
      writes.charges.map((row) => parameters(row, CHARGE_COLUMNS)),
    );
    const stored = await run(
      WRITE_ANSWERS,
      writes.answers.map((row) => parameters(row, IDEMPOTENCY_COLUMNS)),
      [writes.answersExpiredUpTo],
    );
    if (stored !== writes.answers.length)
      throw new BatchWriteConflict(`${writes.answers.length - stored} idempotency keys of the batch were taken meanwhile`);
    // An approval is rarely presented: one statement each.
    for (const use of writes.approvalUses)
      if (!(await this.#decisions.useApproval(use.id, use.used_at, use.used_by_ledger_id)))
        throw new BatchWriteConflict("an approval of the batch was used meanwhile");
    // INVARIANT (decision-cache): the heads appended and the usage counted, as one decision at a time keeps them.
    const cache = db.decisionCache;
    if (cache === undefined) return;
    for (const row of writes.ledger) keepLedgerHead(cache, row.tree_id, row);
    for (const [grantId, n] of writes.uses) keepUses(cache, grantId, n);
    for (const row of writes.charges) keepCharge(cache, row);
  }
}
