// The pg driver: a connection pool; `?` placeholders become `$n`; int8 and numeric read as numbers.

import pg from "pg";
import type { Row, SqlDriver, SqlValue } from "./driver.js";

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/** Amounts and times are safe integers, so reading int8 as a number loses nothing. */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

type Queryable = pg.Pool | pg.PoolClient;

class PostgresSession implements SqlDriver {
  readonly dialect = "postgres" as const;
  readonly #client: Queryable;

  constructor(client: Queryable) {
    this.#client = client;
  }

  async all(sql: string, params: readonly SqlValue[] = []): Promise<Row[]> {
    return (await this.#client.query(numbered(sql), params as SqlValue[])).rows as Row[];
  }

  async get(sql: string, params: readonly SqlValue[] = []): Promise<Row | undefined> {
    return (await this.all(sql, params))[0];
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return (await this.#client.query(numbered(sql), params as SqlValue[])).rowCount ?? 0;
  }

  async exec(sql: string): Promise<void> {
    await this.#client.query(sql);
  }

  async transaction<T>(fn: (tx: SqlDriver) => Promise<T>): Promise<T> {
    return fn(this);
  }

  async close(): Promise<void> {}
}

export interface PostgresOptions {
  /** The schema every connection uses (search_path); created when absent. */
  readonly schema?: string;
  readonly poolSize?: number;
}

export class PostgresDriver implements SqlDriver {
  readonly dialect = "postgres" as const;
  readonly #pool: pg.Pool;
  readonly #session: PostgresSession;
  readonly schema: string | undefined;

  constructor(url: string, options: PostgresOptions = {}) {
    if (options.schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(options.schema)) {
      throw new Error(`invalid schema name \`${options.schema}\``);
    }
    this.schema = options.schema;
    this.#pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      types,
      ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` }),
    });
    // An idle client that loses its connection must not crash the process; the next query reports it.
    this.#pool.on("error", () => undefined);
    this.#session = new PostgresSession(this.#pool);
  }

  all(sql: string, params?: readonly SqlValue[]): Promise<Row[]> {
    return this.#session.all(sql, params);
  }

  get(sql: string, params?: readonly SqlValue[]): Promise<Row | undefined> {
    return this.#session.get(sql, params);
  }

  run(sql: string, params?: readonly SqlValue[]): Promise<number> {
    return this.#session.run(sql, params);
  }

  exec(sql: string): Promise<void> {
    return this.#session.exec(sql);
  }

  async transaction<T>(fn: (tx: SqlDriver) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    try {
      await client.query("BEGIN");
      const result = await fn(new PostgresSession(client));
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}
