// Whether PostgreSQL answers, and dropping a schema made for one run: shared by the server suites
// and the server benchmark (plain JavaScript).

import pg from "pg";

/** Why PostgreSQL at `url` cannot be used, or null when it answers. */
export async function postgresProblem(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Drops `schema` and everything in it. */
export async function dropSchema(url, schema) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
