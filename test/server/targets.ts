// The databases every server suite runs against: SQLite in a temporary directory, and PostgreSQL
// from AUTHORITY_TEST_DATABASE_URL in a fresh schema that is dropped afterwards. When PostgreSQL
// cannot be reached its suites are skipped loudly: a console message and a visible skipped test.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, it } from "vitest";
import { openStore, type DatabaseEngine, type OpenStoreOptions, type Store } from "@agent-authority/server";
import { dropSchema, postgresProblem } from "./postgres-schemas.mjs";

export const PG_URL = process.env["AUTHORITY_TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";

export interface StoreTarget {
  readonly name: "sqlite" | "postgres";
  /** PostgreSQL only: the engine profile the store runs with (decision 0310); absent: postgresql. */
  readonly engine?: DatabaseEngine;
  /** The database URL and, for PostgreSQL, a schema of its own. */
  create(): Promise<{ url: string; schema?: string; dispose(): Promise<void> }>;
}

export const sqliteTarget: StoreTarget = {
  name: "sqlite",
  async create() {
    const dir = mkdtempSync(join(tmpdir(), "authority-sqlite-"));
    return { url: join(dir, "authority.db"), dispose: async () => rmSync(dir, { recursive: true, force: true }) };
  },
};

export const postgresTarget: StoreTarget = {
  name: "postgres",
  async create() {
    const schema = `authority_test_${randomBytes(6).toString("hex")}`;
    return {
      url: PG_URL,
      schema,
      dispose: () => dropSchema(PG_URL, schema),
    };
  },
};

/**
 * PostgreSQL run under the conditions of a distributed engine (decision 0310): lock rows instead of
 * advisory locks, every transaction SERIALIZABLE, no TRUNCATE guard. The strictest profile.
 */
export const cockroachProfileTarget: StoreTarget = { ...postgresTarget, engine: "cockroachdb" };

/** How a store of the target is opened on `db`: its schema and engine. */
export function storeOptions(target: StoreTarget, db: { schema?: string | undefined }): OpenStoreOptions {
  return { ...(db.schema === undefined ? {} : { schema: db.schema }), ...(target.engine === undefined ? {} : { engine: target.engine }) };
}

/** Why PostgreSQL cannot be reached, or null when it can. */
export const pgProblem = await postgresProblem(PG_URL);
if (pgProblem !== null) {
  console.error(
    [
      "",
      "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
      `!!  PostgreSQL is unreachable at ${PG_URL}: ${pgProblem}`,
      "!!  Every PostgreSQL suite is SKIPPED. Set AUTHORITY_TEST_DATABASE_URL to run them.",
      "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
      "",
    ].join("\n"),
  );
}

/** Defines `suite` once per database; an unreachable PostgreSQL shows as a skipped test with the reason. */
export function forEachStore(title: string, suite: (target: StoreTarget) => void): void {
  describe(`${title} [sqlite]`, () => suite(sqliteTarget));
  describe(`${title} [postgres]`, () => {
    if (pgProblem === null) suite(postgresTarget);
    else it.skip(`skipped because PostgreSQL is unreachable at ${PG_URL}: ${pgProblem}`, () => undefined);
  });
}

/** A store on a fresh database of the target, opened before the suite's tests and closed after them; call within a suite. */
export function storeForSuite(target: StoreTarget): () => TestStore {
  let opened: TestStore | undefined;
  beforeAll(async () => {
    opened = await openTestStore(target);
  });
  afterAll(async () => {
    await opened?.close();
  });
  return () => opened!;
}

/** Opens a migrated store on a fresh database of the target. */
export interface TestStore {
  readonly store: Store;
  readonly url: string;
  readonly schema?: string;
  /** What another connection to the same database opens it with (schema and engine). */
  readonly options: OpenStoreOptions;
  /** Runs SQL past the store, as an intruder with database access would (`?` placeholders). */
  raw(sql: string, params?: readonly unknown[]): Promise<unknown[]>;
  close(): Promise<void>;
}

export async function openTestStore(target: StoreTarget, now = Date.now()): Promise<TestStore> {
  const db = await target.create();
  const options = storeOptions(target, db);
  const store = openStore(db.url, options);
  await store.migrate(now);
  return {
    store,
    url: db.url,
    options,
    ...(db.schema === undefined ? {} : { schema: db.schema }),
    raw: (sql, params = []) => rawQuery(db.url, db.schema, sql, params),
    async close() {
      await store.close();
      await db.dispose();
    },
  };
}

async function rawQuery(url: string, schema: string | undefined, sql: string, params: readonly unknown[]): Promise<unknown[]> {
  if (schema === undefined) {
    const db = new Database(url);
    try {
      const statement = db.prepare(sql);
      return statement.reader ? statement.all(...params) : [statement.run(...params)];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    let n = 0;
    return (
      await client.query(
        sql.replace(/\?/g, () => `$${++n}`),
        params as unknown[],
      )
    ).rows;
  } finally {
    await client.end();
  }
}
