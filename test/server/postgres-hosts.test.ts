// Several hosts in one PostgreSQL URL: how the URL is read, its limit at the edge, and on the real
// PostgreSQL that a dead host is passed over, that a read-only session is refused as not the
// primary, and that a lost, refused or read-only database reads as unavailable (HTTP 503).

import { spawnSync } from "node:child_process";
import { createServer } from "node:net";
import fc from "fast-check";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { databaseHosts, DatabaseUrlError, HOST_LIMITS, isDatabaseUnavailable, PostgresDriver } from "@agent-authority/server";
import { SERVER_BUILT, SERVER_MAIN } from "./server-processes.js";
import { pgProblem, PG_URL } from "./targets.js";

describe("database URLs with several hosts", () => {
  it("splits libpq's multi-host form into one URL per host, keeping user, database and parameters", () => {
    const hosts = databaseHosts("postgres://app:s3cret@db1:5433,db2,[::1]:6000/authority?target_session_attrs=read-write&sslmode=disable");
    expect(hosts.urls).toEqual([
      "postgres://app:s3cret@db1:5433/authority?sslmode=disable",
      "postgres://app:s3cret@db2:5432/authority?sslmode=disable",
      "postgres://app:s3cret@[::1]:6000/authority?sslmode=disable",
    ]);
    expect(hosts.primaryOnly).toBe(true);
  });

  it("keeps one host as it is; target_session_attrs asks for the primary even then", () => {
    expect(databaseHosts("postgres://u@h:1/d")).toEqual({ urls: ["postgres://u@h:1/d"], primaryOnly: false });
    expect(databaseHosts("postgresql://u@h/d?target_session_attrs=primary")).toEqual({ urls: ["postgresql://u@h/d"], primaryOnly: true });
    expect(databaseHosts("postgres://u@h/d?target_session_attrs=any").primaryOnly).toBe(false);
  });

  it(`takes ${HOST_LIMITS.hosts} hosts and refuses ${HOST_LIMITS.hosts + 1}`, () => {
    const list = (n: number): string => Array.from({ length: n }, (_, i) => `h${i}:${5000 + i}`).join(",");
    expect(databaseHosts(`postgres://u@${list(HOST_LIMITS.hosts)}/d`).urls).toHaveLength(HOST_LIMITS.hosts);
    expect(() => databaseHosts(`postgres://u@${list(HOST_LIMITS.hosts + 1)}/d`)).toThrow(DatabaseUrlError);
  });

  it.skipIf(!SERVER_BUILT)("a server given too many hosts stops at its start, naming the limit", () => {
    const hosts = Array.from({ length: HOST_LIMITS.hosts + 1 }, (_, i) => `h${i}:${5000 + i}`).join(",");
    const run = spawnSync(process.execPath, [SERVER_MAIN], {
      env: { PATH: process.env["PATH"] ?? "", AUTHORITY_PORT: "0", AUTHORITY_DATABASE_URL: `postgres://u@${hosts}/d` },
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(run.status).not.toBe(0);
    expect(run.stdout + run.stderr).toContain(`names ${HOST_LIMITS.hosts + 1} hosts; at most ${HOST_LIMITS.hosts}`);
  });

  it("refuses a session kind the server cannot write to, and a host that is not host:port", () => {
    expect(() => databaseHosts("postgres://u@a,b/d?target_session_attrs=read-only")).toThrow(/read-write or primary/);
    expect(() => databaseHosts("postgres://u@a:1:2,b/d")).toThrow(DatabaseUrlError);
    expect(() => databaseHosts("postgres://u@a,/d")).toThrow(DatabaseUrlError);
  });

  it("reads any text in linear time and either answers hosts or refuses with DatabaseUrlError", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 2_000 }), fc.string({ maxLength: 200 }), (tail, hosts) => {
        for (const url of [`postgres://${hosts}/${tail}`, `postgres://u@${hosts}`, tail]) {
          try {
            const parsed = databaseHosts(url);
            expect(parsed.urls.length).toBeGreaterThan(0);
            expect(parsed.urls.length).toBeLessThanOrEqual(HOST_LIMITS.hosts);
          } catch (error) {
            expect(error).toBeInstanceOf(DatabaseUrlError);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

/** A port on 127.0.0.1 where nothing listens. */
async function deadPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe("several hosts on the real PostgreSQL", () => {
  if (pgProblem !== null) {
    it.skip(`skipped because PostgreSQL is unreachable at ${PG_URL}: ${pgProblem}`, () => undefined);
    return;
  }
  const live = new URL(PG_URL);

  it("passes over a host that refuses connections and writes to the next", async () => {
    const dead = await deadPort();
    const url = `postgres://${live.username}@127.0.0.1:${dead},${live.hostname}:${live.port || 5432}${live.pathname}`;
    const driver = new PostgresDriver(url, { poolSize: 2 });
    try {
      for (let i = 0; i < 4; i += 1)
        expect(await driver.get("SELECT inet_server_port() AS port")).toEqual({ port: Number(live.port || 5432) });
      expect(await driver.transaction(async (tx) => tx.get("SELECT 1 AS one"))).toEqual({ one: 1 });
    } finally {
      await driver.close();
    }
  });

  it("refuses every host when none is reachable: unavailable, not an unexpected error", async () => {
    const driver = new PostgresDriver(`postgres://u@127.0.0.1:${await deadPort()},127.0.0.1:${await deadPort()}/d`, { poolSize: 1 });
    try {
      const failure = await driver.get("SELECT 1").then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isDatabaseUnavailable(failure)).toBe(true);
      expect(String(failure)).toMatch(/none of the 2 database hosts/);
    } finally {
      await driver.close();
    }
  });

  it("reads the real read-only, shutdown and lost-connection errors as unavailable, and a syntax error as not", async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    client.on("error", () => undefined);
    await client.connect();
    try {
      await client.query("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY");
      const readOnly = await client.query("CREATE TEMP TABLE nope (x int)").then(
        () => undefined,
        (error: unknown) => error,
      );
      expect((readOnly as { code?: string }).code).toBe("25006");
      expect(isDatabaseUnavailable(readOnly)).toBe(true);
      const syntax = await client.query("SELEC 1").then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isDatabaseUnavailable(syntax)).toBe(false);
      // Terminated by the server as an administrator would (57P01), then used again (connection lost).
      const killer = new pg.Client({ connectionString: PG_URL });
      await killer.connect();
      const pid = (await client.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
      await killer.query("SELECT pg_terminate_backend($1)", [pid]);
      await killer.end();
      const lost = await client.query("SELECT 1").then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(lost).toBeDefined();
      expect(isDatabaseUnavailable(lost)).toBe(true);
    } finally {
      await client.end().catch(() => undefined);
    }
  });
});
