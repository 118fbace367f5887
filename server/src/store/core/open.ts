// Opens a store from a database URL: `postgres://` or `postgresql://` selects PostgreSQL, anything
// else is a SQLite file path (or `sqlite:` followed by one).

import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { PostgresDriver } from "../drivers/index.js";
import { SqliteDriver } from "../drivers/index.js";
import { SqlStore } from "./sql-store.js";
import { ENGINE_PROFILES, type DatabaseEngine } from "../sql/index.js";
import type { Store } from "./store.js";
import type { StoreObservations } from "../sql/index.js";

export interface OpenStoreOptions {
  /** PostgreSQL only: the schema to use (created by migrate when absent). */
  readonly schema?: string;
  readonly poolSize?: number;
  /** PostgreSQL only: named (prepared) statements, default true (postgres-driver.ts, decision 0313). */
  readonly namedStatements?: boolean;
  /**
   * PostgreSQL URLs only: the engine behind the URL (decision 0310); default `postgresql`. Every
   * process on one database must name the same engine: their locks differ.
   */
  readonly engine?: DatabaseEngine;
  /**
   * SQLite only: keep temporary storage in memory (`temp_store=MEMORY`). The undo pages of the
   * savepoints a group-commit batch runs again with, after one of its transactions failed, then
   * never go to a temporary file. Meant
   * for a connection whose statements are all small, like the authorize worker's: on a connection
   * that also sorts large results, those sorts would be held in memory too.
   */
  readonly temporaryInMemory?: boolean;
  /** SQLite only: copy the write-ahead log into the database on a thread of its own (sqlite-driver.ts). */
  readonly checkpointThread?: boolean;
  /** SQLite only: the log's length at which this connection's commits checkpoint it (sqlite-driver.ts). */
  readonly walCheckpointFrames?: number;
  /** Where batch sizes, retries and database errors are counted for the metrics (observations.ts). */
  readonly observations?: StoreObservations;
  /**
   * SQLite only: `normal` commits without waiting for the disk (`synchronous=NORMAL`), for a
   * connection whose writes may be lost in a power cut without harm (the webhook dispatcher's,
   * decision 0704); default `full`.
   */
  readonly durability?: "full" | "normal";
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/** The file path of a SQLite database URL; undefined for PostgreSQL and for `:memory:`. */
export function sqliteFile(url: string): string | undefined {
  if (isPostgresUrl(url)) return undefined;
  const path = url.startsWith("sqlite:") ? url.slice("sqlite:".length) : url;
  return path === ":memory:" ? undefined : path;
}

/**
 * Opens a database that must already exist: a SQLite file that is missing is refused before
 * anything is created (commands that read or repair a database never make an empty one).
 */
/** Raised for a database engine other than PostgreSQL named with a SQLite database; nothing was opened. */
export class EngineNeedsPostgresUrl extends Error {
  constructor(readonly engine: DatabaseEngine) {
    super(`the database engine \`${engine}\` needs a \`postgres://\` database URL, not a SQLite file`);
  }
}

export function openExistingStore(url: string, options: OpenStoreOptions = {}): Store {
  const file = sqliteFile(url);
  if (file !== undefined && !existsSync(file)) throw new DatabaseNotFound(file);
  return openStore(url, options);
}

/** Raised by `openExistingStore` for a SQLite file that does not exist; nothing was created. */
export class DatabaseNotFound extends Error {
  constructor(readonly path: string) {
    super(`no database at \`${path}\``);
  }
}

export function openStore(url: string, options: OpenStoreOptions = {}): Store {
  const engine = ENGINE_PROFILES[options.engine ?? "postgresql"];
  if (engine === undefined) throw new Error(`unknown database engine \`${String(options.engine)}\`: postgresql, cockroachdb or yugabytedb`);
  if (isPostgresUrl(url)) {
    const driver = new PostgresDriver(url, engine.isolation === undefined ? options : { ...options, isolation: engine.isolation });
    return new SqlStore(driver, options.schema, engine, options.observations);
  }
  if (engine.engine !== "postgresql") throw new EngineNeedsPostgresUrl(engine.engine);
  const path = url.startsWith("sqlite:") ? url.slice("sqlite:".length) : url;
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  return new SqlStore(
    new SqliteDriver(path, {
      temporaryInMemory: options.temporaryInMemory ?? false,
      checkpointThread: options.checkpointThread ?? false,
      ...(options.walCheckpointFrames === undefined ? {} : { walCheckpointFrames: options.walCheckpointFrames }),
      ...(options.observations === undefined ? {} : { observations: options.observations }),
      ...(options.durability === undefined ? {} : { durability: options.durability }),
    }),
    undefined,
    undefined,
    options.observations,
  );
}

/** Opens the database, applies pending migrations and closes it; answers the versions applied. */
export async function migrateDatabase(url: string, options: OpenStoreOptions = {}, now: number = Date.now()): Promise<number[]> {
  const store = openStore(url, options);
  try {
    return await store.migrate(now);
  } finally {
    await store.close();
  }
}
