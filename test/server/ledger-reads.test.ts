// The ledger's reads that are not by id or by tree use no index the decision path pays for on
// every allowed decision: the queue of gated decisions reads the index that holds gated decisions
// alone, and a family's sealed records are read through the index of each instance's tree. SQLite's own
// plan for the very statements the store runs (recorded on their way to the database) shows it;
// neither scans the ledger.

import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DecisionSql } from "../../server/src/store/decisions/index.js";
import type { SqlDriver, SqlValue } from "../../server/src/store/sql/index.js";
import { FamilySql } from "../../server/src/store/families/index.js";
import { migrateDatabase } from "../../server/src/store/core/index.js";
import { SqliteDriver } from "../../server/src/store/drivers/index.js";

const dir = mkdtempSync(join(tmpdir(), "authority-ledger-reads-"));
const path = join(dir, "authority.db");
let driver: SqliteDriver;
const statements: { sql: string; params: readonly SqlValue[] }[] = [];

/** The driver, with every read's statement and parameters noted before it runs. */
function recording(inner: SqliteDriver): SqlDriver {
  return new Proxy(inner, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (property === "all" || property === "get") {
        return (sql: string, params: readonly SqlValue[] = []) => {
          statements.push({ sql, params });
          return (value as (sql: string, params?: readonly SqlValue[]) => unknown).call(target, sql, params);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** SQLite's plan for each statement noted, one line per step. */
function plans(): string[][] {
  const db = new Database(path, { readonly: true });
  try {
    return statements.map(({ sql, params }) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((step) => step.detail),
    );
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  await migrateDatabase(path);
  driver = new SqliteDriver(path);
});
afterAll(async () => {
  await driver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("ledger reads on SQLite", () => {
  it("the queue of gated decisions, first page and next, reads only the index of gated decisions", async () => {
    statements.length = 0;
    const decisions = new DecisionSql(recording(driver));
    await decisions.pendingGated(Date.now(), null, 10);
    await decisions.pendingGated(Date.now(), "led_00000000000000000000000000", 10);
    const steps = plans();
    expect(steps).toHaveLength(2);
    for (const plan of steps) {
      expect(
        plan.find((step) => / l USING INDEX ledger_gated\b/.test(step)),
        plan.join(" | "),
      ).toBeDefined();
      expect(
        plan.some((step) => /^SCAN l$/.test(step)),
        plan.join(" | "),
      ).toBe(false);
    }
  });

  it("a family's sealed records are read through each instance's tree", async () => {
    statements.length = 0;
    await new FamilySql(recording(driver)).sealedRecordsOfFamily("fam_00000000000000000000000000", 0, 10);
    const [plan] = plans();
    expect(
      plan!.find((step) => /^SEARCH l USING INDEX \S+ \(tree_id=\?\)/.test(step)),
      plan!.join(" | "),
    ).toBeDefined();
    expect(
      plan!.some((step) => /^SCAN l\b/.test(step)),
      plan!.join(" | "),
    ).toBe(false);
  });
});
