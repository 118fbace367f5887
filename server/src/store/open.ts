// Opens a store from a database URL: `postgres://` or `postgresql://` selects PostgreSQL, anything
// else is a SQLite file path (or `sqlite:` followed by one).

import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { PostgresDriver } from "./postgres-driver.js";
import { SqliteDriver } from "./sqlite-driver.js";
import { SqlStore } from "./sql-store.js";
import type { Store } from "./store.js";

export interface OpenStoreOptions {
  /** PostgreSQL only: the schema to use (created by migrate when absent). */
  readonly schema?: string;
  readonly poolSize?: number;
  /** PostgreSQL only: named (prepared) statements, default true (postgres-driver.ts, decision 0313). */
  readonly namedStatements?: boolean;
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
  if (isPostgresUrl(url)) {
    const driver = new PostgresDriver(url, options);
    return new SqlStore(driver, options.schema);
  }
  const path = url.startsWith("sqlite:") ? url.slice("sqlite:".length) : url;
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  return new SqlStore(new SqliteDriver(path, {
    temporaryInMemory: options.temporaryInMemory ?? false, checkpointThread: options.checkpointThread ?? false,
    ...(options.walCheckpointFrames === undefined ? {} : { walCheckpointFrames: options.walCheckpointFrames }),
  }));
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
