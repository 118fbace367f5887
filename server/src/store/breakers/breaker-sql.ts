// The records of behavioural contracts and circuit breakers over SQL (docs/breakers.md): contracts,
// breakers, their sealed trips and events, findings, and the contract signal of every decision.
// One copy of the SQL for both databases.

import type { Dialect, Row, SqlDriver, SqlValue } from "../sql/index.js";
import { CacheKind } from "../sql/index.js";
import { ColumnReader, insertSql, parameter, parameters, StoreRowError } from "../sql/index.js";

/**
 * The signal of a decision: what a contract reads of it, as one small integer, so that a replay of
 * a million decisions reads two narrow columns instead of a million sealed JSON records. The codes
 * are fixed forever (they are stored): 0 allow, 1 deny, 2 deny at the scope gate, 3 gated,
 * 4 exhausted. The outcome is `would_outcome` when the decision has one (decision 0203).
 */
export const SIGNAL = Object.freeze({ allow: 0, deny: 1, out_of_scope: 2, gated: 3, exhausted: 4 });
export const SIGNAL_COUNT = 5;

/**
 * `seq` is the order in which signals were written: within one millisecond it orders an agent's
 * decisions as they were decided (ledger ids are random within a millisecond), because the
 * decisions of an agent with breakers are evaluated one at a time (INVARIANT breaker-lock-first).
 */
const signalsTable = (dialect: Dialect): string => `
CREATE TABLE decision_signals (
  seq ${dialect === "sqlite" ? "INTEGER PRIMARY KEY" : "BIGSERIAL PRIMARY KEY"},
  ledger_id TEXT NOT NULL REFERENCES ledger(id),
  agent_id TEXT NOT NULL,
  at BIGINT NOT NULL,
  signal SMALLINT NOT NULL CHECK (signal >= 0 AND signal <= 4)
);
-- Covering: a window count and a replay read the index alone, in order.
CREATE INDEX decision_signals_agent_time ON decision_signals (agent_id, at, seq, signal);
`;

const tables = `
CREATE TABLE breaker_windows (
  agent_id TEXT PRIMARY KEY REFERENCES agents(id),
  state TEXT NOT NULL
);
CREATE TABLE contracts (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES agents(id),
  metric TEXT NOT NULL,
  ceiling DOUBLE PRECISION NOT NULL CHECK (ceiling >= 0 AND ceiling <= 1),
  window_decisions BIGINT,
  window_hours DOUBLE PRECISION,
  description TEXT,
  declared_by TEXT NOT NULL,
  declared_by_email TEXT,
  declared_at BIGINT NOT NULL,
  CHECK ((window_decisions IS NULL) <> (window_hours IS NULL))
);
CREATE INDEX contracts_agent ON contracts (agent_id);
CREATE TABLE breakers (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES agents(id),
  contract_id TEXT NOT NULL REFERENCES contracts(id),
  action TEXT NOT NULL CHECK (action IN ('notify', 'revoke')),
  mode TEXT NOT NULL CHECK (mode IN ('observe', 'armed')),
  breached SMALLINT NOT NULL,
  created_at BIGINT NOT NULL,
  created_by TEXT NOT NULL,
  armed_at BIGINT,
  armed_by TEXT,
  basis TEXT,
  expecting_trips BIGINT
);
CREATE INDEX breakers_agent ON breakers (agent_id);
CREATE TABLE breaker_events (
  id TEXT PRIMARY KEY,
  breaker_id TEXT NOT NULL REFERENCES breakers(id),
  kind TEXT NOT NULL,
  actor TEXT NOT NULL,
  at BIGINT NOT NULL,
  detail TEXT NOT NULL
);
CREATE INDEX breaker_events_breaker ON breaker_events (breaker_id);
CREATE TABLE breaker_trips (
  id TEXT PRIMARY KEY,
  breaker_id TEXT NOT NULL REFERENCES breakers(id),
  agent_id TEXT NOT NULL,
  contract_id TEXT NOT NULL,
  ledger_id TEXT NOT NULL,
  at BIGINT NOT NULL,
  mode TEXT NOT NULL,
  action TEXT NOT NULL,
  declared_by TEXT NOT NULL,
  armed_by TEXT,
  successes BIGINT NOT NULL,
  n BIGINT NOT NULL,
  lower_bound DOUBLE PRECISION NOT NULL,
  upper_bound DOUBLE PRECISION NOT NULL,
  grant_ids TEXT NOT NULL,
  finding_id TEXT
);
CREATE INDEX breaker_trips_breaker ON breaker_trips (breaker_id, at);
CREATE TABLE findings (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  breaker_id TEXT NOT NULL,
  trip_id TEXT NOT NULL,
  at BIGINT NOT NULL,
  detail TEXT NOT NULL
);
CREATE INDEX findings_agent ON findings (agent_id, id);
`;

const KEPT = ["contracts", "breakers", "findings"] as const;
const SEALED = ["decision_signals", "breaker_events", "breaker_trips"] as const;

/** The signal of the decisions sealed before this migration, read from their sealed records. */
function backfill(dialect: Dialect): string {
  const field = (name: string): string => (dialect === "sqlite" ? `json_extract(record, '$.${name}')` : `(record::jsonb ->> '${name}')`);
  const outcome = `COALESCE(${field("would_outcome")}, outcome)`;
  return `INSERT INTO decision_signals (ledger_id, agent_id, at, signal)
  SELECT id, agent_id, created_at,
    CASE ${outcome}
      WHEN 'allow' THEN 0
      WHEN 'deny' THEN CASE WHEN ${field("reason_code")} = 'scope.out_of_scope' THEN 2 ELSE 1 END
      WHEN 'gated' THEN 3
      ELSE 4
    END
  FROM ledger WHERE kind = 'decision' ORDER BY created_at, id;`;
}

function guards(dialect: Dialect): string {
  if (dialect === "sqlite") {
    return [
      ...[...KEPT, ...SEALED].map(
        (t) => `CREATE TRIGGER ${t}_kept BEFORE DELETE ON ${t} BEGIN SELECT RAISE(ABORT, '${t} records are never deleted'); END;`,
      ),
      ...SEALED.map((t) => `CREATE TRIGGER ${t}_sealed BEFORE UPDATE ON ${t} BEGIN SELECT RAISE(ABORT, '${t} records are sealed'); END;`),
    ].join("\n");
  }
  return [
    ...[...KEPT, ...SEALED].map(
      (t) => `
CREATE TRIGGER ${t}_kept BEFORE DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION authority_refuse_delete();
CREATE TRIGGER ${t}_kept_truncate BEFORE TRUNCATE ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION authority_refuse_delete();`,
    ),
    ...SEALED.map((t) => `CREATE TRIGGER ${t}_sealed BEFORE UPDATE ON ${t} FOR EACH ROW EXECUTE FUNCTION authority_refuse_update();`),
  ].join("\n");
}

/** Migration 4: contracts, breakers, trips, findings and the signal of every decision. */
export function breakersMigrationSql(dialect: Dialect): string {
  return `${signalsTable(dialect)}\n${tables}\n${backfill(dialect)}\n${guards(dialect)}`;
}

/** Tables of this module, for `Store.countRows`. */
export const BREAKER_TABLES = [
  "decision_signals",
  "breaker_windows",
  "contracts",
  "breakers",
  "breaker_events",
  "breaker_trips",
  "findings",
] as const;

export type ContractMetricName = "refusal_rate" | "deny_rate" | "gated_rate" | "exhausted_rate" | "out_of_scope_rate";

export interface ContractRow {
  readonly id: string;
  readonly agent_id: string;
  readonly metric: ContractMetricName;
  readonly ceiling: number;
  readonly window_decisions: number | null;
  readonly window_hours: number | null;
  readonly description: string | null;
  readonly declared_by: string;
  readonly declared_by_email: string | null;
  readonly declared_at: number;
}

export interface BreakerRow {
  readonly id: string;
  readonly agent_id: string;
  readonly contract_id: string;
  readonly action: "notify" | "revoke";
  readonly mode: "observe" | "armed";
  /** Whether the contract read `breached` after the agent's last decision: a trip is an entry. */
  readonly breached: boolean;
  readonly created_at: number;
  readonly created_by: string;
  readonly armed_at: number | null;
  readonly armed_by: string | null;
  readonly basis: string | null;
  readonly expecting_trips: number | null;
}

export interface BreakerEventRow {
  readonly id: string;
  readonly breaker_id: string;
  readonly kind: "created" | "armed" | "disarmed";
  readonly actor: string;
  readonly at: number;
  readonly detail: Readonly<Record<string, unknown>>;
}

export interface TripRow {
  readonly id: string;
  readonly breaker_id: string;
  readonly agent_id: string;
  readonly contract_id: string;
  /** The decision after which the contract entered `breached`. */
  readonly ledger_id: string;
  readonly at: number;
  readonly mode: "observe" | "armed";
  readonly action: "notify" | "revoke";
  readonly declared_by: string;
  readonly armed_by: string | null;
  readonly successes: number;
  readonly n: number;
  readonly lower_bound: number;
  readonly upper_bound: number;
  /** Revoked (armed `revoke`), or that would have been (observe `revoke`); empty for `notify`. */
  readonly grant_ids: readonly string[];
  readonly finding_id: string | null;
}

export interface FindingRow {
  readonly id: string;
  readonly kind: "breaker_trip";
  readonly agent_id: string;
  readonly breaker_id: string;
  readonly trip_id: string;
  readonly at: number;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** A breaker with the contract it watches, as the decision path reads them. */
export interface WatchedBreaker {
  readonly breaker: BreakerRow;
  readonly contract: ContractRow;
}

/** A window of signals, counted per signal code. */
export type SignalCounts = readonly number[];

/** Where a decision sorts among an agent's signals: its time, then the order signals were written. */
export type SignalKey = readonly [at: number, seq: number];

/**
 * The agent's windows as of its last evaluated decision (`head`): per window key, the decisions in
 * it, their counts per signal and the key of the oldest one. Derived state, rebuilt from the
 * sealed signals whenever it does not continue from the agent's previous decision.
 */
export interface WindowState {
  readonly head: SignalKey | null;
  readonly windows: Readonly<Record<string, { readonly n: number; readonly counts: readonly number[]; readonly tail: SignalKey | null }>>;
}

/** The breaker path's view of the store; `Store.breakerPath()` answers one bound to its connection. */
export interface BreakerStore {
  /** Answers the signal's `seq`. */
  insertSignal(ledgerId: string, agentId: string, at: number, signal: number): Promise<number>;
  /** Counts of each signal among the agent's last `size` decisions up to `at`. */
  countLastDecisions(agentId: string, size: number, at: number): Promise<SignalCounts>;
  /** Counts of each signal among the agent's decisions with time in (`from`, `to`]. */
  countBetween(agentId: string, from: number, to: number): Promise<SignalCounts>;
  /** The agent's stored window state. */
  windowState(agentId: string): Promise<WindowState | undefined>;
  putWindowState(agentId: string, state: WindowState): Promise<void>;
  /** The key of the agent's decision just before `key`, or null. */
  previousSignal(agentId: string, key: SignalKey): Promise<SignalKey | null>;
  /** At most `limit` signals from `key` on (inclusive), in order. */
  signalsFrom(agentId: string, key: SignalKey, limit: number): Promise<{ at: number; seq: number; signal: number }[]>;
  /** The key of the oldest of the agent's last `size` decisions up to `at`. */
  oldestOfLast(agentId: string, size: number, at: number): Promise<SignalKey | null>;
  /** The key of the agent's first decision with time after `from`. */
  firstAfter(agentId: string, from: number): Promise<SignalKey | null>;
  /** Counts of each signal from `key` on (inclusive) with time at most `until`. */
  countFromUntil(agentId: string, key: SignalKey, until: number): Promise<SignalCounts>;
  /** The agent's signals with time in (`from`, `to`], in order of time then ledger id: one page after the cursor. */
  signalPage(
    agentId: string,
    from: number,
    to: number,
    after: SignalKey | null,
    limit: number,
  ): Promise<{ at: number; seq: number; signal: number }[]>;

  insertContract(row: ContractRow): Promise<void>;
  getContract(id: string): Promise<ContractRow | undefined>;
  listContracts(agentId: string): Promise<ContractRow[]>;

  insertBreaker(row: BreakerRow): Promise<void>;
  getBreaker(id: string): Promise<BreakerRow | undefined>;
  listBreakers(agentId: string): Promise<BreakerRow[]>;
  /** The agent's breakers with their contracts, row-locked until the transaction ends (PostgreSQL). */
  watchedBreakers(agentId: string, lock: boolean): Promise<readonly WatchedBreaker[]>;
  setBreached(id: string, breached: boolean): Promise<void>;
  /** Moves the mode from `from` to `to` with the arming fields; answers whether it did. */
  setMode(
    id: string,
    from: BreakerRow["mode"],
    to: BreakerRow["mode"],
    arming: { at: number | null; by: string | null; basis: string | null; expecting_trips: number | null },
  ): Promise<boolean>;
  appendEvent(row: BreakerEventRow): Promise<void>;
  listEvents(breakerId: string): Promise<BreakerEventRow[]>;

  insertTrip(row: TripRow): Promise<void>;
  listTrips(breakerId: string): Promise<TripRow[]>;
  insertFinding(row: FindingRow): Promise<void>;
  listFindings(filter: { agent_id?: string | undefined }, after: string | undefined, limit: number): Promise<FindingRow[]>;
  /** Ids of the agent's grants that are not revoked, and of every descendant not revoked, roots first. */
  liveGrantTreesOf(agentId: string): Promise<{ roots: string[]; all: string[] }>;
}

/** An agent's breakers with their contracts, by agent id, in the decision cache. */
const WATCHED_BREAKERS = new CacheKind<readonly WatchedBreaker[]>();

const CONTRACTS = new ColumnReader("contracts");
const BREAKERS = new ColumnReader("breakers");
const TRIPS = new ColumnReader("breaker_trips");
const EVENTS = new ColumnReader("breaker_events");
const FINDINGS = new ColumnReader("findings");
const SIGNALS = new ColumnReader("decision_signals");
const WINDOWS = new ColumnReader("breaker_windows");
const GRANTS = new ColumnReader("grants");

const METRICS: readonly ContractMetricName[] = ["refusal_rate", "deny_rate", "gated_rate", "exhausted_rate", "out_of_scope_rate"];
const ACTIONS: readonly BreakerRow["action"][] = ["notify", "revoke"];
const MODES: readonly BreakerRow["mode"][] = ["observe", "armed"];
const EVENT_KINDS: readonly BreakerEventRow["kind"][] = ["created", "armed", "disarmed"];
const FINDING_KINDS: readonly FindingRow["kind"][] = ["breaker_trip"];

const CONTRACT_COLUMNS = [
  "id",
  "agent_id",
  "metric",
  "ceiling",
  "window_decisions",
  "window_hours",
  "description",
  "declared_by",
  "declared_by_email",
  "declared_at",
] as const;
const BREAKER_COLUMNS = [
  "id",
  "agent_id",
  "contract_id",
  "action",
  "mode",
  "breached",
  "created_at",
  "created_by",
  "armed_at",
  "armed_by",
  "basis",
  "expecting_trips",
] as const;
const TRIP_COLUMNS = [
  "id",
  "breaker_id",
  "agent_id",
  "contract_id",
  "ledger_id",
  "at",
  "mode",
  "action",
  "declared_by",
  "armed_by",
  "successes",
  "n",
  "lower_bound",
  "upper_bound",
  "grant_ids",
  "finding_id",
] as const;

function contractFromRow(row: Row, prefix = ""): ContractRow {
  const c = CONTRACTS;
  const k = (column: string): string => prefix + column;
  return {
    id: c.text(row, k("id")),
    agent_id: c.text(row, k("agent_id")),
    metric: c.oneOf(row, k("metric"), METRICS),
    ceiling: c.real(row, k("ceiling")),
    window_decisions: c.integerOrNull(row, k("window_decisions")),
    window_hours: c.realOrNull(row, k("window_hours")),
    description: c.textOrNull(row, k("description")),
    declared_by: c.text(row, k("declared_by")),
    declared_by_email: c.textOrNull(row, k("declared_by_email")),
    declared_at: c.integer(row, k("declared_at")),
  };
}

function breakerFromRow(row: Row): BreakerRow {
  const c = BREAKERS;
  return {
    id: c.text(row, "id"),
    agent_id: c.text(row, "agent_id"),
    contract_id: c.text(row, "contract_id"),
    action: c.oneOf(row, "action", ACTIONS),
    mode: c.oneOf(row, "mode", MODES),
    breached: c.flag(row, "breached"),
    created_at: c.integer(row, "created_at"),
    created_by: c.text(row, "created_by"),
    armed_at: c.integerOrNull(row, "armed_at"),
    armed_by: c.textOrNull(row, "armed_by"),
    basis: c.textOrNull(row, "basis"),
    expecting_trips: c.integerOrNull(row, "expecting_trips"),
  };
}

function tripFromRow(row: Row): TripRow {
  const c = TRIPS;
  return {
    id: c.text(row, "id"),
    breaker_id: c.text(row, "breaker_id"),
    agent_id: c.text(row, "agent_id"),
    contract_id: c.text(row, "contract_id"),
    ledger_id: c.text(row, "ledger_id"),
    at: c.integer(row, "at"),
    mode: c.oneOf(row, "mode", MODES),
    action: c.oneOf(row, "action", ACTIONS),
    declared_by: c.text(row, "declared_by"),
    armed_by: c.textOrNull(row, "armed_by"),
    successes: c.integer(row, "successes"),
    n: c.integer(row, "n"),
    lower_bound: c.real(row, "lower_bound"),
    upper_bound: c.real(row, "upper_bound"),
    grant_ids: c.jsonStrings(row, "grant_ids"),
    finding_id: c.textOrNull(row, "finding_id"),
  };
}

function eventFromRow(row: Row): BreakerEventRow {
  const c = EVENTS;
  return {
    id: c.text(row, "id"),
    breaker_id: c.text(row, "breaker_id"),
    kind: c.oneOf(row, "kind", EVENT_KINDS),
    actor: c.text(row, "actor"),
    at: c.integer(row, "at"),
    detail: c.jsonObject(row, "detail"),
  };
}

function findingFromRow(row: Row): FindingRow {
  const c = FINDINGS;
  return {
    id: c.text(row, "id"),
    kind: c.oneOf(row, "kind", FINDING_KINDS),
    agent_id: c.text(row, "agent_id"),
    breaker_id: c.text(row, "breaker_id"),
    trip_id: c.text(row, "trip_id"),
    at: c.integer(row, "at"),
    detail: c.jsonObject(row, "detail"),
  };
}

/** A signal's code: one of the SIGNAL codes. */
function signalCode(row: Row): number {
  const signal = SIGNALS.integer(row, "signal");
  if (signal < 0 || signal >= SIGNAL_COUNT)
    throw new StoreRowError("decision_signals", "signal", `a signal code below ${SIGNAL_COUNT}`, signal);
  return signal;
}

function signalFromRow(row: Row): { at: number; seq: number; signal: number } {
  return { at: SIGNALS.integer(row, "at"), seq: SIGNALS.integer(row, "seq"), signal: signalCode(row) };
}

function keyFromRow(row: Row): SignalKey {
  return [SIGNALS.integer(row, "at"), SIGNALS.integer(row, "seq")];
}

function countsOf(rows: readonly Row[]): number[] {
  const counts = new Array<number>(SIGNAL_COUNT).fill(0);
  for (const row of rows) counts[signalCode(row)] = SIGNALS.integer(row, "c");
  return counts;
}

/** The stored window state: JSON of the shape `putWindowState` writes (the breaker path rebuilds it when it does not fit). */
function isWindowState(value: Record<string, unknown>): value is Record<string, unknown> & WindowState {
  const head = value["head"];
  const windows = value["windows"];
  return (
    (head === null || isSignalKey(head)) &&
    windows !== null &&
    typeof windows === "object" &&
    !Array.isArray(windows) &&
    Object.values(windows).every((w: unknown) => w !== null && typeof w === "object" && isWindow(w))
  );
}

function isSignalKey(value: unknown): value is SignalKey {
  return Array.isArray(value) && value.length === 2 && value.every((x) => Number.isSafeInteger(x));
}

function isWindow(w: object): boolean {
  const n: unknown = "n" in w ? w.n : undefined;
  const counts: unknown = "counts" in w ? w.counts : undefined;
  const tail: unknown = "tail" in w ? w.tail : undefined;
  return (
    Number.isSafeInteger(n) && Array.isArray(counts) && counts.every((x) => Number.isSafeInteger(x)) && (tail === null || isSignalKey(tail))
  );
}

export class BreakerSql implements BreakerStore {
  readonly #db: SqlDriver;

  constructor(db: SqlDriver) {
    this.#db = db;
  }

  async insertSignal(ledgerId: string, agentId: string, at: number, signal: number): Promise<number> {
    const sql = "INSERT INTO decision_signals (ledger_id, agent_id, at, signal) VALUES (?, ?, ?, ?)";
    const values = [ledgerId, agentId, at, signal];
    if (this.#db.insertRowId !== undefined) return this.#db.insertRowId(sql, values);
    return SIGNALS.integer((await this.#db.get(`${sql} RETURNING seq`, values)) ?? {}, "seq");
  }

  async countLastDecisions(agentId: string, size: number, at: number): Promise<SignalCounts> {
    return countsOf(
      await this.#db.all(
        `SELECT signal, COUNT(*) AS c FROM (
         SELECT signal FROM decision_signals WHERE agent_id = ? AND at <= ? ORDER BY at DESC, seq DESC LIMIT ?
       ) w GROUP BY signal`,
        [agentId, at, size],
      ),
    );
  }

  async countBetween(agentId: string, from: number, to: number): Promise<SignalCounts> {
    return countsOf(
      await this.#db.all("SELECT signal, COUNT(*) AS c FROM decision_signals WHERE agent_id = ? AND at > ? AND at <= ? GROUP BY signal", [
        agentId,
        from,
        to,
      ]),
    );
  }

  async signalPage(
    agentId: string,
    from: number,
    to: number,
    after: SignalKey | null,
    limit: number,
  ): Promise<{ at: number; seq: number; signal: number }[]> {
    const rows =
      after === null
        ? await this.#db.all(
            "SELECT at, seq, signal FROM decision_signals WHERE agent_id = ? AND at > ? AND at <= ? ORDER BY at, seq LIMIT ?",
            [agentId, from, to, limit],
          )
        : await this.#db.all(
            `SELECT at, seq, signal FROM (
           SELECT * FROM (SELECT at, seq, signal FROM decision_signals WHERE agent_id = ? AND at = ? AND seq > ? ORDER BY seq LIMIT ?) same_time
           UNION ALL
           SELECT * FROM (SELECT at, seq, signal FROM decision_signals WHERE agent_id = ? AND at > ? AND at <= ? ORDER BY at, seq LIMIT ?) later
         ) w ORDER BY at, seq LIMIT ?`,
            [agentId, after[0], after[1], limit, agentId, after[0], to, limit, limit],
          );
    return rows.map(signalFromRow);
  }

  async windowState(agentId: string): Promise<WindowState | undefined> {
    const row = await this.#db.get("SELECT state FROM breaker_windows WHERE agent_id = ?", [agentId]);
    if (row === undefined) return undefined;
    const state = WINDOWS.jsonObject(row, "state");
    if (!isWindowState(state)) throw new StoreRowError("breaker_windows", "state", "a window state", row["state"]);
    return state;
  }

  async putWindowState(agentId: string, state: WindowState): Promise<void> {
    await this.#db.run(
      "INSERT INTO breaker_windows (agent_id, state) VALUES (?, ?) ON CONFLICT (agent_id) DO UPDATE SET state = excluded.state",
      [agentId, JSON.stringify(state)],
    );
  }

  async previousSignal(agentId: string, key: SignalKey): Promise<SignalKey | null> {
    // Two index ranges rather than one row-value comparison, which SQLite does not bound by the index.
    const row = await this.#db.get(
      `SELECT at, seq FROM (
         SELECT * FROM (SELECT at, seq FROM decision_signals WHERE agent_id = ? AND at = ? AND seq < ? ORDER BY seq DESC LIMIT 1) same_time
         UNION ALL
         SELECT * FROM (SELECT at, seq FROM decision_signals WHERE agent_id = ? AND at < ? ORDER BY at DESC, seq DESC LIMIT 1) earlier
       ) w ORDER BY at DESC, seq DESC LIMIT 1`,
      [agentId, key[0], key[1], agentId, key[0]],
    );
    return row === undefined ? null : keyFromRow(row);
  }

  async signalsFrom(agentId: string, key: SignalKey, limit: number): Promise<{ at: number; seq: number; signal: number }[]> {
    // Two index ranges, the second only when the first falls short: at most two index seeks.
    const rows = await this.#db.all(
      "SELECT at, seq, signal FROM decision_signals WHERE agent_id = ? AND at = ? AND seq >= ? ORDER BY seq LIMIT ?",
      [agentId, key[0], key[1], limit],
    );
    if (rows.length < limit) {
      rows.push(
        ...(await this.#db.all("SELECT at, seq, signal FROM decision_signals WHERE agent_id = ? AND at > ? ORDER BY at, seq LIMIT ?", [
          agentId,
          key[0],
          limit - rows.length,
        ])),
      );
    }
    return rows.map(signalFromRow);
  }

  async oldestOfLast(agentId: string, size: number, at: number): Promise<SignalKey | null> {
    const row = await this.#db.get(
      `SELECT at, seq FROM (
         SELECT at, seq FROM decision_signals WHERE agent_id = ? AND at <= ? ORDER BY at DESC, seq DESC LIMIT ?
       ) w ORDER BY at, seq LIMIT 1`,
      [agentId, at, size],
    );
    return row === undefined ? null : keyFromRow(row);
  }

  async firstAfter(agentId: string, from: number): Promise<SignalKey | null> {
    const row = await this.#db.get("SELECT at, seq FROM decision_signals WHERE agent_id = ? AND at > ? ORDER BY at, seq LIMIT 1", [
      agentId,
      from,
    ]);
    return row === undefined ? null : keyFromRow(row);
  }

  async countFromUntil(agentId: string, key: SignalKey, until: number): Promise<SignalCounts> {
    return countsOf(
      await this.#db.all(
        `SELECT signal, COUNT(*) AS c FROM (
         SELECT signal FROM decision_signals WHERE agent_id = ? AND at = ? AND seq >= ? AND at <= ?
         UNION ALL
         SELECT signal FROM decision_signals WHERE agent_id = ? AND at > ? AND at <= ?
       ) w GROUP BY signal`,
        [agentId, key[0], key[1], until, agentId, key[0], until],
      ),
    );
  }

  async insertContract(row: ContractRow): Promise<void> {
    await this.#db.run(insertSql("contracts", CONTRACT_COLUMNS), parameters(row, CONTRACT_COLUMNS));
  }

  async getContract(id: string): Promise<ContractRow | undefined> {
    const row = await this.#db.get("SELECT * FROM contracts WHERE id = ?", [id]);
    return row && contractFromRow(row);
  }

  async listContracts(agentId: string): Promise<ContractRow[]> {
    return (await this.#db.all("SELECT * FROM contracts WHERE agent_id = ? ORDER BY id", [agentId])).map((r) => contractFromRow(r));
  }

  async insertBreaker(row: BreakerRow): Promise<void> {
    await this.#db.run(insertSql("breakers", BREAKER_COLUMNS), parameters(row, BREAKER_COLUMNS));
  }

  async getBreaker(id: string): Promise<BreakerRow | undefined> {
    const row = await this.#db.get("SELECT * FROM breakers WHERE id = ?", [id]);
    return row && breakerFromRow(row);
  }

  async listBreakers(agentId: string): Promise<BreakerRow[]> {
    return (await this.#db.all("SELECT * FROM breakers WHERE agent_id = ? ORDER BY id", [agentId])).map(breakerFromRow);
  }

  async watchedBreakers(agentId: string, lock: boolean): Promise<readonly WatchedBreaker[]> {
    // Inside a SQLite batch the agent's breakers are kept (INVARIANT decision-cache): another
    // connection's change empties the cache before the batch, and this connection's own change of
    // a breaker (`setBreached`) empties it at once. On PostgreSQL the rows are locked every time.
    const cache = this.#db.decisionCache;
    const cached = cache === undefined ? undefined : WATCHED_BREAKERS.get(cache, agentId);
    if (cached !== undefined) return cached;
    const forUpdate = lock && this.#db.dialect === "postgres" ? " FOR UPDATE OF b" : "";
    const rows = await this.#db.all(
      `SELECT b.*, c.id AS c_id, c.agent_id AS c_agent_id, c.metric AS c_metric, c.ceiling AS c_ceiling,
              c.window_decisions AS c_window_decisions, c.window_hours AS c_window_hours, c.description AS c_description,
              c.declared_by AS c_declared_by, c.declared_by_email AS c_declared_by_email, c.declared_at AS c_declared_at
         FROM breakers b JOIN contracts c ON c.id = b.contract_id WHERE b.agent_id = ? ORDER BY b.id${forUpdate}`,
      [agentId],
    );
    const watched = rows.map((row) =>
      Object.freeze({ breaker: Object.freeze(breakerFromRow(row)), contract: Object.freeze(contractFromRow(row, "c_")) }),
    );
    if (cache !== undefined) WATCHED_BREAKERS.set(cache, agentId, Object.freeze(watched));
    return watched;
  }

  async setBreached(id: string, breached: boolean): Promise<void> {
    // Rare (a contract entering or leaving `breached`); the kept breakers are read again after it.
    this.#db.decisionCache?.clear();
    await this.#db.run("UPDATE breakers SET breached = ? WHERE id = ?", [parameter(breached, "breached"), id]);
  }

  async setMode(
    id: string,
    from: BreakerRow["mode"],
    to: BreakerRow["mode"],
    a: { at: number | null; by: string | null; basis: string | null; expecting_trips: number | null },
  ): Promise<boolean> {
    const changed = await this.#db.run(
      "UPDATE breakers SET mode = ?, armed_at = ?, armed_by = ?, basis = ?, expecting_trips = ? WHERE id = ? AND mode = ?",
      [to, a.at, a.by, a.basis, a.expecting_trips, id, from],
    );
    return changed === 1;
  }

  async appendEvent(row: BreakerEventRow): Promise<void> {
    const columns = ["id", "breaker_id", "kind", "actor", "at", "detail"] as const;
    await this.#db.run(insertSql("breaker_events", columns), parameters(row, columns));
  }

  async listEvents(breakerId: string): Promise<BreakerEventRow[]> {
    const rows = await this.#db.all("SELECT * FROM breaker_events WHERE breaker_id = ? ORDER BY id", [breakerId]);
    return rows.map(eventFromRow);
  }

  async insertTrip(row: TripRow): Promise<void> {
    await this.#db.run(insertSql("breaker_trips", TRIP_COLUMNS), parameters(row, TRIP_COLUMNS));
  }

  async listTrips(breakerId: string): Promise<TripRow[]> {
    return (await this.#db.all("SELECT * FROM breaker_trips WHERE breaker_id = ? ORDER BY at, id", [breakerId])).map(tripFromRow);
  }

  async insertFinding(row: FindingRow): Promise<void> {
    const columns = ["id", "kind", "agent_id", "breaker_id", "trip_id", "at", "detail"] as const;
    await this.#db.run(insertSql("findings", columns), parameters(row, columns));
  }

  async listFindings(filter: { agent_id?: string | undefined }, after: string | undefined, limit: number): Promise<FindingRow[]> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (filter.agent_id !== undefined) {
      where.push("agent_id = ?");
      params.push(filter.agent_id);
    }
    if (after !== undefined) {
      where.push("id > ?");
      params.push(after);
    }
    params.push(limit);
    const rows = await this.#db.all(
      `SELECT * FROM findings${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY id LIMIT ?`,
      params,
    );
    return rows.map(findingFromRow);
  }

  async liveGrantTreesOf(agentId: string): Promise<{ roots: string[]; all: string[] }> {
    const roots = (
      await this.#db.all("SELECT id FROM grants WHERE agent_id = ? AND status <> 'revoked' ORDER BY depth, id", [agentId])
    ).map((r) => GRANTS.text(r, "id"));
    if (roots.length === 0) return { roots, all: [] };
    const rows = await this.#db.all(
      `WITH RECURSIVE tree AS (
         SELECT id, depth FROM grants WHERE agent_id = ? AND status <> 'revoked'
         UNION
         SELECT g.id, g.depth FROM grants g JOIN tree t ON g.parent_id = t.id
       ) SELECT DISTINCT tree.id, tree.depth FROM tree JOIN grants g ON g.id = tree.id WHERE g.status <> 'revoked' ORDER BY tree.depth, tree.id`,
      [agentId],
    );
    return { roots, all: rows.map((r) => GRANTS.text(r, "id")) };
  }
}
