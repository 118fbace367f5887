// The page size of SQLite databases: 2 KiB for one the server creates (a sealed decision record
// then writes about a third fewer bytes to the log, decision 0604), while a database created
// before keeps the page size it was made with, migrates, and seals decisions as before.

import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore, startServer, verifyLedger } from "@agent-authority/server";
import { migrateDatabase } from "../../server/src/store/core/index.js";
import { NEW_DATABASE_PAGE_SIZE } from "../../server/src/store/drivers/index.js";
import { ADMIN_KEY, ENVIRONMENT } from "./http-harness.js";
import { agentWithKey, ATTESTATION, grant, post } from "./server-processes.js";

const dir = mkdtempSync(join(tmpdir(), "authority-page-size-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function inspect(path: string): { pageSize: number; integrity: string; tables: number } {
  const db = new Database(path, { readonly: true });
  try {
    return {
      pageSize: Number(db.pragma("page_size", { simple: true })),
      integrity: String(db.pragma("integrity_check", { simple: true })),
      tables: Number(db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table'").get()!["n" as keyof object]),
    };
  } finally {
    db.close();
  }
}

describe("SQLite page size", () => {
  it("creates a new database with 2 KiB pages", async () => {
    expect(NEW_DATABASE_PAGE_SIZE).toBe(2_048);
    const path = join(dir, "new.db");
    expect((await migrateDatabase(path)).length).toBeGreaterThan(0);
    const after = inspect(path);
    expect(after.pageSize).toBe(NEW_DATABASE_PAGE_SIZE);
    expect(after.integrity).toBe("ok");
  });

  it("leaves a database created with 4 KiB pages at 4 KiB, and migrates it", async () => {
    const path = join(dir, "older.db");
    const older = new Database(path);
    older.pragma("page_size = 4096");
    older.pragma("journal_mode = WAL");
    older.exec("CREATE TABLE kept_from_before (x INTEGER)");
    older.close();

    expect((await migrateDatabase(path)).length).toBeGreaterThan(0);
    const after = inspect(path);
    expect(after.pageSize).toBe(4_096);
    expect(after.integrity).toBe("ok");
    expect(after.tables).toBeGreaterThan(10);
    // A second start applies nothing and changes nothing.
    expect(await migrateDatabase(path)).toEqual([]);

    // Decisions are sealed on it as on a new one, and their chain verifies.
    const server = await startServer({
      host: "127.0.0.1",
      port: 0,
      dataDir: dir,
      databaseUrl: path,
      environment: ENVIRONMENT,
      adminKey: ADMIN_KEY,
      autoApprovalCeilingMinor: 10_000,
      logLevel: "silent",
    });
    try {
      const agent = await agentWithKey(server.baseUrl, "older-pages");
      const grantId = await grant(server.baseUrl, agent.id, { ttl_hours: 1 });
      for (let i = 0; i < 3; i += 1) {
        const reply = await post(server.baseUrl, "/authorize", agent.key, {
          grant_id: grantId,
          tool: "payments.send",
          attestation: ATTESTATION,
        });
        expect(reply.body.outcome).toBe("allow");
      }
    } finally {
      await server.close();
    }
    const store = openStore(path);
    try {
      expect(await verifyLedger(store)).toMatchObject({ ok: true, broken: null, records: 3 });
    } finally {
      await store.close();
    }
    expect(inspect(path)).toEqual({ pageSize: 4_096, integrity: "ok", tables: after.tables });
  });
});
