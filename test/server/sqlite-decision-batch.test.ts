// The batch step on SQLite (decision 0319): two servers on one database file, each with its own
// connection, run the step's tests (decision-batch-suite.ts), their batches read through the
// decision cache and written one statement per table. Keys known only by their hash, as the
// authorize worker presents them, are resolved by the step, and a key that may not authorize is
// refused by its own function in the same batch. Through the compiled server, whose worker
// decides a burst in one batch: a process killed just before or just after that batch's commit
// (the crash tests' hooks, decision 0605) leaves retries that make one effect per key.

import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, openStore, SqliteDriver, SqlStore, startServer, verifyLedger, type AuthorityServer } from "@agent-authority/server";
// The authorize worker's entry, as the worker calls it: the server's modules themselves.
import { authorizeAction } from "../../server/src/services/decisions/index.js";
import type { ServiceContext } from "../../server/src/services/common/index.js";
import { Refusal } from "../../server/src/services/common/index.js";
import { Signer } from "../../server/src/services/seal/index.js";
import { hashSecret } from "../../server/src/secrets.js";
import { derivedKey, parseServerKey } from "../../server/src/server-key.js";
import { SqliteDriver as WorkerDriver } from "../../server/src/store/drivers/index.js";
import { SqlStore as WorkerStore } from "../../server/src/store/core/index.js";
import { batchStepTests } from "./decision-batch-suite.js";
import { ADMIN_KEY, TEST_SERVER_KEY } from "./http-harness.js";
import { agentWithKey, ATTESTATION, get, grant, post, SERVER_BUILT, startServerProcess, type ServerProcess } from "./server-processes.js";

describe("a batch of decisions read, decided and written once per kind of row on SQLite", () => {
  const dir = mkdtempSync(join(tmpdir(), "authority-sqlite-batch-"));
  const path = join(dir, "authority.db");
  const drivers: SqliteDriver[] = [];
  const servers: AuthorityServer[] = [];
  const base = (i: number) => servers[i % servers.length]!.baseUrl;
  const stepped = () => drivers.reduce((sum, driver) => sum + driver.stepped, 0);

  beforeAll(async () => {
    for (let i = 0; i < 2; i += 1) {
      const driver = new SqliteDriver(path);
      drivers.push(driver);
      const config = loadConfig({
        AUTHORITY_DATABASE_URL: path,
        AUTHORITY_PORT: "0",
        AUTHORITY_LOG_LEVEL: "silent",
        AUTHORITY_ENVIRONMENT: "test-env",
        AUTHORITY_ADMIN_KEY: ADMIN_KEY,
        AUTHORITY_SERVER_KEY: TEST_SERVER_KEY,
        AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "10000000",
      });
      servers.push(await startServer(config, { store: new SqlStore(driver), ownsStore: true }));
    }
    // Connections opened first: a burst then arrives together, and a batch is what one turn of the
    // event loop submitted (a burst that opens its connections arrives one request a turn).
    await Promise.all(Array.from({ length: 240 }, (_, i) => get(base(i), "/agents?limit=1", ADMIN_KEY)));
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Rows read straight from the database file, on a connection of their own. */
  async function rows<T>(sql: string, values: readonly unknown[]): Promise<T[]> {
    const db = new Database(path, { readonly: true });
    try {
      return db.prepare(sql).all(...(values as unknown[])) as T[];
    } finally {
      db.close();
    }
  }

  batchStepTests({ base, stepped, rows, openStore: () => openStore(path) });

  it("resolves keys known only by their hash in the step, and leaves a revoked or non-agent key to be refused", async () => {
    const agent = await agentWithKey(base(0), "batch-hashed");
    const grantId = await grant(base(0), agent.id, { budget_amount_minor: 3_000, budget_currency: "EUR" });
    const revoked = await agentWithKey(base(0), "batch-hashed-revoked");
    const keys = await get<{ keys: { id: string; agent_id: string | null }[] }>(base(0), "/keys?limit=1000", ADMIN_KEY);
    const revokedKeyId = keys.keys.find((k) => k.agent_id === revoked.id)!.id;
    expect((await post(base(0), `/keys/${revokedKeyId}/revoke`, ADMIN_KEY, { reason: "gone" })).status).toBe(200);
    // A connection of its own deciding as the authorize worker does: the key presented by its hash.
    const driver = new WorkerDriver(path);
    const store = new WorkerStore(driver);
    const signer = new Signer(derivedKey(parseServerKey(TEST_SERVER_KEY, "test"), "signing-key-seal"));
    await signer.load(store, Date.now());
    const ctx: ServiceContext = {
      store,
      environment: "test-env",
      autoApprovalCeilingMinor: 10_000_000,
      now: Date.now,
      signer,
      cursorKey: derivedKey(parseServerKey(TEST_SERVER_KEY, "test"), "cursor"),
    };
    try {
      const body = { grant_id: grantId, tool: "payments.send", amount_minor: 100, currency: "EUR", attestation: ATTESTATION };
      const claim = (key: string) => ({ key, method: "POST", path: "/v1/authorize", requestHash: `hash-of-${key}` });
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) => {
          const secret = i % 10 === 9 ? revoked.key : i % 10 === 8 ? ADMIN_KEY : agent.key;
          // Two requests share each idempotency key, in the same batch.
          return authorizeAction(ctx, { keyHash: hashSecret(secret) }, body, claim(`hashed-${Math.floor(i / 2)}`));
        }),
      );
      const refused = answers.filter((a): a is Refusal => a instanceof Refusal);
      expect(refused.map((r) => r.code).sort()).toEqual([...Array(6).fill("forbidden"), ...Array(6).fill("unauthenticated")].sort());
      const decided = answers.filter((a) => !(a instanceof Refusal)).map((a) => JSON.parse((a as { text: string }).text));
      expect(decided).toHaveLength(48);
      // Twenty-four decisions under the budget; a key's two requests, in one batch, share one answer.
      expect(new Set(decided.map((d) => d.ledger_id)).size).toBe(24);
      expect(decided.filter((d) => d.outcome === "allow")).toHaveLength(48);
      expect(await get(base(1), `/grants/${grantId}`, ADMIN_KEY)).toMatchObject({ uses: 24, held_minor: 2_400 });
      expect(driver.stepped).toBeGreaterThan(20);
    } finally {
      await store.close();
    }
  });
});

describe.skipIf(!SERVER_BUILT)("a burst on the authorize worker killed before or after its batch's commit (SQLite)", () => {
  for (const point of ["before-commit", "after-commit"] as const) {
    it(`${point}: the retries make one effect per key, and the killed key replays only after the commit`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "authority-sqlite-batch-crash-"));
      const db = { url: join(dir, "authority.db") };
      const crashKey = `burst-${point}-crash`;
      let steady: ServerProcess | undefined;
      let victim: ServerProcess | undefined;
      try {
        steady = await startServerProcess(db);
        victim = await startServerProcess(db, {
          [point === "before-commit" ? "AUTHORITY_TEST_CRASH_BEFORE_COMMIT" : "AUTHORITY_TEST_CRASH_AFTER_COMMIT"]: crashKey,
        });
        const agent = await agentWithKey(steady.baseUrl, `burst-${point}`);
        const grantId = await grant(steady.baseUrl, agent.id, { budget_amount_minor: 100_000, budget_currency: "EUR" });
        const body = JSON.stringify({
          grant_id: grantId,
          tool: "payments.send",
          amount_minor: 100,
          currency: "EUR",
          attestation: ATTESTATION,
        });
        const send = async (base: string, key: string) => {
          try {
            const response = await fetch(`${base}/authorize`, {
              method: "POST",
              body,
              headers: { authorization: `Bearer ${agent.key}`, "content-type": "application/json", "idempotency-key": key },
            });
            return {
              status: response.status,
              text: await response.text(),
              replayed: response.headers.get("idempotent-replayed") === "true",
            };
          } catch (error) {
            if (error instanceof TypeError) return undefined;
            throw error;
          }
        };
        // Connections opened first, so that the burst reaches the worker together.
        const victimBase = victim.baseUrl;
        await Promise.all(Array.from({ length: 12 }, () => get(victimBase, "/agents?limit=1", ADMIN_KEY)));
        const keys = Array.from({ length: 12 }, (_, i) => (i === 5 ? crashKey : `burst-${point}-${i}`));
        const replies = await Promise.all(keys.map((key) => send(victimBase, key)));
        await victim.exited;
        expect(victim.child.signalCode).toBe("SIGKILL");
        expect(replies[5]).toBeUndefined();
        const retried = await Promise.all(keys.map((key) => send(steady!.baseUrl, key)));
        for (const reply of retried) expect(reply?.status, reply?.text).toBe(200);
        expect(retried[5]!.replayed).toBe(point === "after-commit");
        // An answer that left before the kill is the one replayed.
        for (const [i, reply] of replies.entries())
          if (reply !== undefined) expect(retried[i]).toMatchObject({ text: reply.text, replayed: true });
        expect(await get(steady.baseUrl, `/grants/${grantId}`, ADMIN_KEY)).toMatchObject({ uses: 12, held_minor: 1_200 });
        const store = openStore(db.url);
        try {
          const result = await verifyLedger(store);
          expect(result, JSON.stringify(result.broken)).toMatchObject({ ok: true, broken: null });
        } finally {
          await store.close();
        }
      } finally {
        for (const server of [steady, victim]) {
          if (server !== undefined && server.child.exitCode === null && server.child.signalCode === null) {
            server.child.kill("SIGKILL");
            await server.exited;
          }
        }
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
