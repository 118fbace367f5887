// The store over SQL: one implementation of the Store interface for both databases, which differ
// only in their driver and in dialect details handled here (row locks, migrations).

import type { Role } from "@agent-authority/api";
import { settledInOrder, type Row, type SqlDriver, type SqlValue } from "./driver.js";
import { DecisionSql, OPEN_HOLD_AT, type DecisionStore } from "./decision-sql.js";
import { BREAKER_TABLES, BreakerSql, type BreakerStore } from "./breaker-sql.js";
import { FAMILY_TABLES, FamilySql, type FamilyStore } from "./family-sql.js";
import { EVENT_TABLES, EventSql, type EventStore } from "./event-sql.js";
import { SIGNING_TABLES, SigningKeySql, type SigningKeyStore } from "./signing-sql.js";
import { LEDGER_LOG_TABLES, LedgerLogSql, type LedgerLogStore } from "./ledger-log-sql.js";
import { runMigrations } from "./migrations.js";
import { POSTGRESQL_PROFILE, takeNamedLock, type EngineProfile } from "./engine.js";
import { observeFailure, type StoreObservations } from "./observations.js";
import type {
  AgentRecord, CertificateRecord, EnforcementMode, GrantEventRecord, GrantRecord, GrantUsage, HeldTree, KeyRecord,
  GrantFilter, Page, Revocation, Store, StoredGrantStatus,
} from "./store.js";

const TABLES = [
  "agents", "api_keys", "certificates", "grants", "grant_events", "ledger", "charges", "decision_approvals", "idempotency_keys",
  ...BREAKER_TABLES,
  ...FAMILY_TABLES,
  ...EVENT_TABLES,
  ...SIGNING_TABLES,
  ...LEDGER_LOG_TABLES,
] as const;

const str = (row: Row, key: string): string => String(row[key]);
const strOrNull = (row: Row, key: string): string | null => (row[key] === null || row[key] === undefined ? null : String(row[key]));
const num = (row: Row, key: string): number => Number(row[key]);
const numOrNull = (row: Row, key: string): number | null => (row[key] === null || row[key] === undefined ? null : Number(row[key]));
const json = <T>(row: Row, key: string): T => JSON.parse(str(row, key)) as T;

/** Freezes a record read for the decision cache and everything in it: shared rows cannot be changed by a caller. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

function keyFromRow(row: Row): KeyRecord {
  return {
    id: str(row, "id"), hash: str(row, "hash"), identity: str(row, "identity"),
    kind: str(row, "kind") as KeyRecord["kind"], roles: json<Role[]>(row, "roles"),
    agent_id: strOrNull(row, "agent_id"), email: strOrNull(row, "email"),
    created_at: num(row, "created_at"), created_by: strOrNull(row, "created_by"),
    revoked_at: numOrNull(row, "revoked_at"), revoked_by: strOrNull(row, "revoked_by"),
    revocation_reason: strOrNull(row, "revocation_reason"),
  };
}

function agentFromRow(row: Row): AgentRecord {
  return {
    id: str(row, "id"), name: str(row, "name"), description: strOrNull(row, "description"),
    created_at: num(row, "created_at"), created_by: str(row, "created_by"),
  };
}

function certificateFromRow(row: Row): CertificateRecord {
  return {
    id: str(row, "id"), agent_id: str(row, "agent_id"), environment: str(row, "environment"),
    issued_by: str(row, "issued_by"), issued_by_email: strOrNull(row, "issued_by_email"),
    issued_at: num(row, "issued_at"), basis: str(row, "basis"),
    provenance_version: str(row, "provenance_version"), manifest_hash: str(row, "manifest_hash"),
    content_hash: str(row, "content_hash"), market_profile: strOrNull(row, "market_profile"),
    checks: json<string[]>(row, "checks"), revoked_at: numOrNull(row, "revoked_at"),
    revoked_by: strOrNull(row, "revoked_by"), revocation_reason: strOrNull(row, "revocation_reason"),
    superseded_by: strOrNull(row, "superseded_by"),
  };
}

function grantFromRow(row: Row): GrantRecord {
  return {
    id: str(row, "id"), root_id: str(row, "root_id"), parent_id: strOrNull(row, "parent_id"),
    depth: num(row, "depth"), agent_id: str(row, "agent_id"),
    principal_type: str(row, "principal_type") as GrantRecord["principal_type"],
    principal_id: str(row, "principal_id"), scope: json(row, "scope"),
    budget_amount_minor: num(row, "budget_amount_minor"), budget_currency: strOrNull(row, "budget_currency"),
    budget_count: numOrNull(row, "budget_count"), ttl_hours: num(row, "ttl_hours"),
    conditions: json(row, "conditions"), policy: strOrNull(row, "policy"),
    delegation_policy: str(row, "delegation_policy") as GrantRecord["delegation_policy"],
    delegation_depth_max: numOrNull(row, "delegation_depth_max"), audience: strOrNull(row, "audience"),
    enforcement_mode: str(row, "enforcement_mode") as EnforcementMode,
    status: str(row, "status") as StoredGrantStatus, approval_required: num(row, "approval_required") === 1,
    issued_at: num(row, "issued_at"), expires_at: num(row, "expires_at"), issued_by: str(row, "issued_by"),
    approved_by: strOrNull(row, "approved_by"), approved_at: numOrNull(row, "approved_at"),
    family_id: strOrNull(row, "family_id"), family_version: strOrNull(row, "family_version"),
    revoked_at: numOrNull(row, "revoked_at"), revoked_by: strOrNull(row, "revoked_by"),
    revocation_reason: strOrNull(row, "revocation_reason"),
  };
}

function insertSql(table: string, columns: readonly string[]): string {
  return `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`;
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
  "id", "root_id", "parent_id", "depth", "agent_id", "principal_type", "principal_id", "scope",
  "budget_amount_minor", "budget_currency", "budget_count", "ttl_hours", "conditions", "policy",
  "delegation_policy", "delegation_depth_max", "audience", "enforcement_mode", "status",
  "approval_required", "issued_at", "expires_at", "issued_by", "approved_by", "approved_at",
  "family_id", "family_version", "revoked_at", "revoked_by", "revocation_reason",
] as const;

const CERTIFICATE_COLUMNS = [
  "id", "agent_id", "environment", "issued_by", "issued_by_email", "issued_at", "basis",
  "provenance_version", "manifest_hash", "content_hash", "market_profile", "checks", "revoked_at",
  "revoked_by", "revocation_reason", "superseded_by",
] as const;

const KEY_COLUMNS = [
  "id", "hash", "identity", "kind", "roles", "agent_id", "email", "created_at", "created_by",
  "revoked_at", "revoked_by", "revocation_reason",
] as const;

/** Turns a record into column values: objects as JSON text, booleans as 0/1. */
function values(record: object, columns: readonly string[]): SqlValue[] {
  const source = record as Record<string, unknown>;
  return columns.map((column) => {
    const value = source[column];
    if (value === undefined || value === null) return null;
    if (typeof value === "boolean") return value ? 1 : 0;
    if (typeof value === "object") return JSON.stringify(value);
    return value as SqlValue;
  });
}

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

  batchedTransaction<T>(fn: (tx: Store) => Promise<T>, order?: string): Promise<T> {
    if (this.#db.groupTransaction === undefined) return this.transaction(fn);
    return this.#db.groupTransaction((tx) => fn(new SqlStore(tx, this.#schema, this.#engine)), order);
  }

  async countRows(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of TABLES) counts[table] = num((await this.#db.get(`SELECT COUNT(*) AS n FROM ${table}`))!, "n");
    return counts;
  }

  // Keys ---------------------------------------------------------------------------------------

  async insertKey(key: KeyRecord): Promise<void> {
    await this.#db.run(insertSql("api_keys", KEY_COLUMNS), values(key, KEY_COLUMNS));
  }

  async getKey(id: string): Promise<KeyRecord | undefined> {
    const row = await this.#db.get("SELECT * FROM api_keys WHERE id = ?", [id]);
    return row && keyFromRow(row);
  }

  async findKeyByHash(hash: string): Promise<KeyRecord | undefined> {
    // The authorize worker authenticates inside its batch, where a revocation by any connection
    // has already emptied the cache (INVARIANT decision-cache).
    const cache = this.#db.decisionCache;
    const cacheKey = `key\n${hash}`;
    const cached = cache?.get(cacheKey) as KeyRecord | null | undefined;
    if (cached !== undefined) return cached ?? undefined;
    const row = await this.#db.get("SELECT * FROM api_keys WHERE hash = ?", [hash]);
    const key = row && deepFreeze(keyFromRow(row));
    cache?.set(cacheKey, key ?? null);
    return key;
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
    return num((await this.#db.get("SELECT COUNT(*) AS n FROM api_keys"))!, "n");
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
    const columns = ["id", "name", "description", "created_at", "created_by"];
    const changed = await this.#db.run(`${insertSql("agents", columns)} ON CONFLICT (name) DO NOTHING`, values(agent, columns));
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
    await this.#db.run(insertSql("certificates", CERTIFICATE_COLUMNS), values(certificate, CERTIFICATE_COLUMNS));
  }

  async getCertificate(id: string): Promise<CertificateRecord | undefined> {
    const row = await this.#db.get("SELECT * FROM certificates WHERE id = ?", [id]);
    return row && certificateFromRow(row);
  }

  async listCertificates(filter: { agent_id?: string | undefined; environment?: string | undefined }, page: Page): Promise<CertificateRecord[]> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (filter.agent_id !== undefined) { where.push("agent_id = ?"); params.push(filter.agent_id); }
    if (filter.environment !== undefined) { where.push("environment = ?"); params.push(filter.environment); }
    const whereSql = where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "";
    const rows = await this.#db.all(`SELECT * FROM certificates${whereSql}${pageClause(page, params, where.length > 0)}`, params);
    return rows.map(certificateFromRow);
  }

  async validCertificate(agentId: string, environment: string): Promise<CertificateRecord | undefined> {
    const cache = this.#db.decisionCache;
    const key = `certificate\n${agentId}\n${environment}`;
    const cached = cache?.get(key) as CertificateRecord | null | undefined;
    if (cached !== undefined) return cached ?? undefined;
    const row = await this.#db.get(
      "SELECT * FROM certificates WHERE agent_id = ? AND environment = ? AND revoked_at IS NULL",
      [agentId, environment],
    );
    const certificate = row && deepFreeze(certificateFromRow(row));
    cache?.set(key, certificate ?? null);
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
    await this.#db.run(insertSql("grants", GRANT_COLUMNS), values(grant, GRANT_COLUMNS));
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
    const [, chainRows, certificate, headRow] = await settledInOrder([
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
    ]) as [unknown, Row[], CertificateRecord | undefined, Row | undefined];
    const usage = new Map<string, GrantUsage>();
    for (const row of chainRows) usage.set(str(row, "id"), { uses: num(row, "usage_uses"), held_minor: num(row, "usage_held"), settled_minor: num(row, "usage_settled") });
    return {
      chain: chainRows.map(grantFromRow), usage, certificate,
      head: headRow === undefined ? undefined : { seq: num(headRow, "seq"), hash: str(headRow, "hash") },
    };
  }

  async grantChain(id: string): Promise<readonly GrantRecord[]> {
    const cache = this.#db.decisionCache;
    const key = `chain\n${id}`;
    const cached = cache?.get(key) as readonly GrantRecord[] | undefined;
    if (cached !== undefined) return cached;
    const chain = await this.#readGrantChain(id);
    if (cache !== undefined) cache.set(key, deepFreeze(chain));
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
    return rows.map((row) => str(row, "id"));
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
      if (value !== undefined) { where.push(`${column} = ?`); params.push(value); }
    }
    // The status a grant reads at `now` (views.ts grantStatus): revoked first, then expired.
    if (filter.status === "revoked") where.push("status = 'revoked'");
    else if (filter.status === "expired") { where.push("status <> 'revoked' AND expires_at <= ?"); params.push(now); }
    else if (filter.status !== undefined) { where.push("status = ? AND expires_at > ?"); params.push(filter.status, now); }
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
    const columns = ["id", "grant_id", "kind", "actor", "at", "detail"];
    await this.#db.run(insertSql("grant_events", columns), values(event, columns));
  }

  async listGrantEvents(grantId: string): Promise<GrantEventRecord[]> {
    const rows = await this.#db.all("SELECT * FROM grant_events WHERE grant_id = ? ORDER BY id", [grantId]);
    return rows.map((row) => ({
      id: str(row, "id"), grant_id: str(row, "grant_id"), kind: str(row, "kind") as GrantEventRecord["kind"],
      actor: str(row, "actor"), at: num(row, "at"), detail: json(row, "detail"),
    }));
  }

  decisionPath(): DecisionStore {
    return new DecisionSql(this.#db, this.#engine);
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
