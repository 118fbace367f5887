// The batch step on PostgreSQL (decisions 0318, 0320 to 0322): two servers on one schema, each
// with pooled connections of its own, run the step's tests (decision-batch-suite.ts).

import pg from "pg";
import { afterAll, beforeAll, describe, it } from "vitest";
import {
  ENGINE_PROFILES,
  loadConfig,
  openStore,
  PostgresDriver,
  SqlStore,
  startServer,
  type AuthorityServer,
} from "@agent-authority/server";
import { ADMIN_KEY } from "./http-harness.js";
import { pgProblem, PG_URL, postgresTarget } from "./targets.js";
import { batchStepTests } from "./decision-batch-suite.js";

describe("a batch of decisions read, decided and written once per kind of row on PostgreSQL", () => {
  if (pgProblem !== null) {
    it.skip(`skipped because PostgreSQL is unreachable at ${PG_URL}: ${pgProblem}`, () => undefined);
    return;
  }
  let db: Awaited<ReturnType<typeof postgresTarget.create>>;
  const drivers: PostgresDriver[] = [];
  const servers: AuthorityServer[] = [];
  const base = (i: number) => servers[i % servers.length]!.baseUrl;
  const stepped = () => drivers.reduce((sum, driver) => sum + driver.stepped, 0);

  beforeAll(async () => {
    db = await postgresTarget.create();
    for (let i = 0; i < 2; i += 1) {
      const driver = new PostgresDriver(db.url, { schema: db.schema! });
      drivers.push(driver);
      const config = loadConfig({
        AUTHORITY_DATABASE_URL: PG_URL,
        AUTHORITY_DATABASE_SCHEMA: db.schema!,
        AUTHORITY_PORT: "0",
        AUTHORITY_LOG_LEVEL: "silent",
        AUTHORITY_ENVIRONMENT: "test-env",
        AUTHORITY_ADMIN_KEY: ADMIN_KEY,
        AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "10000000",
      });
      servers.push(await startServer(config, { store: new SqlStore(driver, db.schema, ENGINE_PROFILES.postgresql), ownsStore: true }));
    }
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await db?.dispose();
  });

  /** Rows read straight from the test's schema; `?` parameters. */
  async function rows<T>(sql: string, values: readonly unknown[]): Promise<T[]> {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await client.query(`SET search_path TO "${db.schema!}"`);
      let n = 0;
      return (
        await client.query(
          sql.replace(/\?/g, () => `$${++n}`),
          [...values],
        )
      ).rows as T[];
    } finally {
      await client.end();
    }
  }

  batchStepTests({ base, stepped, rows, openStore: () => openStore(db.url, { schema: db.schema! }) });
});
