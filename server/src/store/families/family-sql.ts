// Grant families over SQL: every reviewed version as pushed, the grants instantiated from them with
// their parameters, and the read of the sealed decisions of a family's grants for impact previews.
// One copy of the SQL for both databases; versions and instances are never updated or deleted.

import type { Dialect, Row, SqlDriver } from "../sql/index.js";
import { ledgerFromRow, type LedgerRow } from "../decisions/index.js";
import { ColumnReader, insertSql, parameters } from "../sql/index.js";

/** Migration 5: family versions and the instances issued from them, kept like the ledger. */
export function familiesMigrationSql(dialect: Dialect): string {
  const tables = `
CREATE TABLE grant_families (
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  content_hash TEXT NOT NULL,
  body TEXT NOT NULL,
  pushed_at BIGINT NOT NULL,
  pushed_by TEXT NOT NULL,
  PRIMARY KEY (id, version),
  UNIQUE (name, version)
);
CREATE INDEX grant_families_name ON grant_families (name, version);
CREATE TABLE family_instances (
  grant_id TEXT PRIMARY KEY REFERENCES grants(id),
  family_id TEXT NOT NULL,
  family_version INTEGER NOT NULL,
  parameters TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX family_instances_family ON family_instances (family_id, grant_id);
`;
  const guards = FAMILY_TABLES.map((t) =>
    dialect === "sqlite"
      ? `CREATE TRIGGER ${t}_kept BEFORE DELETE ON ${t} BEGIN SELECT RAISE(ABORT, '${t} records are never deleted'); END;
CREATE TRIGGER ${t}_sealed BEFORE UPDATE ON ${t} BEGIN SELECT RAISE(ABORT, '${t} records are sealed'); END;`
      : // The trigger functions come from migration 1.
        `CREATE TRIGGER ${t}_kept BEFORE DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION authority_refuse_delete();
CREATE TRIGGER ${t}_kept_truncate BEFORE TRUNCATE ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION authority_refuse_delete();
CREATE TRIGGER ${t}_sealed BEFORE UPDATE ON ${t} FOR EACH ROW EXECUTE FUNCTION authority_refuse_update();`,
  );
  return `${tables}\n${guards.join("\n")}`;
}

export const FAMILY_TABLES = ["grant_families", "family_instances"] as const;

/** One reviewed version of a family; `body` is the JSON body with the recomputed content hash. */
export interface FamilyVersionRow {
  readonly id: string;
  readonly name: string;
  readonly version: number;
  readonly content_hash: string;
  readonly body: string;
  readonly pushed_at: number;
  readonly pushed_by: string;
}

/** A grant issued from a family: the version it got and the parameters it was given. */
export interface FamilyInstanceRow {
  readonly grant_id: string;
  readonly family_id: string;
  readonly family_version: number;
  readonly parameters: string;
  readonly created_at: number;
}

/** The families' view of the store; `Store.familyPath()` answers one bound to its connection. */
export interface FamilyStore {
  /** Serialises pushes of one family name until the transaction ends (advisory lock on PostgreSQL). */
  lockName(name: string): Promise<void>;
  latestByName(name: string): Promise<FamilyVersionRow | undefined>;
  /** The latest version of a family, or the given one. */
  getVersion(id: string, version?: number): Promise<FamilyVersionRow | undefined>;
  insertVersion(row: FamilyVersionRow): Promise<void>;
  /** The version numbers of a family, newest first, at most `limit`. */
  versionNumbers(id: string, limit: number): Promise<number[]>;
  /** The latest version of every family, by id, after `after`, at most `limit`. */
  listLatest(filter: { name?: string | undefined }, after: string | undefined, limit: number): Promise<FamilyVersionRow[]>;
  insertInstance(row: FamilyInstanceRow): Promise<void>;
  instancesOf(familyId: string, grantIds: readonly string[]): Promise<FamilyInstanceRow[]>;
  /**
   * The sealed decisions and settlements in the trees of the family's grants (their descendants'
   * included) from `since` on, oldest first, at most `limit`.
   */
  sealedRecordsOfFamily(familyId: string, since: number, limit: number): Promise<LedgerRow[]>;
}

const FAMILY_COLUMNS = ["id", "name", "version", "content_hash", "body", "pushed_at", "pushed_by"] as const;
const INSTANCE_COLUMNS = ["grant_id", "family_id", "family_version", "parameters", "created_at"] as const;
const NAME_LOCK = 727_274_005;

const FAMILIES = new ColumnReader("grant_families");
const INSTANCES = new ColumnReader("family_instances");

function familyFromRow(row: Row): FamilyVersionRow {
  const c = FAMILIES;
  return {
    id: c.text(row, "id"),
    name: c.text(row, "name"),
    version: c.integer(row, "version"),
    content_hash: c.text(row, "content_hash"),
    body: c.text(row, "body"),
    pushed_at: c.integer(row, "pushed_at"),
    pushed_by: c.text(row, "pushed_by"),
  };
}

function instanceFromRow(row: Row): FamilyInstanceRow {
  const c = INSTANCES;
  return {
    grant_id: c.text(row, "grant_id"),
    family_id: c.text(row, "family_id"),
    family_version: c.integer(row, "family_version"),
    parameters: c.text(row, "parameters"),
    created_at: c.integer(row, "created_at"),
  };
}

export class FamilySql implements FamilyStore {
  readonly #db: SqlDriver;

  constructor(db: SqlDriver) {
    this.#db = db;
  }

  async lockName(name: string): Promise<void> {
    // SQLite's BEGIN IMMEDIATE already holds the whole database.
    if (this.#db.dialect === "postgres") await this.#db.get("SELECT pg_advisory_xact_lock(?, hashtext(?))", [NAME_LOCK, name]);
  }

  async latestByName(name: string): Promise<FamilyVersionRow | undefined> {
    const row = await this.#db.get("SELECT * FROM grant_families WHERE name = ? ORDER BY version DESC LIMIT 1", [name]);
    return row === undefined ? undefined : familyFromRow(row);
  }

  async getVersion(id: string, version?: number): Promise<FamilyVersionRow | undefined> {
    const row =
      version === undefined
        ? await this.#db.get("SELECT * FROM grant_families WHERE id = ? ORDER BY version DESC LIMIT 1", [id])
        : await this.#db.get("SELECT * FROM grant_families WHERE id = ? AND version = ?", [id, version]);
    return row === undefined ? undefined : familyFromRow(row);
  }

  async versionNumbers(id: string, limit: number): Promise<number[]> {
    const rows = await this.#db.all("SELECT version FROM grant_families WHERE id = ? ORDER BY version DESC LIMIT ?", [id, limit]);
    return rows.map((row) => Number(row["version"]));
  }

  async insertVersion(row: FamilyVersionRow): Promise<void> {
    await this.#db.run(insertSql("grant_families", FAMILY_COLUMNS), parameters(row, FAMILY_COLUMNS));
  }

  async listLatest(filter: { name?: string | undefined }, after: string | undefined, limit: number): Promise<FamilyVersionRow[]> {
    const where: string[] = ["f.version = (SELECT MAX(g.version) FROM grant_families g WHERE g.id = f.id)"];
    const params: (string | number)[] = [];
    if (filter.name !== undefined) {
      where.push("f.name = ?");
      params.push(filter.name);
    }
    if (after !== undefined) {
      where.push("f.id > ?");
      params.push(after);
    }
    const rows = await this.#db.all(`SELECT f.* FROM grant_families f WHERE ${where.join(" AND ")} ORDER BY f.id LIMIT ?`, [
      ...params,
      limit,
    ]);
    return rows.map(familyFromRow);
  }

  async insertInstance(row: FamilyInstanceRow): Promise<void> {
    await this.#db.run(insertSql("family_instances", INSTANCE_COLUMNS), parameters(row, INSTANCE_COLUMNS));
  }

  async instancesOf(familyId: string, grantIds: readonly string[]): Promise<FamilyInstanceRow[]> {
    if (grantIds.length === 0) return [];
    const rows = await this.#db.all(
      `SELECT * FROM family_instances WHERE family_id = ? AND grant_id IN (${grantIds.map(() => "?").join(", ")})`,
      [familyId, ...grantIds],
    );
    return rows.map(instanceFromRow);
  }

  async sealedRecordsOfFamily(familyId: string, since: number, limit: number): Promise<LedgerRow[]> {
    const rows = await this.#db.all(
      // An instance is a root grant, so its records are in its own tree (the ledger's index by
      // tree), with those of its descendants, whose uses and holds count on it too.
      `SELECT l.* FROM ledger l JOIN family_instances f ON l.tree_id = f.grant_id
        WHERE f.family_id = ? AND l.kind IN ('decision', 'settlement') AND l.created_at >= ?
        ORDER BY l.created_at, l.id LIMIT ?`,
      [familyId, since, limit],
    );
    return rows.map(ledgerFromRow);
  }
}
