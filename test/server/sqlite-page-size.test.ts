// The page size of SQLite databases: 2 KiB for one the server creates (a sealed decision record
// then writes about a third fewer bytes to the log, decision 0604), while a database created
// before keeps the page size it was made with and migrates and works as it did.

import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { migrateDatabase } from "../../server/src/store/open.js";
import { NEW_DATABASE_PAGE_SIZE } from "../../server/src/store/sqlite-driver.js";

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
    expect(inspect(path).pageSize).toBe(4_096);
  });
});
