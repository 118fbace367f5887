// A batch of decisions on PostgreSQL in a fixed number of statements (decision 0318): one read of
// each kind of row for the whole batch, under its locks taken in one global order, and one write
// per table. Each statement's rows travel as one JSON parameter, so its text, and its named
// statement, is the same whatever the batch's size.

import { settledInOrder, type Row, type SqlDriver } from "./driver.js";
import { ColumnReader } from "./rows.js";
import { idempotencyFromRow, OPEN_HOLD_AT } from "./decision-sql.js";
import type {
  BatchReads,
  BatchWrites,
  CertificateRecord,
  ClaimedKey,
  DecisionBatchStore,
  GrantRecord,
  GrantUsage,
  PresentedGrant,
} from "./store.js";

/** A write of the batch that did not happen as the decisions assumed: the batch is rolled back and run one decision at a time. */
export class BatchWriteConflict extends Error {}

const GRANTS = new ColumnReader("grants");
const LEDGER = new ColumnReader("ledger");
const BREAKERS = new ColumnReader("breakers");
const CERTIFICATES = new ColumnReader("certificates");

/** The grants held as presented (one JSON parameter). */
const HELD =
  "SELECT h.id, h.root_id FROM grants h JOIN json_to_recordset(?::json) AS p(grant_id text, agent_id text) ON h.id = p.grant_id AND h.agent_id = p.agent_id";

const READ_ANSWERS = `SELECT k.* FROM idempotency_keys k
  JOIN json_to_recordset(?::json) AS p(caller_key_id text, idempotency_key text, expired_up_to bigint)
    ON k.caller_key_id = p.caller_key_id AND k.idempotency_key = p.idempotency_key AND k.created_at > p.expired_up_to`;
// INVARIANT (breaker-lock-first): the breakers of every agent of the batch, in id order, before any tree.
const LOCK_BREAKERS =
  "SELECT b.id, b.agent_id FROM breakers b WHERE b.agent_id IN (SELECT value FROM json_array_elements_text(?::json)) ORDER BY b.id FOR UPDATE OF b";
// INVARIANT (tree-serial): the trees' roots, in id order (rows are locked after the sort), before their reads.
const LOCK_TREES = `SELECT g.id FROM grants g WHERE g.id IN (SELECT held.root_id FROM (${HELD}) held) ORDER BY g.id FOR UPDATE OF g`;
const READ_CHAINS = `WITH RECURSIVE chain AS (
    SELECT h.* FROM grants h JOIN json_to_recordset(?::json) AS p(grant_id text, agent_id text) ON h.id = p.grant_id AND h.agent_id = p.agent_id
    UNION ALL
    SELECT g.* FROM grants g JOIN chain c ON g.id = c.parent_id
  ) SELECT DISTINCT ON (chain.id) chain.*, COALESCE(t.uses, 0) AS usage_uses, COALESCE(t.settled_minor, 0) AS usage_settled,
           (SELECT COALESCE(SUM(h.amount_minor), 0) FROM charges h WHERE h.grant_id = chain.id AND ${OPEN_HOLD_AT}) AS usage_held
      FROM chain LEFT JOIN grant_totals t ON t.grant_id = chain.id ORDER BY chain.id`;
const READ_HEADS = `SELECT r.tree_id, l.seq, l.hash FROM (SELECT DISTINCT held.root_id AS tree_id FROM (${HELD}) held) r
  CROSS JOIN LATERAL (SELECT seq, hash FROM ledger WHERE tree_id = r.tree_id ORDER BY seq DESC LIMIT 1) l`;
const READ_CERTIFICATES =
  "SELECT * FROM certificates WHERE agent_id IN (SELECT value FROM json_array_elements_text(?::json)) AND environment = ? AND revoked_at IS NULL ORDER BY id";

const LEDGER_RECORD =
  "id text, tree_id text, seq bigint, kind text, grant_id text, agent_id text, outcome text, record text, prev_hash text, hash text, created_at bigint";
const LEDGER_NAMES = "id, tree_id, seq, kind, grant_id, agent_id, outcome, record, prev_hash, hash, created_at";
// Each sealed record waits for its place in the Merkle log (decision 0621), in sealing order.
const WRITE_LEDGER = `WITH sealed AS (
    INSERT INTO ledger (${LEDGER_NAMES}) SELECT ${LEDGER_NAMES} FROM json_to_recordset(?::json) AS r(${LEDGER_RECORD}) RETURNING id
  ) INSERT INTO ledger_pending (ledger_id)
    SELECT s.id FROM sealed s JOIN json_array_elements_text(?::json) WITH ORDINALITY AS o(id, n) ON o.id = s.id ORDER BY o.n`;
const WRITE_SIGNALS = `INSERT INTO decision_signals (ledger_id, agent_id, at, signal)
  SELECT r.ledger_id, r.agent_id, r.at, r.signal FROM json_array_elements(?::json) WITH ORDINALITY AS e(v, n)
    CROSS JOIN LATERAL json_to_record(e.v) AS r(ledger_id text, agent_id text, at bigint, signal smallint) ORDER BY e.n`;
// In grant order: the totals' rows are locked in one global order.
const WRITE_USES = `INSERT INTO grant_totals (grant_id, uses, settled_minor)
  SELECT grant_id, uses, 0 FROM json_to_recordset(?::json) AS r(grant_id text, uses bigint) ORDER BY grant_id
  ON CONFLICT (grant_id) DO UPDATE SET uses = grant_totals.uses + excluded.uses`;
const CHARGE_NAMES = "id, ledger_id, grant_id, amount_minor, expires_at, settled_minor, settled_at, released_at, settlement_ledger_id";
const WRITE_CHARGES = `INSERT INTO charges (${CHARGE_NAMES}) SELECT ${CHARGE_NAMES} FROM json_to_recordset(?::json)
  AS r(id text, ledger_id text, grant_id text, amount_minor bigint, expires_at bigint, settled_minor bigint, settled_at bigint, released_at bigint, settlement_ledger_id text)`;
const ANSWER_NAMES = ["caller_key_id", "idempotency_key", "method", "path", "request_hash", "status", "response", "created_at"] as const;
// A free key is taken, an expired answer replaced, a live one left alone (and then counted missing).
const WRITE_ANSWERS = `INSERT INTO idempotency_keys (${ANSWER_NAMES.join(", ")}) SELECT ${ANSWER_NAMES.join(", ")} FROM json_to_recordset(?::json)
  AS r(caller_key_id text, idempotency_key text, method text, path text, request_hash text, status integer, response text, created_at bigint)
  ON CONFLICT (caller_key_id, idempotency_key) DO UPDATE SET
    ${ANSWER_NAMES.slice(2)
      .map((c) => `${c} = excluded.${c}`)
      .join(", ")}
  WHERE idempotency_keys.created_at <= ?`;

export class DecisionBatchSql implements DecisionBatchStore {
  readonly #db: SqlDriver;
  readonly #grantFromRow: (row: Row) => GrantRecord;
  readonly #certificateFromRow: (row: Row) => CertificateRecord;

  constructor(db: SqlDriver, grantFromRow: (row: Row) => GrantRecord, certificateFromRow: (row: Row) => CertificateRecord) {
    this.#db = db;
    this.#grantFromRow = grantFromRow;
    this.#certificateFromRow = certificateFromRow;
  }

  /**
   * One flight of six statements: the stored answers, the breakers' locks, the trees' locks, then
   * (each after the locks, READ COMMITTED taking a snapshot per statement) the chains with their
   * usage at `now`, the trees' heads and the certificates.
   */
  async read(claims: readonly ClaimedKey[], presented: readonly PresentedGrant[], environment: string, now: number): Promise<BatchReads> {
    const db = this.#db;
    const agents = JSON.stringify([...new Set(presented.map((p) => p.agent_id))]);
    const held = JSON.stringify(presented);
    const [answerRows, breakerRows, , chainRows, headRows, certificateRows] = (await settledInOrder([
      claims.length === 0 ? Promise.resolve([]) : db.all(READ_ANSWERS, [JSON.stringify(claims)]),
      db.all(LOCK_BREAKERS, [agents]),
      db.all(LOCK_TREES, [held]),
      db.all(READ_CHAINS, [held, now]),
      db.all(READ_HEADS, [held]),
      db.all(READ_CERTIFICATES, [agents, environment]),
    ])) as Row[][];
    const answers = answerRows!.map(idempotencyFromRow);
    const grants = new Map<string, GrantRecord>();
    const usage = new Map<string, GrantUsage>();
    for (const row of chainRows!) {
      const grant = this.#grantFromRow(row);
      grants.set(grant.id, grant);
      usage.set(grant.id, {
        uses: GRANTS.integer(row, "usage_uses"),
        held_minor: GRANTS.integer(row, "usage_held"),
        settled_minor: GRANTS.integer(row, "usage_settled"),
      });
    }
    const heads = new Map<string, { seq: number; hash: string }>();
    for (const row of headRows!)
      heads.set(LEDGER.text(row, "tree_id"), { seq: LEDGER.integer(row, "seq"), hash: LEDGER.text(row, "hash") });
    const certificates = new Map<string, CertificateRecord>();
    for (const row of certificateRows!) {
      const agentId = CERTIFICATES.text(row, "agent_id");
      if (!certificates.has(agentId)) certificates.set(agentId, this.#certificateFromRow(row));
    }
    return {
      answers,
      watchedAgents: new Set(breakerRows!.map((row) => BREAKERS.text(row, "agent_id"))),
      grants,
      usage,
      heads,
      certificates,
    };
  }

  /**
   * One flight of at most five statements, one per table (the ledger's with its Merkle queue).
   * Throws BatchWriteConflict when an answer's key was taken meanwhile by another transaction.
   */
  async write(writes: BatchWrites): Promise<void> {
    const db = this.#db;
    const uses = [...writes.uses].map(([grant_id, n]) => ({ grant_id, uses: n }));
    const [, , , , stored] = (await settledInOrder([
      writes.ledger.length === 0
        ? Promise.resolve(0)
        : db.run(WRITE_LEDGER, [JSON.stringify(writes.ledger), JSON.stringify(writes.ledger.map((row) => row.id))]),
      writes.signals.length === 0 ? Promise.resolve(0) : db.run(WRITE_SIGNALS, [JSON.stringify(writes.signals)]),
      uses.length === 0 ? Promise.resolve(0) : db.run(WRITE_USES, [JSON.stringify(uses)]),
      writes.charges.length === 0 ? Promise.resolve(0) : db.run(WRITE_CHARGES, [JSON.stringify(writes.charges)]),
      writes.answers.length === 0 ? Promise.resolve(0) : db.run(WRITE_ANSWERS, [JSON.stringify(writes.answers), writes.answersExpiredUpTo]),
    ])) as number[];
    if (stored !== writes.answers.length)
      throw new BatchWriteConflict(`${writes.answers.length - stored!} idempotency keys of the batch were taken meanwhile`);
  }
}
