// The store over SQL: one implementation of the Store interface for both databases, which differ
// only in their driver and in dialect details handled here (row locks, migrations).

import { ROLES, type Role } from "@agent-authority/api";
import { settledInOrder, type Row, type SqlDriver, type SqlValue } from "../sql/index.js";
import { DecisionSql, OPEN_HOLD_AT, type DecisionStore } from "../decisions/index.js";
import { BREAKER_TABLES, BreakerSql, type BreakerStore } from "../breakers/index.js";
import { FAMILY_TABLES, FamilySql, type FamilyStore } from "../families/index.js";
import { EVENT_TABLES, EventSql, type EventStore } from "../events/index.js";
import { SIGNING_TABLES, SigningKeySql, type SigningKeyStore } from "../ledger/index.js";
import { LedgerLogSql, type LedgerLogStore } from "../ledger/index.js";
import { runMigrations } from "./migrations.js";
import { CacheKind } from "../sql/index.js";
import { ColumnReader, insertSql, parameters, StoreRowError } from "../sql/index.js";
import { POSTGRESQL_PROFILE, takeNamedLock, type EngineProfile } from "../sql/index.js";
import { observeFailure, type StoreObservations } from "../sql/index.js";
import type {
  AgentRecord,
  CertificateRecord,
  EnforcementMode,
  GrantEventRecord,
  GrantRecord,
  GrantUsage,
  HeldTree,
  KeyRecord,
  DecisionBatchStore,
  GrantFilter,
  Page,
  Revocation,
  Store,
  StoreBatchable,
  StoredGrantStatus,
} from "./store.js";
import { DecisionBatchSql } from "./decision-batch-sql.js";
import { DecisionBatchSqlite } from "./decision-batch-sqlite.js";
import { arrayLiteral } from "../sql/index.js";

const TABLES = [
  "agents",
  "api_keys",
  "certificates",
  "grants",
  "grant_events",
  "ledger",
  "charges",
  "decision_approvals",
  "idempotency_keys",
  ...BREAKER_TABLES,
  ...FAMILY_TABLES,
  ...EVENT_TABLES,
  ...SIGNING_TABLES,
] as const;

const KEYS = new ColumnReader("api_keys");
const AGENTS = new ColumnReader("agents");
const CERTIFICATES = new ColumnReader("certificates");
const GRANTS = new ColumnReader("grants");
const GRANT_EVENTS = new ColumnReader("grant_events");
const LEDGER = new ColumnReader("ledger");

const KEY_KINDS: readonly KeyRecord["kind"][] = ["human", "service"];
const PRINCIPAL_TYPES: readonly GrantRecord["principal_type"][] = ["human", "team", "service"];
const DELEGATION_POLICIES: readonly GrantRecord["delegation_policy"][] = ["none", "attenuating"];
const ENFORCEMENT_MODES: readonly EnforcementMode[] = ["observe", "enforce"];
const GRANT_STATUSES: readonly StoredGrantStatus[] = ["pending_approval", "active", "revoked"];
const GRANT_EVENT_KINDS: readonly GrantEventRecord["kind"][] = [
  "issued",
  "delegated",
  "approved",
  "enforcement_escalated",
  "revoked",
  "approval_wait_abandoned",
];

/** Keys by the hash of their secret; null: no key has it. */
const KEY_BY_HASH = new CacheKind<KeyRecord | null>();
/** An agent's valid certificate, by agent id and environment; null: none. */
const VALID_CERTIFICATE = new CacheKind<CertificateRecord | null>();
/** A grant's chain, root first, by the grant's id. */
const GRANT_CHAIN = new CacheKind<readonly GrantRecord[]>();

/** Freezes a record read for the decision cache and everything in it: shared rows cannot be changed by a caller. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

function keyFromRow(row: Row): KeyRecord {
  const c = KEYS;
  return {
    id: c.text(row, "id"),
    hash: c.text(row, "hash"),
    identity: c.text(row, "identity"),
    kind: c.oneOf(row, "kind", KEY_KINDS),
    roles: c.jsonWords(row, "roles", ROLES),
    agent_id: c.textOrNull(row, "agent_id"),
    agent_ids: row["agent_ids"] === null || row["agent_ids"] === undefined ? null : c.jsonStrings(row, "agent_ids"),
    email: c.textOrNull(row, "email"),
    created_at: c.integer(row, "created_at"),
    created_by: c.textOrNull(row, "created_by"),
    revoked_at: c.integerOrNull(row, "revoked_at"),
    revoked_by: c.textOrNull(row, "revoked_by"),
    revocation_reason: c.textOrNull(row, "revocation_reason"),
  };
}

function agentFromRow(row: Row): AgentRecord {
  const c = AGENTS;
  return {
    id: c.text(row, "id"),
    name: c.text(row, "name"),
    description: c.textOrNull(row, "description"),
    created_at: c.integer(row, "created_at"),
    created_by: c.text(row, "created_by"),
  };
}

function certificateFromRow(row: Row): CertificateRecord {
  const c = CERTIFICATES;
  return {
    id: c.text(row, "id"),
    agent_id: c.text(row, "agent_id"),
    environment: c.text(row, "environment"),
    issued_by: c.text(row, "issued_by"),
    issued_by_email: c.textOrNull(row, "issued_by_email"),
    issued_at: c.integer(row, "issued_at"),
    basis: c.text(row, "basis"),
    provenance_version: c.text(row, "provenance_version"),
    manifest_hash: c.text(row, "manifest_hash"),
    content_hash: c.text(row, "content_hash"),
    market_profile: c.textOrNull(row, "market_profile"),
    checks: c.jsonStrings(row, "checks"),
    revoked_at: c.integerOrNull(row, "revoked_at"),
    revoked_by: c.textOrNull(row, "revoked_by"),
    revocation_reason: c.textOrNull(row, "revocation_reason"),
    superseded_by: c.textOrNull(row, "superseded_by"),
  };
}

function isScope(value: Record<string, unknown>): value is GrantRecord["scope"] & Record<string, unknown> {
  const tool = value["tool"];
  return Array.isArray(tool) && tool.every((t) => typeof t === "string");
}

function isConditions(value: Record<string, unknown>): value is GrantRecord["conditions"] & Record<string, unknown> {
  return typeof value["clean_context"] === "boolean";
}

function grantFromRow(row: Row): GrantRecord {
  const c = GRANTS;
  const scope = c.jsonObject(row, "scope");
  if (!isScope(scope)) throw new StoreRowError("grants", "scope", "a scope with a `tool` list of strings", row["scope"]);
  const conditions = c.jsonObject(row, "conditions");
  if (!isConditions(conditions))
    throw new StoreRowError("grants", "conditions", "conditions with a boolean `clean_context`", row["conditions"]);
  return {
    id: c.text(row, "id"),
    root_id: c.text(row, "root_id"),
    parent_id: c.textOrNull(row, "parent_id"),
    depth: c.integer(row, "depth"),
    agent_id: c.text(row, "agent_id"),
    principal_type: c.oneOf(row, "principal_type", PRINCIPAL_TYPES),
    principal_id: c.text(row, "principal_id"),
    scope,
    budget_amount_minor: c.integer(row, "budget_amount_minor"),
    budget_currency: c.textOrNull(row, "budget_currency"),
    budget_count: c.integerOrNull(row, "budget_count"),
    ttl_hours: c.integer(row, "ttl_hours"),
    conditions,
    policy: c.textOrNull(row, "policy"),
    delegation_policy: c.oneOf(row, "delegation_policy", DELEGATION_POLICIES),
    delegation_depth_max: c.integerOrNull(row, "delegation_depth_max"),
    audience: c.textOrNull(row, "audience"),
    enforcement_mode: c.oneOf(row, "enforcement_mode", ENFORCEMENT_MODES),
    status: c.oneOf(row, "status", GRANT_STATUSES),
    approval_required: c.flag(row, "approval_required"),
    issued_at: c.integer(row, "issued_at"),
    expires_at: c.integer(row, "expires_at"),
    issued_by: c.text(row, "issued_by"),
    approved_by: c.textOrNull(row, "approved_by"),
    approved_at: c.integerOrNull(row, "approved_at"),
    family_id: c.textOrNull(row, "family_id"),
    family_version: c.textOrNull(row, "family_version"),
    revoked_at: c.integerOrNull(row, "revoked_at"),
    revoked_by: c.textOrNull(row, "revoked_by"),
    revocation_reason: c.textOrNull(row, "revocation_reason"),
  };
}

function grantEventFromRow(row: Row): GrantEventRecord {
  const c = GRANT_EVENTS;
  return {
    id: c.text(row, "id"),
    grant_id: c.text(row, "grant_id"),
    kind: c.oneOf(row, "kind", GRANT_EVENT_KINDS),
    actor: c.text(row, "actor"),
    at: c.integer(row, "at"),
    detail: c.jsonObject(row, "detail"),
  };
}

/** `SELECT COUNT(*) AS n FROM table`. */
async function countOf(db: SqlDriver, table: string, where = "", params: readonly SqlValue[] = []): Promise<number> {
  const row = await db.get(`SELECT COUNT(*) AS n FROM ${table}${where}`, params);
  return new ColumnReader(table).integer(row ?? {}, "n");
}

function pageClause(page: Page, params: SqlValue[], hasWhere: boolean): string {
  let clause = "";
  if (page.after !== undefined) {
    clause = `${hasWhere ? " AND" : " WHERE"} id > ?`;
    params.push(page.after);
  }
  params.push(page.limit);
  return `${clause} ORDER BY id LIMIT ?`;
}

const GRANT_COLUMNS = [
  "id",
  "root_id",
  "parent_id",
  "depth",
  "agent_id",
  "principal_type",
  "principal_id",
  "scope",
  "budget_amount_minor",
  "budget_currency",
  "budget_count",
  "ttl_hours",
  "conditions",
  "policy",
  "delegation_policy",
  "delegation_depth_max",
  "audience",
  "enforcement_mode",
  "status",
  "approval_required",
  "issued_at",
  "expires_at",
  "issued_by",
  "approved_by",
  "approved_at",
  "family_id",
  "family_version",
  "revoked_at",
  "revoked_by",
  "revocation_reason",
] as const;

const CERTIFICATE_COLUMNS = [
  "id",
  "agent_id",
  "environment",
  "issued_by",
  "issued_by_email",
  "issued_at",
  "basis",
  "provenance_version",
  "manifest_hash",
  "content_hash",
  "market_profile",
  "checks",
  "revoked_at",
  "revoked_by",
  "revocation_reason",
  "superseded_by",
] as const;

const KEY_COLUMNS = [
  "id",
  "hash",
  "identity",
  "kind",
  "roles",
  "agent_id",
  "agent_ids",
  "email",
  "created_at",
  "created_by",
  "revoked_at",
  "revoked_by",
  "revocation_reason",
] as const;

export class SqlStore implements Store {
  readonly #db: SqlDriver;
  readonly #schema: string | undefined;
  readonly #engine: EngineProfile;
  readonly #observations: StoreObservations | undefined;

  /** `observations`: where the failures of this store's own transactions are counted (the top store only). */
  constructor(db: SqlDriver, schema?: string, engine: EngineProfile = POSTGRESQL_PROFILE, observations?: StoreObservations) {
    this.#db = db;
    this.#schema = schema;
    this.#engine = engine;
    this.#observations = observations;
  }

  get dialect() {
    return this.#db.dialect;
  }

  migrate(now: number): Promise<number[]> {
    return runMigrations(this.#db, now, this.#schema, this.#engine);
  }

  async ping(): Promise<void> {
    await this.#db.get("SELECT 1 AS ok");
  }

  close(): Promise<void> {
    return this.#db.close();
  }

  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    const done = this.#db.transaction((tx) => fn(new SqlStore(tx, this.#schema, this.#engine)));
    if (this.#observations === undefined) return done;
    // Batched transactions are counted by the group commit; these, not on the hot path, here.
    return done.catch((error: unknown) => {
      observeFailure(this.#observations, error);
      throw error;
    });
  }

  batchedTransaction<T>(fn: (tx: Store) => Promise<T>, order?: string, batch?: StoreBatchable): Promise<T> {
    if (this.#db.groupTransaction === undefined) return this.transaction(fn);
    // The step is the kind: transactions handing the same step are done together. On SQLite
    // (decision 0319) and PostgreSQL itself: the distributed engines' profiles keep one
    // transaction per decision.
    const batchable =
      batch === undefined || (this.#db.dialect === "postgres" && this.#engine.engine !== "postgresql")
        ? undefined
        : {
            kind: batch.step,
            input: batch.input,
            step: (db: SqlDriver, inputs: readonly unknown[]) => batch.step(new SqlStore(db, this.#schema, this.#engine), inputs),
          };
    return this.#db.groupTransaction((tx) => fn(new SqlStore(tx, this.#schema, this.#engine)), order, batchable);
  }

  async countRows(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of TABLES) counts[table] = await countOf(this.#db, table);
    return counts;
  }

  // Keys ---------------------------------------------------------------------------------------

  async insertKey(key: KeyRecord): Promise<void> {
    await this.#db.run(insertSql("api_keys", KEY_COLUMNS), parameters(key, KEY_COLUMNS));
  }

  async getKey(id: string): Promise<KeyRecord | undefined> {
    const row = await this.#db.get("SELECT * FROM api_keys WHERE id = ?", [id]);
    return row && keyFromRow(row);
  }

  async findKeyByHash(hash: string): Promise<KeyRecord | undefined> {
    // The authorize worker authenticates inside its batch, where a revocation by any connection
    // has already emptied the cache (INVARIANT decision-cache).
    const cache = this.#db.decisionCache;
    const cached = cache === undefined ? undefined : KEY_BY_HASH.get(cache, hash);
    if (cached !== undefined) return cached ?? undefined;
    const row = await this.#db.get("SELECT * FROM api_keys WHERE hash = ?", [hash]);
    const key = row && deepFreeze(keyFromRow(row));
    if (cache !== undefined) KEY_BY_HASH.set(cache, hash, key ?? null);
    return key;
  }

  async findKeysByHash(hashes: readonly string[]): Promise<Map<string, KeyRecord>> {
    const found = new Map<string, KeyRecord>();
    if (this.#db.dialect !== "postgres") {
      // In-process, and kept by the decision cache inside a batch: one lookup each costs no round trip.
      for (const hash of hashes) {
        const key = await this.findKeyByHash(hash);
        if (key !== undefined) found.set(hash, key);
      }
      return found;
    }
    if (hashes.length === 0) return found;
    const rows = await this.#db.all("SELECT * FROM api_keys WHERE hash = ANY(?::text[])", [arrayLiteral(hashes)]);
    for (const row of rows) {
      const key = deepFreeze(keyFromRow(row));
      found.set(key.hash, key);
    }
    return found;
  }

  async listKeys(page: Page): Promise<KeyRecord[]> {
    const params: SqlValue[] = [];
    const rows = await this.#db.all(`SELECT * FROM api_keys${pageClause(page, params, false)}`, params);
    return rows.map(keyFromRow);
  }

  async countActiveKeysWithRole(role: Role): Promise<number> {
    // Roles are a short JSON array of known words; matching the quoted word is exact. The rows are
    // locked so that two revocations cannot each see the other's key as the remaining one.
    const lock = this.#db.dialect === "postgres" ? " FOR UPDATE" : "";
    const rows = await this.#db.all(`SELECT id FROM api_keys WHERE revoked_at IS NULL AND roles LIKE ?${lock}`, [`%"${role}"%`]);
    return rows.length;
  }

  async countKeys(): Promise<number> {
    return countOf(this.#db, "api_keys");
  }

  async revokeKey(id: string, r: Revocation): Promise<boolean> {
    const changed = await this.#db.run(
      "UPDATE api_keys SET revoked_at = ?, revoked_by = ?, revocation_reason = ? WHERE id = ? AND revoked_at IS NULL",
      [r.at, r.by, r.reason, id],
    );
    return changed === 1;
  }

  // Agents -------------------------------------------------------------------------------------

  async createAgentIfAbsent(agent: AgentRecord): Promise<{ agent: AgentRecord; created: boolean }> {
    const columns = ["id", "name", "description", "created_at", "created_by"] as const;
    const changed = await this.#db.run(`${insertSql("agents", columns)} ON CONFLICT (name) DO NOTHING`, parameters(agent, columns));
    const row = await this.#db.get("SELECT * FROM agents WHERE name = ?", [agent.name]);
    return { agent: agentFromRow(row!), created: changed === 1 };
  }

  async getAgent(id: string): Promise<AgentRecord | undefined> {
    const row = await this.#db.get("SELECT * FROM agents WHERE id = ?", [id]);
    return row && agentFromRow(row);
  }

  async lockAgent(id: string): Promise<void> {
    if (this.#db.dialect === "postgres") await this.#db.get("SELECT id FROM agents WHERE id = ? FOR UPDATE", [id]);
  }

  async lockKeyBootstrap(): Promise<void> {
    // Touched: a start that waited behind the one creating the key counts the keys afresh.
    await takeNamedLock(this.#db, this.#engine, { name: "keys:bootstrap", touch: true });
  }

  async listAgents(page: Page): Promise<AgentRecord[]> {
    const params: SqlValue[] = [];
    return (await this.#db.all(`SELECT * FROM agents${pageClause(page, params, false)}`, params)).map(agentFromRow);
  }

  // Certificates -------------------------------------------------------------------------------

  async insertCertificate(certificate: CertificateRecord): Promise<void> {
    await this.#db.run(insertSql("certificates", CERTIFICATE_COLUMNS), parameters(certificate, CERTIFICATE_COLUMNS));
  }

  async getCertificate(id: string): Promise<CertificateRecord | undefined> {
    const row = await this.#db.get("SELECT * FROM certificates WHERE id = ?", [id]);
    return row && certificateFromRow(row);
  }

  async listCertificates(
    filter: { agent_id?: string | undefined; environment?: string | undefined },
    page: Page,
  ): Promise<CertificateRecord[]> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (filter.agent_id !== undefined) {
      where.push("agent_id = ?");
      params.push(filter.agent_id);
    }
    if (filter.environment !== undefined) {
      where.push("environment = ?");
      params.push(filter.environment);
    }
    const whereSql = where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "";
    const rows = await this.#db.all(`SELECT * FROM certificates${whereSql}${pageClause(page, params, where.length > 0)}`, params);
    return rows.map(certificateFromRow);
  }

  async validCertificate(agentId: string, environment: string): Promise<CertificateRecord | undefined> {
    const cache = this.#db.decisionCache;
    const key = `${agentId}\n${environment}`;
    const cached = cache === undefined ? undefined : VALID_CERTIFICATE.get(cache, key);
    if (cached !== undefined) return cached ?? undefined;
    const row = await this.#db.get("SELECT * FROM certificates WHERE agent_id = ? AND environment = ? AND revoked_at IS NULL", [
      agentId,
      environment,
    ]);
    const certificate = row && deepFreeze(certificateFromRow(row));
    if (cache !== undefined) VALID_CERTIFICATE.set(cache, key, certificate ?? null);
    return certificate;
  }

  async revokeCertificate(id: string, r: Revocation, supersededBy?: string): Promise<boolean> {
    const changed = await this.#db.run(
      "UPDATE certificates SET revoked_at = ?, revoked_by = ?, revocation_reason = ?, superseded_by = ? WHERE id = ? AND revoked_at IS NULL",
      [r.at, r.by, r.reason, supersededBy ?? null, id],
    );
    return changed === 1;
  }

  // Grants -------------------------------------------------------------------------------------

  async insertGrant(grant: GrantRecord): Promise<void> {
    await this.#db.run(insertSql("grants", GRANT_COLUMNS), parameters(grant, GRANT_COLUMNS));
  }

  async getGrant(id: string): Promise<GrantRecord | undefined> {
    const row = await this.#db.get("SELECT * FROM grants WHERE id = ?", [id]);
    return row && grantFromRow(row);
  }

  async lockGrant(id: string): Promise<void> {
    // SQLite's BEGIN IMMEDIATE already holds the database's write lock for the whole transaction.
    if (this.#db.dialect === "postgres") await this.#db.get("SELECT id FROM grants WHERE id = ? FOR UPDATE", [id]);
  }

  async heldTree(grantId: string, agentId: string, environment: string, now: number): Promise<HeldTree> {
    const held = "SELECT root_id FROM grants WHERE id = ? AND agent_id = ?";
    const forUpdate = this.#db.dialect === "postgres" ? " FOR UPDATE" : "";
    // Sent one after another without waiting; each statement after the lock reads what was
    // committed before the lock was granted (READ COMMITTED takes a snapshot per statement).
    const [, chainRows, certificate, headRow] = (await settledInOrder([
      this.#db.get(`SELECT id FROM grants WHERE id = (${held})${forUpdate}`, [grantId, agentId]),
      this.#db.all(
        `WITH RECURSIVE chain AS (
           SELECT * FROM grants WHERE id = ? AND agent_id = ?
           UNION ALL
           SELECT g.* FROM grants g JOIN chain c ON g.id = c.parent_id
         ) SELECT chain.*, COALESCE(t.uses, 0) AS usage_uses, COALESCE(t.settled_minor, 0) AS usage_settled,
                  (SELECT COALESCE(SUM(h.amount_minor), 0) FROM charges h WHERE h.grant_id = chain.id AND ${OPEN_HOLD_AT}) AS usage_held
             FROM chain LEFT JOIN grant_totals t ON t.grant_id = chain.id ORDER BY chain.depth`,
        [grantId, agentId, now],
      ),
      this.validCertificate(agentId, environment),
      this.#db.get(`SELECT seq, hash FROM ledger WHERE tree_id = (${held}) ORDER BY seq DESC LIMIT 1`, [grantId, agentId]),
    ])) as [unknown, Row[], CertificateRecord | undefined, Row | undefined];
    const usage = new Map<string, GrantUsage>();
    const g = GRANTS;
    for (const row of chainRows) {
      usage.set(g.text(row, "id"), {
        uses: g.integer(row, "usage_uses"),
        held_minor: g.integer(row, "usage_held"),
        settled_minor: g.integer(row, "usage_settled"),
      });
    }
    return {
      chain: chainRows.map(grantFromRow),
      usage,
      certificate,
      head: headRow === undefined ? undefined : { seq: LEDGER.integer(headRow, "seq"), hash: LEDGER.text(headRow, "hash") },
    };
  }

  async grantChain(id: string): Promise<readonly GrantRecord[]> {
    const cache = this.#db.decisionCache;
    const cached = cache === undefined ? undefined : GRANT_CHAIN.get(cache, id);
    if (cached !== undefined) return cached;
    const chain = await this.#readGrantChain(id);
    if (cache !== undefined) GRANT_CHAIN.set(cache, id, deepFreeze(chain));
    return chain;
  }

  async #readGrantChain(id: string): Promise<GrantRecord[]> {
    const rows = await this.#db.all(
      `WITH RECURSIVE chain AS (
         SELECT * FROM grants WHERE id = ?
         UNION ALL
         SELECT g.* FROM grants g JOIN chain c ON g.id = c.parent_id
       ) SELECT * FROM chain ORDER BY depth`,
      [id],
    );
    return rows.map(grantFromRow);
  }

  async subtreeIds(id: string): Promise<string[]> {
    const rows = await this.#db.all(
      `WITH RECURSIVE tree AS (
         SELECT id, depth FROM grants WHERE id = ?
         UNION ALL
         SELECT g.id, g.depth FROM grants g JOIN tree t ON g.parent_id = t.id
       ) SELECT id FROM tree ORDER BY depth, id`,
      [id],
    );
    return rows.map((row) => GRANTS.text(row, "id"));
  }

  async listGrantsByStatus(status: StoredGrantStatus, page: Page): Promise<GrantRecord[]> {
    const params: SqlValue[] = [status];
    const rows = await this.#db.all(`SELECT * FROM grants WHERE status = ?${pageClause(page, params, true)}`, params);
    return rows.map(grantFromRow);
  }

  async listGrants(filter: GrantFilter, now: number, page: Page): Promise<GrantRecord[]> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    for (const column of ["agent_id", "family_id", "principal_id"] as const) {
      const value = filter[column];
      if (value !== undefined) {
        where.push(`${column} = ?`);
        params.push(value);
      }
    }
    // The status a grant reads at `now` (views.ts grantStatus): revoked first, then expired.
    if (filter.status === "revoked") where.push("status = 'revoked'");
    else if (filter.status === "expired") {
      where.push("status <> 'revoked' AND expires_at <= ?");
      params.push(now);
    } else if (filter.status !== undefined) {
      where.push("status = ? AND expires_at > ?");
      params.push(filter.status, now);
    }
    const whereSql = where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "";
    const rows = await this.#db.all(`SELECT * FROM grants${whereSql}${pageClause(page, params, where.length > 0)}`, params);
    return rows.map(grantFromRow);
  }

  async approveGrant(id: string, by: string, at: number): Promise<boolean> {
    const changed = await this.#db.run(
      "UPDATE grants SET status = 'active', approved_by = ?, approved_at = ? WHERE id = ? AND status = 'pending_approval'",
      [by, at, id],
    );
    return changed === 1;
  }

  async setEnforcementMode(id: string, from: EnforcementMode, to: EnforcementMode): Promise<boolean> {
    const changed = await this.#db.run(
      "UPDATE grants SET enforcement_mode = ? WHERE id = ? AND enforcement_mode = ? AND status <> 'revoked'",
      [to, id, from],
    );
    return changed === 1;
  }

  async revokeGrants(ids: readonly string[], r: Revocation): Promise<string[]> {
    const revoked: string[] = [];
    for (const id of ids) {
      const changed = await this.#db.run(
        "UPDATE grants SET status = 'revoked', revoked_at = ?, revoked_by = ?, revocation_reason = ? WHERE id = ? AND status <> 'revoked'",
        [r.at, r.by, r.reason, id],
      );
      if (changed === 1) revoked.push(id);
    }
    return revoked;
  }

  async appendGrantEvent(event: GrantEventRecord): Promise<void> {
    const columns = ["id", "grant_id", "kind", "actor", "at", "detail"] as const;
    await this.#db.run(insertSql("grant_events", columns), parameters(event, columns));
  }

  async listGrantEvents(grantId: string): Promise<GrantEventRecord[]> {
    const rows = await this.#db.all("SELECT * FROM grant_events WHERE grant_id = ? ORDER BY id", [grantId]);
    return rows.map(grantEventFromRow);
  }

  decisionPath(): DecisionStore {
    return new DecisionSql(this.#db, this.#engine);
  }

  decisionBatch(): DecisionBatchStore {
    // SQLite reads through the decision cache, as one decision at a time does (decision 0319).
    if (this.#db.dialect === "sqlite") return new DecisionBatchSqlite(this.#db, this, this.decisionPath(), this.breakerPath());
    return new DecisionBatchSql(this.#db, this.decisionPath(), grantFromRow, certificateFromRow);
  }

  breakerPath(): BreakerStore {
    return new BreakerSql(this.#db);
  }

  familyPath(): FamilyStore {
    return new FamilySql(this.#db);
  }

  signingKeys(): SigningKeyStore {
    return new SigningKeySql(this.#db, this.#engine);
  }

  ledgerLog(): LedgerLogStore {
    return new LedgerLogSql(this.#db, this.#engine);
  }

  eventPath(): EventStore {
    return new EventSql(this.#db);
  }

  usage(grantIds: readonly string[], now: number): Promise<Map<string, GrantUsage>> {
    // Uses and settlements from the running totals, live holds summed at `now` (INVARIANT live-holds).
    return this.decisionPath().liveUsage(grantIds, now);
  }
}
