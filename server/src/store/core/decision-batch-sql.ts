// A batch of decisions on PostgreSQL in a fixed number of statements (decision 0318, 0320): one
// read of each kind of row for the whole batch, under its locks taken in one global order, and one
// statement for every write. Each column of a statement's rows travels as one array parameter, so
// its text, and its named statement, is the same whatever the batch's size.

import { settledInOrder, type Row, type SqlDriver } from "../sql/index.js";
import { arrayLiteral } from "../sql/index.js";
import { ColumnReader } from "../sql/index.js";
import { approvalFromRow, idempotencyFromRow, OPEN_HOLD_AT, type DecisionApprovalRow, type DecisionStore } from "../decisions/index.js";
import type { BatchReadRequest, BatchReads, BatchWrites, CertificateRecord, DecisionBatchStore, GrantRecord, GrantUsage } from "./store.js";

/** A write of the batch that did not happen as the decisions assumed: the batch is rolled back and run one decision at a time. */
export class BatchWriteConflict extends Error {}

const GRANTS = new ColumnReader("grants");
const CERTIFICATES = new ColumnReader("certificates");
const BREAKERS = new ColumnReader("breakers");
const LEDGER = new ColumnReader("ledger");
const ANSWERS = new ColumnReader("idempotency_keys");

/**
 * Long texts (a sealed record, a stored answer) as one parameter, separated by U+001E: split by
 * `string_to_array`, which copies them, where an array literal's parser reads every character
 * and the server escapes every quote. JSON text never holds a raw control character; a text that
 * did would fail the batch, which then runs one decision at a time.
 */
const SEPARATOR = "\u001e";

function separated(values: readonly string[]): string {
  for (const value of values)
    if (value.includes(SEPARATOR) || value === "") throw new Error("a batch's long text is empty or holds U+001E");
  return values.join(SEPARATOR);
}

/** The grants held as presented: the presented grant ids and agent ids, two arrays. */
const HELD =
  "SELECT h.id, h.root_id, h.parent_id FROM grants h JOIN unnest(?::text[], ?::text[]) AS p(grant_id, agent_id) ON h.id = p.grant_id AND h.agent_id = p.agent_id";

const READ_ANSWERS = `SELECT k.* FROM idempotency_keys k
  JOIN unnest(?::text[], ?::text[], ?::bigint[]) AS p(caller_key_id, idempotency_key, expired_up_to)
    ON k.caller_key_id = p.caller_key_id AND k.idempotency_key = p.idempotency_key AND k.created_at > p.expired_up_to`;
// INVARIANT (breaker-lock-first): the breakers of every agent of the batch, in id order, before any tree.
const LOCK_BREAKERS = "SELECT b.id, b.agent_id FROM breakers b WHERE b.agent_id = ANY (?::text[]) ORDER BY b.id FOR UPDATE OF b";
// INVARIANT (tree-serial): the trees' roots, in id order (rows are locked after the sort), before their reads.
const LOCK_TREES = `SELECT g.id FROM grants g WHERE g.id IN (SELECT held.root_id FROM (${HELD}) held) ORDER BY g.id FOR UPDATE OF g`;
// Each chain's grants with their uses, settled amounts and live holds at `now`; a root's row
// carries its tree's chain head (none: the tree has no record yet).
const READ_CHAINS = `WITH RECURSIVE chain AS (
    SELECT h.* FROM grants h JOIN unnest(?::text[], ?::text[]) AS p(grant_id, agent_id) ON h.id = p.grant_id AND h.agent_id = p.agent_id
    UNION ALL
    SELECT g.* FROM grants g JOIN chain c ON g.id = c.parent_id
  ), grant_rows AS (SELECT DISTINCT ON (chain.id) chain.* FROM chain ORDER BY chain.id)
  SELECT r.*, COALESCE(t.uses, 0) AS usage_uses, COALESCE(t.settled_minor, 0) AS usage_settled,
         (SELECT COALESCE(SUM(h.amount_minor), 0) FROM charges h WHERE h.grant_id = r.id AND ${OPEN_HOLD_AT}) AS usage_held,
         head.seq AS head_seq, head.hash AS head_hash
    FROM grant_rows r LEFT JOIN grant_totals t ON t.grant_id = r.id
    LEFT JOIN LATERAL (SELECT l.seq, l.hash FROM ledger l WHERE r.parent_id IS NULL AND l.tree_id = r.id ORDER BY l.seq DESC LIMIT 1) head ON true
    ORDER BY r.id`;
// After the trees' locks: an approval is used only under its tree's lock, so what is read stays true.
const READ_APPROVALS = "SELECT * FROM decision_approvals WHERE id = ANY (?::text[])";
const READ_CERTIFICATES =
  "SELECT * FROM certificates WHERE agent_id = ANY (?::text[]) AND environment = ? AND revoked_at IS NULL ORDER BY id";

const LEDGER_NAMES = "id, tree_id, seq, kind, grant_id, agent_id, outcome, record, prev_hash, hash, created_at";
const CHARGE_NAMES = "id, ledger_id, grant_id, amount_minor, expires_at, settled_minor, settled_at, released_at, settlement_ledger_id";
const ANSWER_NAMES = ["caller_key_id", "idempotency_key", "method", "path", "request_hash", "status", "response", "created_at"] as const;
/**
 * Every write of the batch in one statement, one array per column (an empty array writes
 * nothing): the sealed records (the Merkle log follows each chain by itself, decision 1941); the breaker signals in order; the grants' totals in grant order (their rows locked in one
 * global order); the holds; the stored answers, a free key taken, an expired answer replaced, a
 * live one left alone. It answers how many answers were stored. The foreign keys of the signals
 * and the holds are checked at the statement's end, when the sealed records are in place.
 */
const WRITE_BATCH = `WITH sealing AS MATERIALIZED (
    SELECT * FROM unnest(?::text[], ?::text[], ?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], string_to_array(?, chr(30)),
        ?::text[], ?::text[], ?::bigint[])
      WITH ORDINALITY AS r(${LEDGER_NAMES}, n)
  ), sealed AS (
    INSERT INTO ledger (${LEDGER_NAMES}) SELECT ${LEDGER_NAMES} FROM sealing
  ), signalled AS (
    INSERT INTO decision_signals (ledger_id, agent_id, at, signal)
      SELECT ledger_id, agent_id, at, signal FROM unnest(?::text[], ?::text[], ?::bigint[], ?::smallint[])
        WITH ORDINALITY AS r(ledger_id, agent_id, at, signal, n) ORDER BY n
  ), counted AS (
    INSERT INTO grant_totals (grant_id, uses, settled_minor)
      SELECT grant_id, uses, 0 FROM unnest(?::text[], ?::bigint[]) AS r(grant_id, uses) ORDER BY grant_id
      ON CONFLICT (grant_id) DO UPDATE SET uses = grant_totals.uses + excluded.uses
  ), held AS (
    INSERT INTO charges (${CHARGE_NAMES}) SELECT ${CHARGE_NAMES}
      FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[]) AS r(${CHARGE_NAMES})
  ), stored AS (
    INSERT INTO idempotency_keys (${ANSWER_NAMES.join(", ")}) SELECT ${ANSWER_NAMES.join(", ")}
      FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::integer[], string_to_array(?, chr(30)), ?::bigint[]) AS r(${ANSWER_NAMES.join(", ")})
      ON CONFLICT (caller_key_id, idempotency_key) DO UPDATE SET
        ${ANSWER_NAMES.slice(2)
          .map((c) => `${c} = excluded.${c}`)
          .join(", ")}
      WHERE idempotency_keys.created_at <= ?
      RETURNING 1
  ), used AS (
    UPDATE decision_approvals a SET used_at = u.used_at, used_by_ledger_id = u.used_by_ledger_id
      FROM unnest(?::text[], ?::bigint[], ?::text[]) AS u(id, used_at, used_by_ledger_id)
      WHERE a.id = u.id AND a.used_at IS NULL
      RETURNING 1
  ) SELECT (SELECT count(*) FROM stored) AS stored, (SELECT count(*) FROM used) AS used`;

/** Each named column of `rows` as an array literal, in the order named; the long ones (`separate`) as one separated text. */
function columns<T>(rows: readonly T[], names: readonly (keyof T)[], separate?: keyof T): string[] {
  return names.map((name) =>
    name === separate
      ? separated(rows.map((row) => row[name] as string))
      : arrayLiteral(rows.map((row) => row[name] as string | number | null)),
  );
}

const LEDGER_COLUMNS = LEDGER_NAMES.split(", ") as (keyof BatchWrites["ledger"][number])[];
const SIGNAL_COLUMNS = ["ledger_id", "agent_id", "at", "signal"] as const;
const CHARGE_COLUMNS = CHARGE_NAMES.split(", ") as (keyof BatchWrites["charges"][number])[];
const APPROVAL_USE_COLUMNS = ["id", "used_at", "used_by_ledger_id"] as const;

export class DecisionBatchSql implements DecisionBatchStore {
  readonly #db: SqlDriver;
  readonly #grantFromRow: (row: Row) => GrantRecord;
  readonly #certificateFromRow: (row: Row) => CertificateRecord;
  readonly #decisions: DecisionStore;

  constructor(
    db: SqlDriver,
    decisions: DecisionStore,
    grantFromRow: (row: Row) => GrantRecord,
    certificateFromRow: (row: Row) => CertificateRecord,
  ) {
    this.#db = db;
    this.#decisions = decisions;
    this.#grantFromRow = grantFromRow;
    this.#certificateFromRow = certificateFromRow;
  }

  /**
   * One flight of at most six statements: the stored answers, the breakers' locks, the trees'
   * locks, then (each after the locks, READ COMMITTED taking a snapshot per statement) the chains
   * with their usage at `now` and their trees' heads, the approvals presented, and the certificates.
   */
  async read({ claims, presented, approvals: approvalIds }: BatchReadRequest, environment: string, now: number): Promise<BatchReads> {
    const db = this.#db;
    const agents = arrayLiteral([...new Set(presented.map((p) => p.agent_id))]);
    const held = columns(presented, ["grant_id", "agent_id"]);
    const [answerRows, breakerRows, , chainRows, approvalRows, certificateRows] = (await settledInOrder([
      claims.length === 0
        ? Promise.resolve([])
        : db.all(READ_ANSWERS, columns(claims, ["caller_key_id", "idempotency_key", "expired_up_to"])),
      db.all(LOCK_BREAKERS, [agents]),
      db.all(LOCK_TREES, held),
      db.all(READ_CHAINS, [...held, now]),
      approvalIds.length === 0 ? Promise.resolve([]) : db.all(READ_APPROVALS, [arrayLiteral(approvalIds)]),
      db.all(READ_CERTIFICATES, [agents, environment]),
    ])) as Row[][];
    const answers = answerRows!.map(idempotencyFromRow);
    const grants = new Map<string, GrantRecord>();
    const usage = new Map<string, GrantUsage>();
    const heads = new Map<string, { seq: number; hash: string }>();
    for (const row of chainRows!) {
      const grant = this.#grantFromRow(row);
      grants.set(grant.id, grant);
      usage.set(grant.id, {
        uses: GRANTS.integer(row, "usage_uses"),
        held_minor: GRANTS.integer(row, "usage_held"),
        settled_minor: GRANTS.integer(row, "usage_settled"),
      });
      if (row["head_seq"] !== null) heads.set(grant.id, { seq: LEDGER.integer(row, "head_seq"), hash: LEDGER.text(row, "head_hash") });
    }
    const certificates = new Map<string, CertificateRecord>();
    for (const row of certificateRows!) {
      const agentId = CERTIFICATES.text(row, "agent_id");
      if (!certificates.has(agentId)) certificates.set(agentId, this.#certificateFromRow(row));
    }
    const approvals = new Map<string, DecisionApprovalRow>();
    for (const row of approvalRows!) {
      const approval = approvalFromRow(row);
      approvals.set(approval.id, approval);
    }
    return {
      answers,
      approvals,
      watchedAgents: new Set(breakerRows!.map((row) => BREAKERS.text(row, "agent_id"))),
      grants,
      usage,
      heads,
      certificates,
    };
  }

  /** Each chain's named lock in id order, then its head (a rare case: a grant not held). */
  async ownChains(treeIds: readonly string[]): Promise<Map<string, { seq: number; hash: string }>> {
    const sorted = [...new Set(treeIds)].sort();
    const heads = new Map<string, { seq: number; hash: string }>();
    for (const treeId of sorted) await this.#decisions.lockChain(treeId);
    for (const treeId of sorted) {
      const head = await this.#decisions.ledgerHead(treeId);
      if (head !== undefined) heads.set(treeId, head);
    }
    return heads;
  }

  /**
   * One statement for every write. Throws BatchWriteConflict when an answer's key, or an approval,
   * was taken meanwhile by another transaction.
   */
  async write(writes: BatchWrites): Promise<void> {
    const uses = [...writes.uses].map(([grant_id, n]) => ({ grant_id, uses: n }));
    const row = await this.#db.get(WRITE_BATCH, [
      ...columns(writes.ledger, LEDGER_COLUMNS, "record"),
      ...columns(writes.signals, SIGNAL_COLUMNS),
      ...columns(uses, ["grant_id", "uses"]),
      ...columns(writes.charges, CHARGE_COLUMNS),
      ...columns(writes.answers, ANSWER_NAMES, "response"),
      writes.answersExpiredUpTo,
      ...columns(writes.approvalUses, APPROVAL_USE_COLUMNS),
    ]);
    const stored = ANSWERS.integer(row ?? {}, "stored");
    if (stored !== writes.answers.length)
      throw new BatchWriteConflict(`${writes.answers.length - stored} idempotency keys of the batch were taken meanwhile`);
    if (ANSWERS.integer(row ?? {}, "used") !== writes.approvalUses.length)
      throw new BatchWriteConflict("an approval of the batch was used meanwhile");
  }
}
