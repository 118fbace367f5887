// Signing keys over SQL: the public key in the clear, the private key only sealed under the server
// key (server-key.ts), one active key at a time, retired keys kept so old signatures still verify.

import type { Dialect, Row, SqlDriver } from "../sql/index.js";
import { takeNamedLock, type EngineProfile } from "../sql/index.js";
import { ColumnReader, insertSql, parameters } from "../sql/index.js";

/** Migration 9: the signing keys; rows are never deleted, a key is retired by field. Safe to apply twice. */
export function signingMigrationSql(dialect: Dialect): string {
  const table = `
CREATE TABLE IF NOT EXISTS signing_keys (
  kid TEXT PRIMARY KEY,
  alg TEXT NOT NULL CHECK (alg = 'EdDSA'),
  public_key TEXT NOT NULL,
  sealed_private_key TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'retired')),
  created_at BIGINT NOT NULL,
  retired_at BIGINT
);
CREATE UNIQUE INDEX IF NOT EXISTS signing_keys_one_active ON signing_keys (status) WHERE status = 'active';
`;
  const guard =
    dialect === "sqlite"
      ? "CREATE TRIGGER IF NOT EXISTS signing_keys_kept BEFORE DELETE ON signing_keys BEGIN SELECT RAISE(ABORT, 'signing_keys records are never deleted'); END;"
      : // The trigger function comes from migration 1.
        `DROP TRIGGER IF EXISTS signing_keys_kept ON signing_keys;
DROP TRIGGER IF EXISTS signing_keys_kept_truncate ON signing_keys;
CREATE TRIGGER signing_keys_kept BEFORE DELETE ON signing_keys FOR EACH ROW EXECUTE FUNCTION authority_refuse_delete();
CREATE TRIGGER signing_keys_kept_truncate BEFORE TRUNCATE ON signing_keys FOR EACH STATEMENT EXECUTE FUNCTION authority_refuse_delete();`;
  return `${table}\n${guard}`;
}

export const SIGNING_TABLES = ["signing_keys"] as const;

/** One signing key as stored: `public_key` is the raw Ed25519 key in base64url. */
export interface SigningKeyRow {
  readonly kid: string;
  readonly alg: "EdDSA";
  readonly public_key: string;
  /** The PKCS #8 private key sealed under the server key (server-key.ts `sealBytes`). */
  readonly sealed_private_key: string;
  readonly status: "active" | "retired";
  readonly created_at: number;
  readonly retired_at: number | null;
}

export interface SigningKeyStore {
  /** Every key, oldest first. */
  list(): Promise<SigningKeyRow[]>;
  /** Serialises key creation and rotation until the transaction ends (advisory lock on PostgreSQL). */
  lock(): Promise<void>;
  insert(row: SigningKeyRow): Promise<void>;
  /** Retires the key when it is active; answers whether it did. */
  retire(kid: string, at: number): Promise<boolean>;
}

const COLUMNS = ["kid", "alg", "public_key", "sealed_private_key", "status", "created_at", "retired_at"] as const;

const KEYS = new ColumnReader("signing_keys");
const ALGS: readonly SigningKeyRow["alg"][] = ["EdDSA"];
const STATUSES: readonly SigningKeyRow["status"][] = ["active", "retired"];

function rowToKey(row: Row): SigningKeyRow {
  const c = KEYS;
  return {
    kid: c.text(row, "kid"),
    alg: c.oneOf(row, "alg", ALGS),
    public_key: c.text(row, "public_key"),
    sealed_private_key: c.text(row, "sealed_private_key"),
    status: c.oneOf(row, "status", STATUSES),
    created_at: c.integer(row, "created_at"),
    retired_at: c.integerOrNull(row, "retired_at"),
  };
}

export class SigningKeySql implements SigningKeyStore {
  readonly #db: SqlDriver;
  readonly #engine: EngineProfile;

  constructor(db: SqlDriver, engine: EngineProfile) {
    this.#db = db;
    this.#engine = engine;
  }

  async list(): Promise<SigningKeyRow[]> {
    return (await this.#db.all("SELECT * FROM signing_keys ORDER BY created_at, kid")).map(rowToKey);
  }

  async lock(): Promise<void> {
    // Touched: a start that waited behind the one creating the first key reads the keys afresh.
    await takeNamedLock(this.#db, this.#engine, { name: "signing-keys", touch: true });
  }

  async insert(row: SigningKeyRow): Promise<void> {
    await this.#db.run(insertSql("signing_keys", COLUMNS), parameters(row, COLUMNS));
  }

  async retire(kid: string, at: number): Promise<boolean> {
    return (
      (await this.#db.run("UPDATE signing_keys SET status = 'retired', retired_at = ? WHERE kid = ? AND status = 'active'", [at, kid])) ===
      1
    );
  }
}
