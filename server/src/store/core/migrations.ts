// Versioned schema migrations, applied in order at start and by `authority migrate`. A migration
// is never edited once released: a change is a new version.

import type { Dialect, SqlDriver } from "../sql/index.js";
import { DECISION_PATH_SQL, GRANT_TOTALS_SQL } from "../decisions/index.js";
import { breakersMigrationSql } from "../breakers/index.js";
import { familiesMigrationSql } from "../families/index.js";
import { eventsMigrationSql } from "../events/index.js";
import { signingMigrationSql } from "../ledger/index.js";
import { ledgerCursorsMigrationSql, ledgerLogMigrationSql } from "../ledger/index.js";
import { checkSignalSequence, POSTGRESQL_PROFILE, prepareLockTable, takeNamedLock, type EngineProfile } from "../sql/index.js";

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: Readonly<Record<Dialect, string>>;
}

/**
 * Tables whose rows are never deleted (revocation and supersession are fields). Idempotency keys
 * are absent on purpose: they need only be kept 24 hours (docs/decisions.md) and may be pruned.
 */
const KEPT_TABLES = ["agents", "api_keys", "certificates", "grants", "grant_events", "charges", "decision_approvals"] as const;
/** Tables whose rows are sealed: never updated, never deleted (docs/decisions.md). */
const SEALED_TABLES = ["grant_events", "ledger"] as const;

const tables = `
CREATE TABLE agents (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT,
  created_at BIGINT NOT NULL,
  created_by TEXT NOT NULL
);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,
  identity TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('human', 'service')),
  roles TEXT NOT NULL,
  agent_id TEXT REFERENCES agents(id),
  email TEXT,
  created_at BIGINT NOT NULL,
  created_by TEXT,
  revoked_at BIGINT,
  revoked_by TEXT,
  revocation_reason TEXT
);
CREATE TABLE certificates (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL REFERENCES agents(id),
  environment TEXT NOT NULL,
  issued_by TEXT NOT NULL,
  issued_by_email TEXT,
  issued_at BIGINT NOT NULL,
  basis TEXT NOT NULL,
  provenance_version TEXT NOT NULL,
  manifest_hash TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  market_profile TEXT,
  checks TEXT NOT NULL,
  revoked_at BIGINT,
  revoked_by TEXT,
  revocation_reason TEXT,
  superseded_by TEXT
);
CREATE INDEX certificates_agent ON certificates (agent_id, environment);
CREATE UNIQUE INDEX certificates_one_valid ON certificates (agent_id, environment) WHERE revoked_at IS NULL;
CREATE TABLE grants (
  id TEXT PRIMARY KEY,
  root_id TEXT NOT NULL,
  parent_id TEXT REFERENCES grants(id),
  depth INTEGER NOT NULL,
  agent_id TEXT NOT NULL REFERENCES agents(id),
  principal_type TEXT NOT NULL CHECK (principal_type IN ('human', 'team', 'service')),
  principal_id TEXT NOT NULL,
  scope TEXT NOT NULL,
  budget_amount_minor BIGINT NOT NULL CHECK (budget_amount_minor >= 0),
  budget_currency TEXT,
  budget_count BIGINT CHECK (budget_count IS NULL OR budget_count >= 0),
  ttl_hours INTEGER NOT NULL,
  conditions TEXT NOT NULL,
  policy TEXT,
  delegation_policy TEXT NOT NULL CHECK (delegation_policy IN ('none', 'attenuating')),
  delegation_depth_max INTEGER,
  audience TEXT,
  enforcement_mode TEXT NOT NULL CHECK (enforcement_mode IN ('observe', 'enforce')),
  status TEXT NOT NULL CHECK (status IN ('pending_approval', 'active', 'revoked')),
  approval_required INTEGER NOT NULL,
  issued_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  issued_by TEXT NOT NULL,
  approved_by TEXT,
  approved_at BIGINT,
  family_id TEXT,
  family_version TEXT,
  revoked_at BIGINT,
  revoked_by TEXT,
  revocation_reason TEXT
);
CREATE INDEX grants_parent ON grants (parent_id);
CREATE INDEX grants_root ON grants (root_id);
CREATE INDEX grants_agent ON grants (agent_id);
CREATE INDEX grants_status ON grants (status);
CREATE TABLE grant_events (
  id TEXT PRIMARY KEY,
  grant_id TEXT NOT NULL REFERENCES grants(id),
  kind TEXT NOT NULL,
  actor TEXT NOT NULL,
  at BIGINT NOT NULL,
  detail TEXT NOT NULL
);
CREATE INDEX grant_events_grant ON grant_events (grant_id);
CREATE TABLE ledger (
  id TEXT PRIMARY KEY,
  tree_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('decision', 'settlement')),
  grant_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  outcome TEXT,
  record TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  UNIQUE (tree_id, seq)
);
CREATE INDEX ledger_grant ON ledger (grant_id);
CREATE INDEX ledger_agent_time ON ledger (agent_id, created_at);
CREATE TABLE charges (
  id TEXT PRIMARY KEY,
  ledger_id TEXT NOT NULL REFERENCES ledger(id),
  grant_id TEXT NOT NULL REFERENCES grants(id),
  amount_minor BIGINT NOT NULL CHECK (amount_minor >= 0),
  expires_at BIGINT NOT NULL,
  settled_minor BIGINT,
  settled_at BIGINT,
  released_at BIGINT
);
CREATE INDEX charges_grant ON charges (grant_id);
CREATE INDEX charges_ledger ON charges (ledger_id);
CREATE TABLE decision_approvals (
  id TEXT PRIMARY KEY,
  ledger_id TEXT NOT NULL REFERENCES ledger(id),
  grant_id TEXT NOT NULL REFERENCES grants(id),
  tool TEXT NOT NULL,
  amount_ceiling_minor BIGINT NOT NULL CHECK (amount_ceiling_minor >= 0),
  currency TEXT,
  approver TEXT NOT NULL,
  approved_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT,
  used_by_ledger_id TEXT
);
CREATE INDEX decision_approvals_ledger ON decision_approvals (ledger_id);
CREATE TABLE idempotency_keys (
  caller_key_id TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  method TEXT NOT NULL,
  path TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  status INTEGER NOT NULL,
  response TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (caller_key_id, idempotency_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
`;

function sqliteGuards(): string {
  const keep = KEPT_TABLES.map(
    (t) => `CREATE TRIGGER ${t}_kept BEFORE DELETE ON ${t} BEGIN SELECT RAISE(ABORT, '${t} records are never deleted'); END;`,
  );
  const seal = SEALED_TABLES.map(
    (t) => `CREATE TRIGGER ${t}_sealed BEFORE UPDATE ON ${t} BEGIN SELECT RAISE(ABORT, '${t} records are sealed'); END;`,
  );
  const ledgerDelete =
    "CREATE TRIGGER ledger_kept BEFORE DELETE ON ledger BEGIN SELECT RAISE(ABORT, 'ledger records are never deleted'); END;";
  return [...keep, ...seal, ledgerDelete].join("\n");
}

function postgresGuards(): string {
  const functions = `
CREATE FUNCTION authority_refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION '% records are never deleted', TG_TABLE_NAME; END $$;
CREATE FUNCTION authority_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION '% records are sealed', TG_TABLE_NAME; END $$;`;
  const keep = [...KEPT_TABLES, "ledger"].map(
    (t) => `
CREATE TRIGGER ${t}_kept BEFORE DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION authority_refuse_delete();
CREATE TRIGGER ${t}_kept_truncate BEFORE TRUNCATE ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION authority_refuse_delete();`,
  );
  const seal = SEALED_TABLES.map(
    (t) => `CREATE TRIGGER ${t}_sealed BEFORE UPDATE ON ${t} FOR EACH ROW EXECUTE FUNCTION authority_refuse_update();`,
  );
  return [functions, ...keep, ...seal].join("\n");
}

/**
 * A JSON array of agent ids, NULL for every key but an `enforcer`'s. On PostgreSQL the statement
 * may run again on a schema that has the column (replicas upgrading together, each in its turn).
 */
const ENFORCER_AGENTS_SQL = {
  sqlite: "ALTER TABLE api_keys ADD COLUMN agent_ids TEXT;",
  postgres: "ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS agent_ids TEXT;",
};

const LEDGER_GATED_SQL = `
CREATE INDEX IF NOT EXISTS ledger_gated ON ledger (id) WHERE kind = 'decision' AND outcome = 'gated';
DROP INDEX IF EXISTS ledger_grant;
`;

export const MIGRATIONS: readonly Migration[] = Object.freeze([
  {
    version: 1,
    name: "keys, agents, certificates, grants, events, ledger and charges",
    sql: { sqlite: tables + sqliteGuards(), postgres: tables + postgresGuards() },
  },
  {
    version: 2,
    name: "decision path: settlement records on charges, one approval per gated decision",
    sql: { sqlite: DECISION_PATH_SQL, postgres: DECISION_PATH_SQL },
  },
  {
    version: 3,
    name: "decision path: running totals of uses and settlements, an index of open holds",
    sql: { sqlite: GRANT_TOTALS_SQL, postgres: GRANT_TOTALS_SQL },
  },
  {
    version: 4,
    name: "behavioural contracts and circuit breakers: contracts, breakers, trips, findings, decision signals",
    sql: { sqlite: breakersMigrationSql("sqlite"), postgres: breakersMigrationSql("postgres") },
  },
  {
    version: 5,
    name: "grant families: reviewed versions and the grants instantiated from them",
    sql: { sqlite: familiesMigrationSql("sqlite"), postgres: familiesMigrationSql("postgres") },
  },
  {
    version: 6,
    // No query reads the ledger by agent and time (breaker windows read decision_signals), and
    // every sealed decision paid for the index on the decision path.
    name: "decision path: drop the unused index of the ledger by agent and time",
    sql: { sqlite: "DROP INDEX IF EXISTS ledger_agent_time;", postgres: "DROP INDEX IF EXISTS ledger_agent_time;" },
  },
  {
    version: 7,
    // Uses are counted in grant_totals and live holds read through charges_open_holds: nothing
    // reads charges by grant any more, and a decision without an amount writes no charge at all.
    name: "decision path: charges are holds only; drop the index of charges by grant",
    sql: { sqlite: "DROP INDEX IF EXISTS charges_grant;", postgres: "DROP INDEX IF EXISTS charges_grant;" },
  },
  {
    version: 8,
    // Every sealed record paid an entry in the ledger's index by grant, for two reads: the queue of
    // gated decisions awaiting approval, now served by an index that holds the gated decisions
    // alone, and a family's decisions, which are those of its instances, root grants, read
    // through the index of each tree (decision 0604).
    name: "decision path: index only the gated decisions by id; drop the index of the ledger by grant",
    sql: { sqlite: LEDGER_GATED_SQL, postgres: LEDGER_GATED_SQL },
  },
  {
    version: 9,
    // Decisions are signed (decision 0616); the private keys are kept sealed under the server key.
    name: "signing keys: Ed25519 public keys, private keys sealed under the server key, active or retired",
    sql: { sqlite: signingMigrationSql("sqlite"), postgres: signingMigrationSql("postgres") },
  },
  {
    version: 10,
    // Versions need not be contiguous: each is applied when absent (decision 0701).
    name: "events: the outbox, numbered in commit order; webhooks and their deliveries",
    sql: { sqlite: eventsMigrationSql("sqlite"), postgres: eventsMigrationSql("postgres") },
  },
  {
    version: 11,
    // Checkpoints (decision 0621): the sealed records in one global order, as leaves of a Merkle tree.
    name: "ledger log: sealed records waiting for a position, Merkle leaves in global order, perfect subtree hashes",
    sql: { sqlite: ledgerLogMigrationSql("sqlite"), postgres: ledgerLogMigrationSql("postgres") },
  },
  {
    version: 12,
    // Enforcement points (decision 1701): an `enforcer` key names the agents it may ask for.
    name: "keys: the agents an enforcer key may ask for",
    sql: ENFORCER_AGENTS_SQL,
  },
  {
    version: 13,
    // The Merkle log off the decision path (decision 1941): each tree's logged prefix, no queue.
    name: "ledger log: a cursor per tree in place of the queue the decision path filled",
    sql: { sqlite: ledgerCursorsMigrationSql(), postgres: ledgerCursorsMigrationSql() },
  },
  {
    version: 14,
    // PostgreSQL (decision 1942): a signal's foreign key took a KEY SHARE lock on its sealed record
    // for every decision; signals are written only with or after their record, which is never
    // deleted. SQLite checks it by an index lookup and takes no row lock: kept there.
    name: "breakers: no foreign key from a signal to its sealed record on PostgreSQL",
    sql: {
      sqlite: "SELECT 1;",
      postgres: "ALTER TABLE decision_signals DROP CONSTRAINT IF EXISTS decision_signals_ledger_id_fkey;",
    },
  },
]);

const MIGRATION_LOCK = 727_274_001;

/** The statement triggers refusing TRUNCATE, one a line in migrations 1 and 4. */
const TRUNCATE_GUARD =
  /^CREATE TRIGGER \w+_kept_truncate BEFORE TRUNCATE ON \w+ FOR EACH STATEMENT EXECUTE FUNCTION authority_refuse_delete\(\);$\n?/gm;

/** A migration's SQL for the engine: without the TRUNCATE guard where the engine has no statement triggers. */
function migrationSql(migration: Migration, dialect: Dialect, engine: EngineProfile): string {
  const sql = migration.sql[dialect];
  return dialect === "postgres" && !engine.truncateGuard ? sql.replace(TRUNCATE_GUARD, "") : sql;
}

/** A database holding migrations this release does not know: a newer release wrote it. */
export class SchemaTooNew extends Error {
  constructor(readonly versions: readonly number[]) {
    super(
      `the database has schema migration${versions.length === 1 ? "" : "s"} ${versions.map((v) => `\`${v}\``).join(", ")}, which this release does not know (it knows 1 to ${MIGRATIONS[MIGRATIONS.length - 1]!.version}): run the release that applied them, or restore the backup taken before the upgrade`,
    );
  }
}

/** Applies every migration not yet applied; answers the versions it applied. Refuses a database a newer release migrated. */
export async function runMigrations(
  db: SqlDriver,
  now: number,
  schema?: string,
  engine: EngineProfile = POSTGRESQL_PROFILE,
): Promise<number[]> {
  // A lock row needs its table before the lock: the schema and the table are made first, each
  // on its own and safe to race (engine.ts).
  if (db.dialect === "postgres" && engine.locks === "rows") await prepareLockTable(db, schema);
  return db.transaction(async (tx) => {
    // Several replicas may start at once on PostgreSQL: one applies, the others wait and find it
    // done. The schema is created under the same lock: two concurrent `CREATE SCHEMA IF NOT
    // EXISTS` can both miss the other's and one then fails on the catalogue's unique index.
    if (tx.dialect === "postgres" && engine.locks === "advisory") {
      await tx.get("SELECT pg_advisory_xact_lock(?)", [MIGRATION_LOCK]);
      if (schema !== undefined) await tx.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    }
    // Touched: under snapshot isolation a start that waited is answered 40001 and runs again on
    // a snapshot that sees the migrations the holder applied.
    if (tx.dialect === "postgres" && engine.locks === "rows") await takeNamedLock(tx, engine, { name: "migrations", touch: true });
    await tx.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
    );
    const done = new Set((await tx.all("SELECT version FROM schema_migrations")).map((r) => Number(r["version"])));
    // A database a newer release migrated is refused, not served with a schema this code does not know.
    const known = new Set(MIGRATIONS.map((m) => m.version));
    const newer = [...done].filter((v) => !known.has(v)).sort((a, b) => a - b);
    if (newer.length > 0) throw new SchemaTooNew(newer);
    const applied: number[] = [];
    for (const migration of MIGRATIONS) {
      if (done.has(migration.version)) continue;
      await tx.exec(migrationSql(migration, tx.dialect, engine));
      await tx.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [migration.version, migration.name, now]);
      applied.push(migration.version);
    }
    await checkSignalSequence(tx, engine);
    return applied;
  });
}

export const LATEST_MIGRATION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
