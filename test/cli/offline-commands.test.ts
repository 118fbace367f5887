// The commands that work on a server's database with no server running: `keys create --admin`
// (the recovery when every admin key is lost) and `ledger verify`, which never create a database.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, startServer } from "@agent-authority/server";
import { forEachStore } from "../server/targets.js";
import { authority, buildCli } from "./run-cli.js";

const scratch = mkdtempSync(join(tmpdir(), "authority-offline-"));
/** The server's own settings emptied, so that each run sees only what the test gives it. */
const NO_SETTINGS = {
  AUTHORITY_DATA_DIR: "",
  AUTHORITY_DATABASE_URL: "",
  AUTHORITY_DATABASE_SCHEMA: "",
  AUTHORITY_DATABASE_ENGINE: "",
  AUTHORITY_ADMIN_KEY: "",
  AUTHORITY_SERVER: "",
  AUTHORITY_KEY: "",
};

beforeAll(() => buildCli(), 180_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

forEachStore("authority keys create --admin", (target) => {
  it("writes a working admin key into the database directly, shown once, with no server running", async () => {
    const db = await target.create();
    try {
      const schemaArgs = db.schema === undefined ? [] : ["--schema", db.schema];
      if (db.schema === undefined) {
        // A SQLite database must exist already: the server made it on its first start.
        expect(authority(["migrate"], { env: { ...NO_SETTINGS, AUTHORITY_DATABASE_URL: db.url } }).code).toBe(0);
      }
      const created = authority(
        ["keys", "create", "--admin", "--database", db.url, ...schemaArgs, "--identity", "ops@example.com", "--format", "json"],
        { env: NO_SETTINGS },
      );
      expect(created.code, created.stderr).toBe(0);
      const key = JSON.parse(created.stdout) as { key: string; id: string; identity: string; roles: string[]; kind: string };
      expect(key).toMatchObject({ identity: "ops@example.com", kind: "human", roles: ["admin"] });
      expect(key.key).toMatch(/^aa_[A-Za-z0-9_-]{43}$/);

      const settings = {
        AUTHORITY_PORT: "0",
        AUTHORITY_DATABASE_URL: db.url,
        AUTHORITY_LOG_LEVEL: "silent",
        ...(db.schema === undefined ? {} : { AUTHORITY_DATABASE_SCHEMA: db.schema }),
      };
      const server = await startServer(loadConfig(settings, scratch));
      try {
        // The database had a key now, so this start generated none; the offline key is the admin.
        expect(server.generatedAdminKey).toBeNull();
        const listed = await fetch(`${server.baseUrl}/keys`, { headers: { authorization: `Bearer ${key.key}` } });
        expect(listed.status).toBe(200);
        expect(((await listed.json()) as { keys: { id: string }[] }).keys.map((k) => k.id)).toEqual([key.id]);
      } finally {
        await server.close();
      }
    } finally {
      await db.dispose();
    }
  });
});

describe("authority keys create --admin: refusals", () => {
  it("refuses a SQLite file that does not exist and creates nothing", () => {
    const folder = mkdtempSync(join(scratch, "missing-"));
    const run = authority(["keys", "create", "--admin", "--database", "nested/authority.db"], { cwd: folder, env: NO_SETTINGS });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("no database at");
    expect(readdirSync(folder)).toEqual([]);
  });

  it("refuses an unknown AUTHORITY_DATABASE_ENGINE before opening anything", () => {
    const run = authority(["keys", "create", "--admin", "--database", "postgres://nobody@127.0.0.1:1/none"], {
      env: { ...NO_SETTINGS, AUTHORITY_DATABASE_ENGINE: "oracle" },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("AUTHORITY_DATABASE_ENGINE must be postgresql, cockroachdb or yugabytedb, got `oracle`");
  });

  it("applies the identity rule of POST /v1/keys and writes nothing when it is broken", async () => {
    const folder = mkdtempSync(join(scratch, "identity-"));
    const url = join(folder, "authority.db");
    expect(authority(["migrate"], { env: { ...NO_SETTINGS, AUTHORITY_DATABASE_URL: url } }).code).toBe(0);
    for (const [args, message] of [
      [["--identity", "ops\n@example.com"], "`--identity` must contain no white space"],
      [["--identity", "x".repeat(5_000)], "`--identity` must be at most 254 characters, got 5000"],
      [["--identity", "x".repeat(255)], "`--identity` must be at most 254 characters, got 255"],
      [["--identity", "ops", "--email", "ops at example"], "`--email` must be an address"],
    ] as const) {
      const run = authority(["keys", "create", "--admin", "--database", url, ...args], { env: NO_SETTINGS });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(message);
    }
    const edge = authority(["keys", "create", "--admin", "--database", url, "--identity", "x".repeat(254), "--format", "json"], {
      env: NO_SETTINGS,
    });
    expect(edge.code, edge.stderr).toBe(0);
    const server = await startServer(
      loadConfig({ AUTHORITY_PORT: "0", AUTHORITY_DATABASE_URL: url, AUTHORITY_LOG_LEVEL: "silent", AUTHORITY_DATA_DIR: folder }, scratch),
    );
    try {
      // Only the key at the edge was written: the refused identities left the database as it was.
      const key = (JSON.parse(edge.stdout) as { key: string }).key;
      const listed = await fetch(`${server.baseUrl}/keys`, { headers: { authorization: `Bearer ${key}` } });
      expect(((await listed.json()) as { keys: { identity: string }[] }).keys.map((k) => k.identity)).toEqual(["x".repeat(254)]);
    } finally {
      await server.close();
    }
  });

  it("needs --database, and refuses the options of an online key", () => {
    const missing = authority(["keys", "create", "--admin"], { env: NO_SETTINGS });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--database");
    const mixed = authority(["keys", "create", "--admin", "--database", "x.db", "--role", "issuer"], { env: NO_SETTINGS });
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain("`--role` does not go with `--admin`");
    const online = authority(["keys", "create", "--identity", "a", "--kind", "human", "--role", "admin", "--database", "x.db"], {
      env: NO_SETTINGS,
    });
    expect(online.code).toBe(2);
    expect(online.stderr).toContain("`--database` goes with `--admin`");
  });
});

describe("authority ledger verify in a folder without a database", () => {
  it("says there is no database, exits 2 and creates neither ./data nor a database file", () => {
    const folder = mkdtempSync(join(scratch, "empty-"));
    const run = authority(["ledger", "verify"], { cwd: folder, env: NO_SETTINGS });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`no database at \`${join(folder, "data", "authority.db")}\``);
    expect(run.stderr).toContain("--server URL");
    expect(existsSync(join(folder, "data"))).toBe(false);
    expect(readdirSync(folder)).toEqual([]);
  });
});
