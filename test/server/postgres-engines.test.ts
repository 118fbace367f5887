// The cockroachdb engine profile on the real PostgreSQL (decision 0310): what it changes in the
// schema and the transactions, servers starting together on an empty schema, and the promises
// under concurrency, where SERIALIZABLE turns conflicts into 40001 failures retried inside the store.

import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ENGINE_PROFILES,
  LATEST_MIGRATION,
  loadConfig,
  MIGRATIONS,
  openStore,
  PostgresDriver,
  SignalSequenceUnordered,
  SqlStore,
  startServer,
  verifyLedger,
  type AuthorityServer,
  type KeyRecord,
} from "@agent-authority/server";
import { ADMIN_KEY } from "./http-harness.js";
import { sentSixTimesEach, agentWithKey, ATTESTATION, get, grant, post, postRetryingContention } from "./server-processes.js";
import { cockroachProfileTarget, openTestStore, pgProblem, PG_URL, postgresTarget } from "./targets.js";
import type { Grant } from "@agent-authority/sdk";

const ENGINE = ENGINE_PROFILES.cockroachdb;

function key(): KeyRecord {
  return {
    id: `key_${randomBytes(13).toString("hex")}`,
    hash: randomBytes(16).toString("hex"),
    identity: "ops@example.com",
    kind: "human",
    roles: ["admin"],
    agent_id: null,
    agent_ids: null,
    email: null,
    created_at: Date.now(),
    created_by: null,
    revoked_at: null,
    revoked_by: null,
    revocation_reason: null,
  };
}

async function query(schema: string, sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** A server on `schema` with the cockroachdb profile, from the configuration a replica would read. */
function startReplica(schema: string, store?: SqlStore): Promise<AuthorityServer> {
  const config = loadConfig({
    AUTHORITY_DATABASE_URL: PG_URL,
    AUTHORITY_DATABASE_SCHEMA: schema,
    AUTHORITY_DATABASE_ENGINE: "cockroachdb",
    AUTHORITY_PORT: "0",
    AUTHORITY_LOG_LEVEL: "silent",
    AUTHORITY_ENVIRONMENT: "test-env",
    AUTHORITY_ADMIN_KEY: ADMIN_KEY,
    AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "10000000",
  });
  return startServer(config, store === undefined ? {} : { store, ownsStore: true });
}

describe("AUTHORITY_DATABASE_ENGINE", () => {
  it("selects the engine profile, postgresql by default, and refuses an unknown engine or a SQLite file", () => {
    expect(loadConfig({}).databaseEngine).toBe("postgresql");
    expect(loadConfig({ AUTHORITY_DATABASE_URL: PG_URL, AUTHORITY_DATABASE_ENGINE: "yugabytedb" }).databaseEngine).toBe("yugabytedb");
    expect(() => loadConfig({ AUTHORITY_DATABASE_URL: PG_URL, AUTHORITY_DATABASE_ENGINE: "CockroachDB" })).toThrow(
      "AUTHORITY_DATABASE_ENGINE must be postgresql, cockroachdb or yugabytedb, got `CockroachDB`",
    );
    expect(() => loadConfig({ AUTHORITY_DATABASE_ENGINE: "cockroachdb" })).toThrow(/needs a postgres:\/\/ AUTHORITY_DATABASE_URL/);
    expect(() => openStore(":memory:", { engine: "cockroachdb" })).toThrow(/needs a `postgres:\/\/` database URL/);
  });
});

describe("the cockroachdb engine profile on PostgreSQL", () => {
  if (pgProblem !== null) {
    it.skip(`skipped because PostgreSQL is unreachable at ${PG_URL}: ${pgProblem}`, () => undefined);
    return;
  }

  it("locks with rows, begins every transaction SERIALIZABLE, and keeps every guard but TRUNCATE's", async () => {
    const engine = await openTestStore(cockroachProfileTarget);
    const plain = await openTestStore(postgresTarget);
    try {
      const triggers = async (schema: string) =>
        (await query(
          schema,
          `SELECT t.tgname AS name, (t.tgtype & 32) <> 0 AS on_truncate FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
          WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal`,
        )) as { name: string; on_truncate: boolean }[];
      const withProfile = await triggers(engine.schema!);
      const without = await triggers(plain.schema!);
      expect(without.filter((t) => t.on_truncate).length).toBeGreaterThan(0);
      expect(withProfile.filter((t) => t.on_truncate)).toEqual([]);
      expect(withProfile.map((t) => t.name).sort()).toEqual(
        without
          .filter((t) => !t.on_truncate)
          .map((t) => t.name)
          .sort(),
      );
      // The migration lock was a row; the plain profile makes no lock table at all.
      expect(await engine.raw("SELECT name, taken FROM authority_locks ORDER BY name")).toEqual([{ name: "migrations", taken: "1" }]);
      expect(await plain.raw("SELECT to_regclass('authority_locks') AS t")).toEqual([{ t: null }]);
      // A store opened with the engine runs SERIALIZABLE: its reads leave predicate locks
      // (SIReadLock), which PostgreSQL takes at no other level; the plain profile leaves none.
      const predicateLocks = async (db: typeof engine) => {
        let seen: unknown[] = [];
        await db.store.batchedTransaction(async (tx) => {
          await tx.countKeys();
          seen = await query(
            db.schema!,
            `SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
            WHERE l.mode = 'SIReadLock' AND c.relname = 'api_keys' AND c.relnamespace = current_schema()::regnamespace`,
          );
        });
        return seen.length;
      };
      expect(await predicateLocks(engine)).toBe(1);
      expect(await predicateLocks(plain)).toBe(0);
      // Each transaction, plain or grouped, begins SERIALIZABLE; the plain profile keeps the default.
      const driver = new PostgresDriver(PG_URL, { schema: engine.schema!, isolation: "serializable" });
      const defaults = new PostgresDriver(PG_URL, { schema: engine.schema! });
      try {
        const levels = await Promise.all([
          driver.transaction((tx) => tx.get("SHOW transaction_isolation")),
          driver.groupTransaction((tx) => tx.get("SHOW transaction_isolation")),
          defaults.transaction((tx) => tx.get("SHOW transaction_isolation")),
        ]);
        expect(levels.map((row) => row!["transaction_isolation"])).toEqual(["serializable", "serializable", "read committed"]);
      } finally {
        await Promise.all([driver.close(), defaults.close()]);
      }
    } finally {
      await Promise.all([engine.close(), plain.close()]);
    }
  });

  it("holds an agent's own chain with its lock row until the transaction ends", async () => {
    const db = await openTestStore(cockroachProfileTarget);
    const other = openStore(db.url, db.options);
    try {
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked!: () => void;
      const taken = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = db.store.transaction(async (tx) => {
        await tx.decisionPath().lockChain("agt_own");
        locked();
        await held;
      });
      await taken;
      const order: string[] = [];
      const waiter = other.transaction(async (tx) => {
        await tx.decisionPath().lockChain("agt_own");
        order.push("waiter");
      });
      await new Promise((resolve) => setTimeout(resolve, 150));
      order.push("holder done");
      release();
      await Promise.all([holder, waiter]);
      expect(order).toEqual(["holder done", "waiter"]);
      expect(await db.raw("SELECT name FROM authority_locks WHERE name = 'ledger:agt_own'")).toHaveLength(1);
    } finally {
      await other.close();
      await db.close();
    }
  });

  it("answers a start that waited for the first admin key's lock with what the holder wrote, not its older snapshot", async () => {
    const db = await openTestStore(cockroachProfileTarget);
    const other = openStore(db.url, db.options);
    try {
      // The lock's row exists already, as after any earlier start: the waiter waits on the row alone.
      await db.store.transaction((tx) => tx.lockKeyBootstrap());
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked!: () => void;
      const taken = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = db.store.transaction(async (tx) => {
        await tx.lockKeyBootstrap();
        locked();
        await held;
        await tx.insertKey(key());
      });
      await taken;
      let tries = 0;
      // Its snapshot is taken by its first statement, before the holder commits.
      const waiter = other.transaction(async (tx) => {
        tries += 1;
        await tx.lockKeyBootstrap();
        return tx.countKeys();
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      release();
      await holder;
      expect(await waiter).toBe(1);
      expect(tries).toBe(2);
    } finally {
      await other.close();
      await db.close();
    }
  });

  it("refuses a signal column not filled from a sequence, and sets the sequence to hand out one value at a time", async () => {
    const db = await openTestStore(cockroachProfileTarget);
    try {
      await db.raw("ALTER SEQUENCE decision_signals_seq_seq CACHE 50");
      await db.store.migrate(Date.now());
      expect(await db.raw("SELECT seqcache FROM pg_sequence WHERE seqrelid = 'decision_signals_seq_seq'::regclass")).toEqual([
        { seqcache: "1" },
      ]);
      // What CockroachDB makes of BIGSERIAL without `serial_normalization = sql_sequence`.
      await db.raw("ALTER TABLE decision_signals ALTER COLUMN seq SET DEFAULT (floor(random() * 1e15))::bigint");
      await expect(db.store.migrate(Date.now())).rejects.toThrow(SignalSequenceUnordered);
      await expect(db.store.migrate(Date.now())).rejects.toThrow(/serial_normalization = 'sql_sequence'/);
    } finally {
      await db.close();
    }
  });

  it("several starts upgrading a schema together apply the new migration once", async () => {
    const db = await openTestStore(cockroachProfileTarget);
    try {
      for (let round = 0; round < 3; round += 1) {
        // The schema as the release before the last migration left it.
        await db.raw(`DELETE FROM schema_migrations WHERE version = ${LATEST_MIGRATION}`);
        const replicas = Array.from({ length: 4 }, () => openStore(db.url, db.options));
        try {
          const applied = await Promise.all(replicas.map((replica) => replica.migrate(Date.now())));
          expect(applied.filter((versions) => versions.length > 0)).toEqual([[LATEST_MIGRATION]]);
        } finally {
          await Promise.all(replicas.map((replica) => replica.close()));
        }
      }
    } finally {
      await db.close();
    }
  });

  it("several servers starting together on an empty schema migrate once and create one admin key", async () => {
    for (let round = 0; round < 2; round += 1) {
      const db = await cockroachProfileTarget.create();
      try {
        const starts = await Promise.allSettled(Array.from({ length: 4 }, () => startReplica(db.schema!)));
        const servers = starts.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
        try {
          expect(starts.filter((s) => s.status === "rejected").map((s) => String((s as PromiseRejectedResult).reason))).toEqual([]);
          expect(await query(db.schema!, "SELECT version FROM schema_migrations ORDER BY version")).toHaveLength(MIGRATIONS.length);
          expect(await query(db.schema!, "SELECT identity FROM api_keys")).toEqual([{ identity: "admin" }]);
        } finally {
          await Promise.all(servers.map((server) => server.close()));
        }
      } finally {
        await db.dispose();
      }
    }
  });
});

describe("the promises under the cockroachdb profile: three servers on one PostgreSQL schema", () => {
  if (pgProblem !== null) {
    it.skip(`skipped because PostgreSQL is unreachable at ${PG_URL}: ${pgProblem}`, () => undefined);
    return;
  }
  let db: Awaited<ReturnType<typeof cockroachProfileTarget.create>>;
  const drivers: PostgresDriver[] = [];
  const servers: AuthorityServer[] = [];
  const base = (i: number) => servers[i % servers.length]!.baseUrl;
  const retries = () => drivers.reduce((sum, driver) => sum + driver.retries, 0);

  beforeAll(async () => {
    db = await cockroachProfileTarget.create();
    for (let i = 0; i < 3; i += 1) {
      const driver = new PostgresDriver(db.url, { schema: db.schema!, isolation: ENGINE.isolation! });
      drivers.push(driver);
      servers.push(await startReplica(db.schema!, new SqlStore(driver, db.schema, ENGINE)));
    }
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await db?.dispose();
  });

  it("spends a grant tree's budget exactly under 240 concurrent authorizes spread over the servers", async () => {
    const agent = await agentWithKey(base(0), "tree-racer");
    const parent = await grant(base(0), agent.id, { budget_amount_minor: 4_000, budget_currency: "EUR", delegation_policy: "attenuating" });
    const children: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const child = await post<Grant>(base(i), `/grants/${parent}/delegate`, ADMIN_KEY, { agent_id: agent.id });
      expect(child.status, JSON.stringify(child.body)).toBe(201);
      children.push(child.body.id);
    }
    const before = retries();
    // Sent as a client sends them: a request that used up its retries in the store is answered 409
    // `contention`, nothing written, and is sent again under its idempotency key.
    const replies = await Promise.all(
      Array.from({ length: 240 }, (_, i) =>
        postRetryingContention(
          base(i),
          "/authorize",
          agent.key,
          {
            grant_id: i % 4 === 3 ? parent : children[i % 4]!,
            tool: "payments.send",
            amount_minor: 100,
            currency: "EUR",
            attestation: ATTESTATION,
          },
          `tree-${i}`,
        ),
      ),
    );
    for (const reply of replies) expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(replies.filter((r) => r.body.outcome === "allow")).toHaveLength(40);
    expect(replies.filter((r) => r.body.outcome === "exhausted")).toHaveLength(200);
    // Every allow is one use and one hold of 100 on the root, and on the child it went through.
    const root = await get(base(1), `/grants/${parent}`, ADMIN_KEY);
    expect(root).toMatchObject({ uses: 40, held_minor: 4_000, settled_minor: 0 });
    let childUses = 0;
    for (const id of children) childUses += (await get<Grant>(base(2), `/grants/${id}`, ADMIN_KEY)).uses;
    const direct = replies.filter((r, i) => i % 4 === 3 && r.body.outcome === "allow").length;
    expect(childUses + direct).toBe(40);
    // SERIALIZABLE answered conflicts between the servers with 40001, retried inside the store.
    console.info(
      `cockroachdb profile: ${retries() - before} transactions retried for 240 authorizes on one tree, ` +
        `${replies.reduce((sum, r) => sum + r.contended, 0)} answers 409 contention sent again`,
    );
    expect(retries() - before).toBeGreaterThan(0);
  });

  it("decides once per idempotency key sent to every server at the same moment", async () => {
    const agent = await agentWithKey(base(1), "key-racer");
    const grantId = await grant(base(1), agent.id, { budget_amount_minor: 1_000_000, budget_currency: "EUR" });
    const body = JSON.stringify({ grant_id: grantId, tool: "payments.send", amount_minor: 100, currency: "EUR", attestation: ATTESTATION });
    const keys = Array.from({ length: 8 }, (_, k) => `payment-${k}`);
    const before = retries();
    expect(await sentSixTimesEach(base, agent.key, body, keys)).toEqual({ oneAnswerPerKey: true, distinct: keys.length });
    expect(await get(base(2), `/grants/${grantId}`, ADMIN_KEY)).toMatchObject({ uses: keys.length, held_minor: 100 * keys.length });
    console.info(`cockroachdb profile: ${retries() - before} transactions retried for 48 authorizes with 8 idempotency keys`);
  });

  it("keeps one chain per agent for decisions on grants it does not hold, and every chain verifies", async () => {
    const owner = await agentWithKey(base(0), "owner");
    const stranger = await agentWithKey(base(2), "stranger");
    const theirs = await grant(base(0), owner.id, { budget_amount_minor: 1_000_000, budget_currency: "EUR" });
    const before = retries();
    const replies = await Promise.all(
      Array.from({ length: 90 }, (_, i) =>
        postRetryingContention(
          base(i),
          "/authorize",
          stranger.key,
          {
            grant_id: theirs,
            tool: "payments.send",
            amount_minor: 100,
            currency: "EUR",
            attestation: ATTESTATION,
          },
          `own-${i}`,
        ),
      ),
    );
    for (const reply of replies) expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(new Set(replies.map((r) => r.body.outcome))).toEqual(new Set(["deny"]));
    console.info(`cockroachdb profile: ${retries() - before} transactions retried for 90 authorizes on one agent's own chain`);
    const chain = await query(db.schema!, "SELECT seq FROM ledger WHERE tree_id = $1 ORDER BY seq", [stranger.id]);
    expect(chain.map((row) => Number(row.seq))).toEqual(Array.from({ length: 90 }, (_, i) => i + 1));
    const store = openStore(db.url, { schema: db.schema!, engine: "cockroachdb" });
    try {
      const result = await verifyLedger(store);
      expect(result, JSON.stringify(result.broken)).toMatchObject({ ok: true, broken: null });
      expect(result.records).toBeGreaterThanOrEqual(240 + 8 + 90);
    } finally {
      await store.close();
    }
  });
});
