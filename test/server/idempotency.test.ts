// Idempotency-Key on every POST, on both databases: 20 concurrent requests with one key and one body
// make exactly the effects of one request and get one answer byte for byte; a key's secret is never
// stored; stored answers expire after IDEMPOTENCY_LIMITS.retentionMs and are pruned in bounded passes.

import { readFileSync, existsSync } from "node:fs";
import { IDEMPOTENCY_LIMITS, pruneExpiredAnswers, startIdempotencyPruner } from "@agent-authority/server";
import { AuthorityClient, AuthorityProblemError } from "@agent-authority/sdk";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ADMIN_KEY } from "./http-harness.js";
import { certifiedAgent, startDecisionServer, type DecisionServer, type Reply } from "./decisions-http.js";
import { APPROVER_IDENTITY, postCases, type Post } from "./post-cases.js";
import { forEachStore, type StoreTarget } from "./targets.js";
import type { KeyCreated } from "@agent-authority/sdk";

const RACERS = 20;

/** Row counts that changed between two snapshots, by table. */
function delta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const changed: Record<string, number> = {};
  for (const [table, n] of Object.entries(after)) if (n !== before[table]) changed[table] = n - (before[table] ?? 0);
  return changed;
}

function idempotencySuite(target: StoreTarget): void {
  let s: DecisionServer;
  let agent: { id: string; key: string };
  let approverKey: string;
  let n = 0;
  const unique = (label: string) => `${label}-${(n += 1)}`;
  beforeAll(async () => {
    s = await startDecisionServer(target);
    agent = await certifiedAgent(s, "idem-agent");
    approverKey = (
      await s.call<KeyCreated>("POST", "/keys", ADMIN_KEY, { identity: APPROVER_IDENTITY, kind: "human", roles: ["approver"] })
    ).body.key;
  });
  afterAll(async () => {
    await s?.close();
  });

  const send = (post: Post, key: string): Promise<Reply> => s.call("POST", post.path, post.key, post.body, { "idempotency-key": key });
  const ok = (reply: Reply, status: number): Reply => {
    expect(reply.status, reply.text).toBe(status);
    return reply;
  };
  const post = async (key: string, path: string, body: unknown, status: number): Promise<Record<string, unknown>> =>
    ok(await s.call("POST", path, key, body), status).body;
  /** Each POST endpoint, with a fresh request of it: every call prepares its own resources. */
  const CASES = postCases({ post, agent: () => agent, approverKey: () => approverKey, unique });

  describe("20 concurrent requests with one key and one body", () => {
    for (const [name, prepare] of Object.entries(CASES)) {
      it(`${name}: the effects of one request, one answer byte for byte`, async () => {
        // What one request changes, on a request of its own.
        const single = await prepare();
        const beforeOne = await s.db.store.countRows();
        const first = await send(single, unique("single"));
        expect(first.status, first.text).toBeLessThan(300);
        const one = delta(beforeOne, await s.db.store.countRows());
        expect(one["idempotency_keys"]).toBe(1);

        const raced = await prepare();
        const key = unique("race");
        const before = await s.db.store.countRows();
        const replies = await Promise.all(Array.from({ length: RACERS }, () => send(raced, key)));
        expect(delta(before, await s.db.store.countRows())).toEqual(one);
        expect(new Set(replies.map((r) => `${r.status} ${r.headers.get("content-type")}\n${r.text}`)).size, replies[0]!.text).toBe(1);
        expect(replies[0]!.status).toBe(first.status);
        expect(replies.filter((r) => r.headers.get("idempotent-replayed") === "true")).toHaveLength(RACERS - 1);
      });
    }

    it("POST /v1/keys: one key; its secret in one answer, the others a problem naming the key", async () => {
      const body = { identity: unique("raced-key"), kind: "service", roles: ["auditor"] };
      const before = await s.db.store.countRows();
      const replies = await Promise.all(Array.from({ length: RACERS }, () => send({ key: ADMIN_KEY, path: "/keys", body }, "one-key")));
      expect(delta(before, await s.db.store.countRows())).toEqual({ api_keys: 1, idempotency_keys: 1 });
      const created = replies.filter((r) => r.status === 201);
      expect(created).toHaveLength(1);
      const withheld = replies.filter((r) => r.status === 409);
      expect(withheld).toHaveLength(RACERS - 1);
      expect(new Set(withheld.map((r) => r.text)).size).toBe(1);
      expect(withheld[0]!.body).toMatchObject({ code: "key_secret_shown_once", key_id: created[0]!.body.id });
      expect(withheld[0]!.text).not.toContain(created[0]!.body.key);
    });
  });

  describe("a key's secret", () => {
    it("is never stored: no row of any table holds it, and what the database holds does not authenticate", async () => {
      const created = await send(
        { key: ADMIN_KEY, path: "/keys", body: { identity: "secret-scan", kind: "service", roles: ["auditor"] } },
        "scan-key",
      );
      expect(created.status).toBe(201);
      const secret = created.body.key as string;
      // The secret authenticates; its replay answers the problem and not the secret.
      expect((await s.call("GET", "/whoami", secret)).status).toBe(200);
      const replay = await send(
        { key: ADMIN_KEY, path: "/keys", body: { identity: "secret-scan", kind: "service", roles: ["auditor"] } },
        "scan-key",
      );
      expect(replay.status).toBe(409);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body).toMatchObject({ code: "key_secret_shown_once", key_id: created.body.id });
      const stored: string[] = [];
      for (const table of Object.keys(await s.db.store.countRows())) {
        const rows = await s.db.raw(`SELECT * FROM ${table}`);
        stored.push(JSON.stringify(rows));
      }
      expect(stored.join("\n")).not.toContain(secret);
      expect(stored.join("\n")).not.toContain(secret.slice(3));
      if (target.name === "sqlite") {
        for (const file of [s.db.url, `${s.db.url}-wal`]) {
          if (existsSync(file)) expect(readFileSync(file).includes(secret.slice(3)), file).toBe(false);
        }
      }
      // Every string the database holds that looks like a key is refused.
      const candidates = new Set(stored.join("\n").match(/aa_[A-Za-z0-9_-]{20,}/g) ?? []);
      for (const candidate of candidates) expect((await s.call("GET", "/whoami", candidate)).status, candidate).toBe(401);
    });
  });

  describe("the sdk", () => {
    it("throws `key_secret_shown_once` naming the key on a retried key creation, never the secret", async () => {
      const admin = new AuthorityClient({ baseUrl: s.server.baseUrl, apiKey: ADMIN_KEY, timeoutMs: 5_000, attempts: 1 });
      const body = { identity: "sdk-retried", kind: "service", roles: ["auditor"] } as const;
      const created = await admin.keys.create(body, { idempotencyKey: "sdk-key" });
      const retried = await admin.keys.create(body, { idempotencyKey: "sdk-key" }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(retried).toBeInstanceOf(AuthorityProblemError);
      const problem = retried as AuthorityProblemError;
      expect(problem).toMatchObject({ status: 409, code: "key_secret_shown_once", problem: { key_id: created.id } });
      expect(JSON.stringify(problem.problem)).not.toContain(created.key);
    });
  });

  describe("expiry", () => {
    it(`replays an answer until ${IDEMPOTENCY_LIMITS.retentionMs} ms after it was stored, and takes the key as new from then on`, async () => {
      const start = s.clock.now;
      const request = await CASES["POST /v1/grants"]!();
      const first = ok(await send(request, "expiring"), 201);
      s.clock.now = start + IDEMPOTENCY_LIMITS.retentionMs - 1;
      const replay = ok(await send(request, "expiring"), 201);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.text).toBe(first.text);
      s.clock.now = start + IDEMPOTENCY_LIMITS.retentionMs;
      const fresh = ok(await send(request, "expiring"), 201);
      expect(fresh.headers.get("idempotent-replayed")).toBeNull();
      expect(fresh.body.id).not.toBe(first.body.id);
      // The new answer is the one replayed now.
      expect((await send(request, "expiring")).text).toBe(fresh.text);
      s.clock.now = start;
    });

    it("authorize: the same edge, and an expired key decides again", async () => {
      const start = s.clock.now;
      const request = await CASES["POST /v1/authorize"]!();
      const first = ok(await send(request, "expiring-decision"), 200);
      s.clock.now = start + IDEMPOTENCY_LIMITS.retentionMs - 1;
      expect((await send(request, "expiring-decision")).text).toBe(first.text);
      s.clock.now = start + IDEMPOTENCY_LIMITS.retentionMs;
      const fresh = ok(await send(request, "expiring-decision"), 200);
      expect(fresh.body.ledger_id).not.toBe(first.body.ledger_id);
      s.clock.now = start;
    });
  });

  describe("pruning", () => {
    const insertAnswers = async (count: number, createdAt: number, prefix: string) =>
      s.db.raw(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO idempotency_keys (caller_key_id, idempotency_key, method, path, request_hash, status, response, created_at)
       SELECT 'key_pruned', ? || i, 'POST', '/v1/agents', 'h', 201, 'application/json; charset=utf-8\n{}', ? FROM n`,
        [count, prefix, createdAt],
      );
    const kept = async (prefix: string) =>
      Number(
        (
          (await s.db.raw("SELECT COUNT(*) AS n FROM idempotency_keys WHERE idempotency_key LIKE ?", [`${prefix}%`])) as { n: unknown }[]
        )[0]!.n,
      );

    it("deletes answers from the moment they expire, not before", async () => {
      const now = s.clock.now;
      await insertAnswers(1, now - IDEMPOTENCY_LIMITS.retentionMs, "edge-expired-");
      await insertAnswers(1, now - IDEMPOTENCY_LIMITS.retentionMs + 1, "edge-live-");
      await pruneExpiredAnswers(s.db.store, now);
      expect(await kept("edge-expired-")).toBe(0);
      expect(await kept("edge-live-")).toBe(1);
      await pruneExpiredAnswers(s.db.store, now + 1);
      expect(await kept("edge-live-")).toBe(0);
    });

    it("deletes at most pruneBatchRowsMax answers a batch and pruneBatchesPerPassMax batches a pass", async () => {
      const now = s.clock.now;
      const passMax = IDEMPOTENCY_LIMITS.pruneBatchRowsMax * IDEMPOTENCY_LIMITS.pruneBatchesPerPassMax;
      await insertAnswers(passMax + 11, now - IDEMPOTENCY_LIMITS.retentionMs - 1, "backlog-");
      expect(await s.db.store.decisionPath().pruneIdempotency(now - IDEMPOTENCY_LIMITS.retentionMs, 10)).toBe(10);
      expect(await pruneExpiredAnswers(s.db.store, now)).toEqual({ deleted: passMax, backlog: true });
      expect(await kept("backlog-")).toBe(1);
      expect(await pruneExpiredAnswers(s.db.store, now)).toEqual({ deleted: 1, backlog: false });
      expect(await kept("backlog-")).toBe(0);
    });

    it("passes again after pruneBacklogIntervalMs while a backlog remains, then every pruneIntervalMs", async () => {
      const now = s.clock.now;
      const passMax = IDEMPOTENCY_LIMITS.pruneBatchRowsMax * IDEMPOTENCY_LIMITS.pruneBatchesPerPassMax;
      await insertAnswers(passMax + 1, now - IDEMPOTENCY_LIMITS.retentionMs, "timer-");
      const passes: number[] = [];
      let passed: () => void = () => undefined;
      const logger = {
        log: (_level: string, msg: string, fields: Record<string, unknown> = {}) => {
          if (msg === "expired idempotency answers pruned") passes.push(fields["deleted"] as number);
          passed();
        },
      };
      const nextPass = () =>
        new Promise<void>((resolve) => {
          passed = resolve;
        });
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      try {
        let pass = nextPass();
        const pruner = startIdempotencyPruner(s.db.store, () => now, logger);
        await pass;
        expect(passes).toEqual([passMax]);
        pass = nextPass();
        await vi.advanceTimersByTimeAsync(IDEMPOTENCY_LIMITS.pruneBacklogIntervalMs - 1);
        expect(passes).toEqual([passMax]);
        await vi.advanceTimersByTimeAsync(1);
        await pass;
        expect(passes).toEqual([passMax, 1]);
        // Nothing left: the next pass waits the full interval, and deletes nothing.
        await insertAnswers(1, now - IDEMPOTENCY_LIMITS.retentionMs, "timer-late-");
        pass = nextPass();
        await vi.advanceTimersByTimeAsync(IDEMPOTENCY_LIMITS.pruneIntervalMs - 1);
        expect(await kept("timer-late-")).toBe(1);
        await vi.advanceTimersByTimeAsync(1);
        await pass;
        expect(passes).toEqual([passMax, 1, 1]);
        await pruner.stop();
      } finally {
        vi.useRealTimers();
      }
    });

    it("runs in the server: a start prunes what expired while it was down", async () => {
      await insertAnswers(3, s.clock.now - IDEMPOTENCY_LIMITS.retentionMs, "restart-");
      await s.restart();
      for (let tries = 0; tries < 200 && (await kept("restart-")) > 0; tries += 1) await new Promise((r) => setTimeout(r, 25));
      expect(await kept("restart-")).toBe(0);
    });
  });
}

forEachStore("Idempotency-Key on every POST", idempotencySuite);
