// Upgrade across migrations: a SQLite database written by an earlier release of the server (the
// fixture, made by the server as of commit dcd055b, schema version 5: an agent, keys, a grant with
// a delegated child, an allowed and settled decision, a gated decision approved and retried) is
// upgraded by starting today's server on it, and everything it held still reads and verifies.

import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LATEST_MIGRATION, MIGRATIONS } from "@agent-authority/server";
import { get, post, SERVER_BUILT, startServerProcess, type ServerProcess } from "./server-processes.js";
import type { TreeLedger } from "@agent-authority/sdk";

const FIXTURE = new URL("./fixtures/schema-v5.db", import.meta.url);
/** What the fixture's server was given and answered when it wrote the database. */
const RELEASE = {
  schemaVersion: 5,
  environment: "production",
  adminKey: "aa_release_fixture_admin_key_0123456789abcdef",
  agentKey: "aa_-BTBHl-5qQFYJQb0nu_Ml7p7IS-ZG6BBcjbH3c9-lMk",
  agentId: "agt_01m894t7r9fmpj0rj48qtft5br",
  grantId: "grt_01m894t7wras7sc7hr2a1cga71",
  childId: "grt_01m894t86kf53x55jers9kvbzn",
  attestation: { manifest_hash: `sha256:${"1".repeat(64)}`, content_hash: `sha256:${"2".repeat(64)}`, provenance_version: "model-1" },
};

function versions(file: string): number[] {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT version FROM schema_migrations ORDER BY version").all() as { version: number }[]).map((r) => r.version);
  } finally {
    db.close();
  }
}

describe.skipIf(!SERVER_BUILT)("upgrade of a database an earlier release wrote (SQLite, compiled server)", () => {
  let dir: string;
  let file: string;
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "authority-upgrade-"));
    file = join(dir, "authority.db");
    copyFileSync(FIXTURE, file);
    expect(versions(file)).toEqual([1, 2, 3, 4, 5]);
    server = await startServerProcess({ url: file }, { AUTHORITY_ENVIRONMENT: RELEASE.environment, AUTHORITY_ADMIN_KEY: RELEASE.adminKey });
  });
  afterAll(async () => {
    if (server !== undefined) {
      server.child.kill("SIGTERM");
      await server.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("applies every later migration at start, and only those", () => {
    expect(LATEST_MIGRATION).toBeGreaterThan(RELEASE.schemaVersion);
    expect(versions(file)).toEqual(MIGRATIONS.map((m) => m.version));
    const later = MIGRATIONS.map((m) => m.version).filter((v) => v > RELEASE.schemaVersion);
    expect(server!.output()).toContain(`"versions":${JSON.stringify(later)}`);
    expect(server!.output()).not.toMatch(/"level":"error"/);
  });

  it("keeps what the old release wrote: keys, grants with their usage, and a ledger that verifies", async () => {
    const base = server!.baseUrl;
    expect(await get(base, "/ledger/verify", RELEASE.adminKey)).toMatchObject({ ok: true, records: 5, broken: null });
    // Root: the allowed 400 (settled at 300), the approved 2000, and the child's 100 count on it.
    // (Its holds lapse a day after the fixture was made, and the grant a year after: neither is asserted.)
    expect(await get(base, `/grants/${RELEASE.grantId}`, RELEASE.adminKey)).toMatchObject({
      uses: 3,
      settled_minor: 300,
      delegation_policy: "attenuating",
      issued_by: "admin",
    });
    expect(await get(base, `/grants/${RELEASE.childId}`, RELEASE.adminKey)).toMatchObject({ parent_id: RELEASE.grantId, uses: 1 });
    const tree = await get<TreeLedger>(base, `/grants/${RELEASE.grantId}/ledger`, RELEASE.adminKey);
    expect(tree.records.map((r: { kind: string; outcome: string | null }) => r.outcome ?? r.kind)).toEqual([
      "allow",
      "settlement",
      "gated",
      "allow",
      "allow",
    ]);
  });

  it("decides new actions with the old agent key and the old certificate, and the ledger still verifies", async () => {
    const base = server!.baseUrl;
    const grant = await post(base, "/grants", RELEASE.adminKey, {
      agent_id: RELEASE.agentId,
      principal_type: "human",
      principal_id: "alice@example.com",
      scope: { tool: ["payments.*"] },
      budget_amount_minor: 1_000,
      budget_currency: "EUR",
    });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    const body = { grant_id: grant.body.id, tool: "payments.send", amount_minor: 500, currency: "EUR", attestation: RELEASE.attestation };
    const decision = await post(base, "/authorize", RELEASE.agentKey, body);
    expect(decision.status).toBe(200);
    expect(decision.body).toMatchObject({ outcome: "allow" });
    expect(await get(base, "/ledger/verify", RELEASE.adminKey)).toMatchObject({ ok: true, records: 6 });
  });

  it("refuses to start on a database a newer release migrated, and changes nothing (roll back by restoring the backup)", async () => {
    server!.child.kill("SIGTERM");
    await server!.exited;
    server = undefined;
    const db = new Database(file);
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
      LATEST_MIGRATION + 1,
      "from a newer release",
      Date.now(),
    );
    db.close();
    const before = versions(file);
    const refused = await startServerProcess(
      { url: file },
      { AUTHORITY_ENVIRONMENT: RELEASE.environment, AUTHORITY_ADMIN_KEY: RELEASE.adminKey },
    ).then(
      async (started) => {
        server = started;
        return "started";
      },
      (error: unknown) => String(error),
    );
    expect(refused).toContain(`\`${LATEST_MIGRATION + 1}\`, which this release does not know`);
    expect(versions(file)).toEqual(before);
  });
});
