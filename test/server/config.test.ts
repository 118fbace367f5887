// Configuration from the environment and an optional file, and a start on PostgreSQL by URL.

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { ConfigError, loadConfig, startServer } from "@agent-authority/server";
import { describe, expect, it } from "vitest";
import { forEachStore, PG_URL } from "./targets.js";

describe("loadConfig", () => {
  it("has the documented defaults", () => {
    const config = loadConfig({}, "/srv/authority");
    expect(config).toMatchObject({
      host: "127.0.0.1",
      port: 8080,
      dataDir: "/srv/authority/data",
      databaseUrl: "/srv/authority/data/authority.db",
      environment: "development",
      adminKey: undefined,
      autoApprovalCeilingMinor: 0,
      logLevel: "info",
    });
  });

  it("reads every variable, the environment winning over the file", () => {
    const dir = mkdtempSync(join(tmpdir(), "authority-config-"));
    try {
      const file = join(dir, "authority.json");
      writeFileSync(file, JSON.stringify({ AUTHORITY_PORT: 9000, AUTHORITY_ENVIRONMENT: "staging", AUTHORITY_HOST: "0.0.0.0" }));
      const config = loadConfig(
        {
          AUTHORITY_CONFIG_FILE: file,
          AUTHORITY_PORT: "9100",
          AUTHORITY_DATA_DIR: "/var/lib/a",
          AUTHORITY_DATABASE_URL: "postgres://db/authority",
          AUTHORITY_ADMIN_KEY: LONG_ENOUGH,
          AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "5000",
        },
        "/",
      );
      expect(config).toMatchObject({
        host: "0.0.0.0",
        port: 9100,
        environment: "staging",
        dataDir: "/var/lib/a",
        databaseUrl: "postgres://db/authority",
        adminKey: LONG_ENOUGH,
        autoApprovalCeilingMinor: 5000,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads the server key from AUTHORITY_SERVER_KEY or a file, beside the data by default, and refuses a malformed one", () => {
    expect(loadConfig({}, "/srv/authority").serverKeyFile).toBe("/srv/authority/data/server.key");
    expect(loadConfig({ AUTHORITY_SERVER_KEY_FILE: "keys/server.key" }, "/etc/authority").serverKeyFile).toBe(
      "/etc/authority/keys/server.key",
    );
    const key = "A".repeat(43);
    expect(loadConfig({ AUTHORITY_SERVER_KEY: key }).serverKey).toBe(key);
    for (const bad of ["A".repeat(42), "A".repeat(44), `${"A".repeat(42)}=`, "not a key"]) {
      expect(() => loadConfig({ AUTHORITY_SERVER_KEY: bad })).toThrow(/AUTHORITY_SERVER_KEY must hold 32 bytes/);
    }
  });

  it("makes the server key file once and reads the same key on every later start, and refuses a file that holds no key", async () => {
    const { serverKeyFromFile } = await import("../../server/src/server-key.js");
    const dir = mkdtempSync(join(tmpdir(), "authority-key-"));
    try {
      const file = join(dir, "nested", "server.key");
      const keys = await Promise.all(Array.from({ length: 8 }, async () => serverKeyFromFile(file)));
      for (const key of keys) expect(key.equals(keys[0]!)).toBe(true);
      expect(readdirSync(join(dir, "nested"))).toEqual(["server.key"]);
      // At the edge: a key padded with white space to exactly fileBytesMax is read, one byte more is refused.
      const key = "C".repeat(43);
      writeFileSync(join(dir, "edge.key"), key + " ".repeat(1_024 - 43));
      expect(serverKeyFromFile(join(dir, "edge.key")).equals(Buffer.from(key, "base64url"))).toBe(true);
      writeFileSync(join(dir, "bad.key"), key + " ".repeat(1_024 - 42));
      expect(() => serverKeyFromFile(join(dir, "bad.key"))).toThrow(/larger than 1024 bytes/);
      writeFileSync(join(dir, "short.key"), "abc\n");
      expect(() => serverKeyFromFile(join(dir, "short.key"))).toThrow(/must hold 32 bytes/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("takes AUTHORITY_SERVER_KEY over the file, which it then neither reads nor makes", async () => {
    const { resolveServerKey } = await import("../../server/src/server.js");
    const dir = mkdtempSync(join(tmpdir(), "authority-key-"));
    try {
      const key = "B".repeat(43);
      const config = loadConfig({ AUTHORITY_SERVER_KEY: key, AUTHORITY_DATA_DIR: dir }, "/");
      expect(resolveServerKey(config).equals(Buffer.from(key, "base64url"))).toBe(true);
      expect(readdirSync(dir)).toEqual([]);
      const fromFile = resolveServerKey(loadConfig({ AUTHORITY_DATA_DIR: dir }, "/"));
      expect(readdirSync(dir)).toEqual(["server.key"]);
      expect(resolveServerKey(loadConfig({ AUTHORITY_DATA_DIR: dir }, "/")).equals(fromFile)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses invalid values, naming the variable", () => {
    expect(() => loadConfig({ AUTHORITY_PORT: "70000" })).toThrow(ConfigError);
    expect(() => loadConfig({ AUTHORITY_PORT: "http" })).toThrow(/AUTHORITY_PORT/);
    expect(() => loadConfig({ AUTHORITY_ENVIRONMENT: "Prod Env" })).toThrow(/AUTHORITY_ENVIRONMENT/);
    expect(() => loadConfig({ AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "-1" })).toThrow(/CEILING/);
    expect(() => loadConfig({ AUTHORITY_LOG_LEVEL: "loud" })).toThrow(/AUTHORITY_LOG_LEVEL/);
    expect(() => loadConfig({ AUTHORITY_DATABASE_NAMED_STATEMENTS: "yes" })).toThrow(
      /AUTHORITY_DATABASE_NAMED_STATEMENTS must be on or off/,
    );
  });

  it("takes the checkpoints' origin from AUTHORITY_LEDGER_ORIGIN, and refuses one a signed note cannot name", () => {
    expect(loadConfig({}).ledgerOrigin).toBeUndefined();
    expect(loadConfig({ AUTHORITY_LEDGER_ORIGIN: "ledger.example.com/payments" }).ledgerOrigin).toBe("ledger.example.com/payments");
    for (const bad of ["with space", "plus+sign", "x".repeat(256), "tab\there", "caf\u00e9"]) {
      expect(() => loadConfig({ AUTHORITY_LEDGER_ORIGIN: bad }), bad).toThrow(/AUTHORITY_LEDGER_ORIGIN/);
    }
  });

  it("takes the AuthZEN decision point's identifier from AUTHORITY_AUTHZEN_PDP, and refuses one the specification does not allow", () => {
    expect(loadConfig({}).authzenPdp).toBeUndefined();
    expect(loadConfig({ AUTHORITY_AUTHZEN_PDP: "https://pdp.example.com" }).authzenPdp).toBe("https://pdp.example.com");
    expect(loadConfig({ AUTHORITY_AUTHZEN_PDP: "https://example.com/authority" }).authzenPdp).toBe("https://example.com/authority");
    expect(loadConfig({ AUTHORITY_AUTHZEN_PDP: "http://127.0.0.1:8080" }).authzenPdp).toBe("http://127.0.0.1:8080");
    for (const bad of [
      "http://pdp.example.com",
      "https://pdp.example.com/",
      "https://pdp.example.com?x=1",
      "https://pdp.example.com#f",
      "https://user:pw@pdp.example.com",
      "pdp.example.com",
      `https://pdp.example.com/${"x".repeat(2_100)}`,
    ]) {
      expect(() => loadConfig({ AUTHORITY_AUTHZEN_PDP: bad }), bad).toThrow(/AUTHORITY_AUTHZEN_PDP/);
    }
  });

  it("names statements unless AUTHORITY_DATABASE_NAMED_STATEMENTS is off", () => {
    expect(loadConfig({}).databaseNamedStatements).toBe(true);
    expect(loadConfig({ AUTHORITY_DATABASE_NAMED_STATEMENTS: "on" }).databaseNamedStatements).toBe(true);
    expect(loadConfig({ AUTHORITY_DATABASE_NAMED_STATEMENTS: "off" }).databaseNamedStatements).toBe(false);
  });

  it("refuses an AUTHORITY_ADMIN_KEY under 32 printable characters, at the edge, before any database is opened", () => {
    expect(loadConfig({ AUTHORITY_ADMIN_KEY: LONG_ENOUGH }).adminKey).toBe(LONG_ENOUGH);
    expect(() => loadConfig({ AUTHORITY_ADMIN_KEY: LONG_ENOUGH.slice(1) })).toThrow(
      /^AUTHORITY_ADMIN_KEY must be at least 32 printable characters/,
    );
    expect(() => loadConfig({ AUTHORITY_ADMIN_KEY: `${LONG_ENOUGH.slice(1)} ` })).toThrow(ConfigError);
    expect(() => loadConfig({ AUTHORITY_ADMIN_KEY: `${LONG_ENOUGH}\u00e9` })).toThrow(ConfigError);
  });
});

/** Exactly 32 printable characters: the shortest admin key accepted. */
const LONG_ENOUGH = "aa_0123456789abcdefghijklmnopqrs";

forEachStore("startServer from a database URL", (target) => {
  it("opens, migrates and serves the database the URL names", async () => {
    const schema = `authority_test_${randomBytes(6).toString("hex")}`;
    const dir = mkdtempSync(join(tmpdir(), "authority-url-"));
    const databaseUrl = target.name === "postgres" ? PG_URL : join(dir, "nested", "a.db");
    try {
      const server = await startServer({
        host: "127.0.0.1",
        port: 0,
        dataDir: dir,
        databaseUrl,
        databaseSchema: target.name === "postgres" ? schema : undefined,
        environment: "development",
        adminKey: undefined,
        autoApprovalCeilingMinor: 0,
        logLevel: "silent",
      });
      expect(server.store.dialect).toBe(target.name);
      expect(server.generatedAdminKey).toMatch(/^aa_/);
      const ready = await fetch(`${server.baseUrl}/ready`);
      expect(ready.status).toBe(200);
      const keys = await fetch(`${server.baseUrl}/keys`, { headers: { authorization: `Bearer ${server.generatedAdminKey}` } });
      expect(keys.status).toBe(200);
      await server.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
      if (target.name === "postgres") {
        const client = new pg.Client({ connectionString: PG_URL });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.end();
      }
    }
  });
});
