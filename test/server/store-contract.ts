// The store contract: one behaviour suite that every Store implementation must pass.

import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkTreeChain, Signer } from "../../server/src/services/seal/index.js";
import {
  bootstrapAdminKey,
  LATEST_MIGRATION,
  openStore,
  sealRecord,
  type AgentRecord,
  type CertificateRecord,
  type GrantRecord,
  type KeyRecord,
} from "@agent-authority/server";
import { grantRecord, recordId, T0 } from "./store-records.js";
import { openTestStore, type StoreTarget, type TestStore } from "./targets.js";

const HOUR = 3_600_000;
const id = recordId;

function agent(name: string): AgentRecord {
  return { id: id("agt"), name, description: null, created_at: T0, created_by: "admin" };
}

function grant(agentId: string, over: Partial<GrantRecord> = {}): GrantRecord {
  return grantRecord(agentId, { policy: "amount_minor <= 1000", ...over });
}

function certificate(agentId: string, over: Partial<CertificateRecord> = {}): CertificateRecord {
  return {
    id: id("crt"),
    agent_id: agentId,
    environment: "development",
    issued_by: "cert@example.com",
    issued_by_email: "cert@example.com",
    issued_at: T0,
    basis: "evaluation report 7",
    provenance_version: "m-1",
    manifest_hash: "sha256:aa",
    content_hash: "sha256:bb",
    market_profile: "EU",
    checks: ["red-team"],
    revoked_at: null,
    revoked_by: null,
    revocation_reason: null,
    superseded_by: null,
    ...over,
  };
}

function key(over: Partial<KeyRecord> = {}): KeyRecord {
  return {
    id: id("key"),
    hash: `hash-${recordId("h")}`,
    identity: "ops@example.com",
    kind: "human",
    roles: ["issuer"],
    agent_id: null,
    agent_ids: null,
    email: "ops@example.com",
    created_at: T0,
    created_by: "admin",
    revoked_at: null,
    revoked_by: null,
    revocation_reason: null,
    ...over,
  };
}

export function storeContract(target: StoreTarget): void {
  let db: TestStore;
  beforeAll(async () => {
    db = await openTestStore(target, T0);
  });
  afterAll(async () => {
    await db?.close();
  });

  describe("migrations", () => {
    it("are recorded and applying them again changes nothing", async () => {
      expect(await db.store.migrate(T0)).toEqual([]);
      const rows = (await db.raw("SELECT version FROM schema_migrations ORDER BY version")) as { version: number }[];
      expect(rows.map((r) => Number(r.version)).at(-1)).toBe(LATEST_MIGRATION);
    });

    it("index the ledger by id, by tree, and the gated decisions alone by id: three entries for each sealed decision at most", async () => {
      const rows = (await db.raw(
        target.name === "postgres"
          ? "SELECT indexname AS name FROM pg_indexes WHERE tablename = 'ledger' AND schemaname = current_schema()"
          : "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'ledger'",
      )) as { name: string }[];
      const names = rows.map((r) => r.name);
      expect(names).toHaveLength(3);
      expect(names).toContain("ledger_gated");
      expect(names).not.toContain("ledger_grant");
    });
  });

  describe("agents", () => {
    it("are created once per name", async () => {
      const first = await db.store.createAgentIfAbsent(agent("contract-agent"));
      const again = await db.store.createAgentIfAbsent(agent("contract-agent"));
      expect(first.created).toBe(true);
      expect(again.created).toBe(false);
      expect(again.agent.id).toBe(first.agent.id);
      expect(await db.store.getAgent(first.agent.id)).toEqual(first.agent);
      expect(await db.store.getAgent("agt_missing")).toBeUndefined();
    });
  });

  describe("keys", () => {
    it("are found by hash and revoked once", async () => {
      const k = key({ roles: ["issuer", "approver"] });
      await db.store.insertKey(k);
      expect(await db.store.findKeyByHash(k.hash)).toEqual(k);
      expect(await db.store.revokeKey(k.id, { at: T0 + 1, by: "admin", reason: "rotated" })).toBe(true);
      expect(await db.store.revokeKey(k.id, { at: T0 + 2, by: "admin", reason: "again" })).toBe(false);
      const stored = await db.store.getKey(k.id);
      expect(stored).toMatchObject({ revoked_at: T0 + 1, revoked_by: "admin", revocation_reason: "rotated" });
    });

    it("are found by several hashes at once, each by its own, unknown ones left out", async () => {
      const a = key({ roles: ["agent"] });
      const b = key({ roles: ["auditor"] });
      await db.store.insertKey(a);
      await db.store.insertKey(b);
      // A hash as an array literal would quote it: quotes, backslashes, commas and braces stay text.
      const odd = 'x"\\,{}NULL';
      const found = await db.store.findKeysByHash([a.hash, odd, b.hash, a.hash]);
      expect([...found.keys()].sort()).toEqual([a.hash, b.hash].sort());
      expect(found.get(a.hash)).toEqual(a);
      expect(found.get(b.hash)).toEqual(b);
      expect((await db.store.findKeysByHash([])).size).toBe(0);
    });

    it("count active keys by role", async () => {
      const before = await db.store.countActiveKeysWithRole("auditor");
      await db.store.insertKey(key({ roles: ["auditor"] }));
      expect(await db.store.countActiveKeysWithRole("auditor")).toBe(before + 1);
    });

    // Replicas share a database only on PostgreSQL. On SQLite, BEGIN IMMEDIATE already serialises
    // processes; several synchronous connections inside one test process would block each other.
    it.runIf(target.name === "postgres")("come to exactly one first admin key when several starts race on an empty database", async () => {
      // Replicas starting together each try to create the first key; each must see the other's.
      // Each start has its own connection to the database, as separate processes do.
      const fresh = await openTestStore(target, T0);
      const replicas = Array.from({ length: 4 }, () => openStore(fresh.url, fresh.options));
      try {
        const starts = await Promise.all(replicas.map((replica) => bootstrapAdminKey(replica, undefined, T0)));
        expect(starts.filter((s) => s.created)).toHaveLength(1);
        expect(await fresh.store.countKeys()).toBe(1);
      } finally {
        await Promise.all(replicas.map((replica) => replica.close()));
        await fresh.close();
      }
    });

    it("refuse a second key with the same hash", async () => {
      const k = key();
      await db.store.insertKey(k);
      await expect(db.store.insertKey({ ...k, id: id("key") })).rejects.toThrow();
    });
  });

  describe("certificates", () => {
    it("keep at most one valid certificate per agent and environment, superseded by field", async () => {
      const { agent: a } = await db.store.createAgentIfAbsent(agent("certified-agent"));
      const first = certificate(a.id);
      await db.store.insertCertificate(first);
      await expect(db.store.insertCertificate(certificate(a.id))).rejects.toThrow();
      const second = certificate(a.id, { issued_at: T0 + 5 });
      await db.store.transaction(async (tx) => {
        expect(await tx.revokeCertificate(first.id, { at: T0 + 5, by: "cert@example.com", reason: "superseded" }, second.id)).toBe(true);
        await tx.insertCertificate(second);
      });
      expect(await db.store.validCertificate(a.id, "development")).toEqual(second);
      expect(await db.store.getCertificate(first.id)).toMatchObject({ revoked_at: T0 + 5, superseded_by: second.id });
      expect(await db.store.validCertificate(a.id, "production")).toBeUndefined();
      expect((await db.store.listCertificates({ agent_id: a.id }, { limit: 10 })).map((c) => c.id)).toEqual([first.id, second.id]);
    });
  });

  describe("grants", () => {
    let a: AgentRecord;
    beforeAll(async () => {
      a = (await db.store.createAgentIfAbsent(agent("grant-agent"))).agent;
    });

    it("round-trip every field", async () => {
      const g = grant(a.id, { budget_count: 7, delegation_depth_max: 2, audience: "bank", family_id: "fam", family_version: "3" });
      await db.store.insertGrant(g);
      expect(await db.store.getGrant(g.id)).toEqual(g);
    });

    it("walk chains root first and subtrees top down", async () => {
      const root = grant(a.id);
      const child = grant(a.id, { root_id: root.id, parent_id: root.id, depth: 1 });
      const grandchild = grant(a.id, { root_id: root.id, parent_id: child.id, depth: 2 });
      const sibling = grant(a.id, { root_id: root.id, parent_id: root.id, depth: 1 });
      for (const g of [root, child, grandchild, sibling]) await db.store.insertGrant(g);
      expect((await db.store.grantChain(grandchild.id)).map((g) => g.id)).toEqual([root.id, child.id, grandchild.id]);
      expect(new Set(await db.store.subtreeIds(root.id))).toEqual(new Set([root.id, child.id, grandchild.id, sibling.id]));
      expect(await db.store.subtreeIds(child.id)).toEqual([child.id, grandchild.id]);
      const revoked = await db.store.revokeGrants(await db.store.subtreeIds(child.id), { at: T0 + 9, by: "admin", reason: null });
      expect(revoked).toEqual([child.id, grandchild.id]);
      expect(await db.store.revokeGrants([root.id, child.id], { at: T0 + 10, by: "admin", reason: null })).toEqual([root.id]);
      expect(await db.store.getGrant(child.id)).toMatchObject({ status: "revoked", revoked_at: T0 + 9 });
    });

    it("show the decision path every change to a grant or a certificate, made here or by another connection", async () => {
      // On SQLite the decision path keeps grants and certificates between batches (the decision
      // cache); whatever changes them, on this connection or another, must be seen by the next batch.
      const other = openStore(db.url, db.options);
      try {
        const g = grant(a.id);
        await db.store.insertGrant(g);
        const read = () =>
          db.store.batchedTransaction(async (tx) => ({
            status: (await tx.grantChain(g.id)).map((x) => x.status),
            certificate: (await tx.validCertificate(a.id, "staging"))?.id ?? null,
          }));
        expect(await read()).toEqual({ status: ["active"], certificate: null });
        expect(await read()).toEqual({ status: ["active"], certificate: null });
        // Another connection revokes the grant and certifies the agent.
        await other.revokeGrants([g.id], { at: T0 + 1, by: "admin", reason: null });
        const c = certificate(a.id, { environment: "staging" });
        await other.insertCertificate(c);
        expect(await read()).toEqual({ status: ["revoked"], certificate: c.id });
        // This connection revokes the certificate outside the decision path.
        await db.store.revokeCertificate(c.id, { at: T0 + 2, by: "admin", reason: null });
        expect(await read()).toEqual({ status: ["revoked"], certificate: null });
        // A child delegated meanwhile has the revoked parent in its chain.
        const child = grant(a.id, { root_id: g.id, parent_id: g.id, depth: 1 });
        await other.insertGrant(child);
        expect(await db.store.batchedTransaction(async (tx) => (await tx.grantChain(child.id)).map((x) => [x.id, x.status]))).toEqual([
          [g.id, "revoked"],
          [child.id, "active"],
        ]);
      } finally {
        await other.close();
      }
    });

    it("read a held grant's tree at once: chain with usage, certificate and head; nothing of a grant the agent does not hold", async () => {
      const root = grant(a.id);
      const child = grant(a.id, { root_id: root.id, parent_id: root.id, depth: 1 });
      for (const g of [root, child]) await db.store.insertGrant(g);
      const c = certificate(a.id, { environment: "held-tree" });
      await db.store.insertCertificate(c);
      const sealed = await db.store.transaction(async (tx) => {
        // What the decision path seals with its use and hold, so that the ledger reconciles with the counts.
        const body = {
          counted: true,
          chain: [root.id, child.id],
          holds: [{ grant_id: child.id, amount_minor: 40, currency: null, expires_at: T0 + HOUR }],
        };
        const row = await sealRecord(tx.decisionPath(), {
          id: id("led"),
          tree_id: root.id,
          kind: "decision",
          grant_id: child.id,
          agent_id: a.id,
          outcome: "allow",
          created_at: T0,
          body,
        });
        await tx.decisionPath().countUses([root.id, child.id]);
        await tx.decisionPath().insertCharge({
          id: id("chg"),
          ledger_id: row.id,
          grant_id: child.id,
          amount_minor: 40,
          expires_at: T0 + HOUR,
          settled_minor: null,
          settled_at: null,
          released_at: null,
          settlement_ledger_id: null,
        });
        return row;
      });
      const read = (agentId: string, now: number) => db.store.batchedTransaction((tx) => tx.heldTree(child.id, agentId, "held-tree", now));
      const held = await read(a.id, T0 + 1);
      expect(held.chain).toEqual([root, child]);
      expect(Object.fromEntries(held.usage)).toEqual({
        [root.id]: { uses: 1, held_minor: 0, settled_minor: 0 },
        [child.id]: { uses: 1, held_minor: 40, settled_minor: 0 },
      });
      expect(held.certificate?.id).toBe(c.id);
      expect(held.head).toEqual({ seq: sealed.seq, hash: sealed.hash });
      // The hold stops counting at its expiry (INVARIANT live-holds).
      expect((await read(a.id, T0 + HOUR)).usage.get(child.id)).toEqual({ uses: 1, held_minor: 0, settled_minor: 0 });
      const stranger = (await db.store.createAgentIfAbsent(agent("held-tree-stranger"))).agent;
      expect(await read(stranger.id, T0 + 1)).toEqual({ chain: [], usage: new Map(), certificate: undefined, head: undefined });
    });

    it("chain each sealed record to the last one, whoever appended it: a batch, a plain transaction, another connection, or a rolled-back try", async () => {
      // On SQLite a batch keeps the tree's ledger head it appended last (the decision cache).
      const other = openStore(db.url, db.options);
      try {
        const g = grant(a.id);
        await db.store.insertGrant(g);
        let n = 0;
        const seal = (store: typeof db.store) =>
          sealRecord(store.decisionPath(), {
            id: id("led"),
            tree_id: g.id,
            kind: "decision",
            grant_id: g.id,
            agent_id: a.id,
            outcome: "allow",
            created_at: T0 + n++,
            // A decision as the verifier's decoder reads one (decision 1821), numbered by its tool.
            body: {
              request: { grant_id: g.id, tool: `tool.n${n}` },
              would_outcome: null,
              mode: "enforce",
              decided_by: null,
              reason_code: "decision.allow",
              reason: "every gate passed",
              gates: [],
              residual: null,
              approver: null,
              approval_id: null,
              counted: true,
              chain: [g.id],
              holds: [],
            },
          });
        const seqs: number[] = [];
        seqs.push((await db.store.batchedTransaction(seal)).seq);
        seqs.push((await db.store.batchedTransaction(seal)).seq);
        seqs.push((await db.store.transaction(seal)).seq);
        seqs.push((await db.store.batchedTransaction(seal)).seq);
        seqs.push((await other.transaction(seal)).seq);
        seqs.push((await db.store.batchedTransaction(seal)).seq);
        // Two in one batch: the first seals and then fails (its savepoint is rolled back), the second stands.
        const failing = db.store.batchedTransaction(async (tx) => {
          await seal(tx);
          throw new Error("refused after sealing");
        });
        const standing = db.store.batchedTransaction(seal);
        await expect(failing).rejects.toThrow("refused after sealing");
        seqs.push((await standing).seq);
        seqs.push((await db.store.batchedTransaction(seal)).seq);
        expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
        // This tree's chain: the other tests of the contract seal records of no kind the decoders read.
        const verified = await checkTreeChain(db.store.decisionPath(), g.id);
        expect(verified.broken, JSON.stringify(verified.broken)).toBeNull();
        expect(verified.records).toBe(8);
      } finally {
        await other.close();
      }
    });

    it("undo only the failing transaction of a batch, and run each transaction once when none fails", async () => {
      const runs = new Map<string, number>();
      const write = (k: KeyRecord, fail = false) =>
        db.store.batchedTransaction(async (tx) => {
          runs.set(k.id, (runs.get(k.id) ?? 0) + 1);
          await tx.insertKey(k);
          if (fail) throw new Error(`refused after writing ${k.id}`);
          return k.id;
        });
      // Submitted in one turn: on SQLite they share one commit.
      const calm = [key(), key(), key()];
      expect(await Promise.all(calm.map((k) => write(k)))).toEqual(calm.map((k) => k.id));
      expect(calm.map((k) => runs.get(k.id))).toEqual([1, 1, 1]);
      const [first, failing, last] = [key(), key(), key()];
      const outcomes = await Promise.allSettled([write(first), write(failing, true), write(last)]);
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect(String((outcomes[1] as PromiseRejectedResult).reason)).toContain(`refused after writing ${failing.id}`);
      for (const k of [...calm, first, last]) expect((await db.store.getKey(k.id))?.id).toBe(k.id);
      expect(await db.store.getKey(failing.id)).toBeUndefined();
    });

    it("refuse an idempotency key reused with another request without running its batch again", async () => {
      const { authorizeAction } = await import("../../server/src/services/decisions/index.js");
      const { Refusal } = await import("../../server/src/services/common/index.js");
      const k = key({ roles: ["agent"] });
      await db.store.insertKey(k);
      const claim = {
        callerKeyId: k.id,
        key: `reused-${recordId("k")}`,
        method: "POST",
        path: "/v1/authorize",
        requestHash: "first-request",
      };
      await db.store.decisionPath().putIdempotency(
        {
          caller_key_id: claim.callerKeyId,
          idempotency_key: claim.key,
          method: claim.method,
          path: claim.path,
          request_hash: claim.requestHash,
          status: 200,
          response: "application/json\n{}",
          created_at: T0,
        },
        0,
      );
      const caller = { keyId: k.id, identity: k.identity, kind: k.kind, email: k.email, roles: k.roles, agentId: null };
      const signer = new Signer(randomBytes(32));
      await signer.load(db.store, T0);
      const ctx = {
        store: db.store,
        environment: "development",
        autoApprovalCeilingMinor: 0,
        now: () => T0,
        signer,
        cursorKey: randomBytes(32),
      };
      let runs = 0;
      const neighbour = key();
      // Submitted in one turn, the neighbour first: on SQLite they share one batch.
      const [other, reused] = await Promise.allSettled([
        db.store.batchedTransaction(async (tx) => {
          runs += 1;
          await tx.insertKey(neighbour);
        }),
        authorizeAction(ctx, caller, { grant_id: "grt_none", tool: "payments.send" }, { ...claim, requestHash: "another-request" }),
      ]);
      // The reused key is answered its refusal, a value: nothing was thrown inside the batch.
      expect(reused.status === "fulfilled" && reused.value instanceof Refusal && reused.value.code).toBe("idempotency_key_reused");
      expect(other.status).toBe("fulfilled");
      expect(runs).toBe(1);
      expect((await db.store.getKey(neighbour.id))?.id).toBe(neighbour.id);
    });

    it("answer each breaker signal's key as the row it wrote, in order", async () => {
      const g = grant(a.id);
      await db.store.insertGrant(g);
      const paths = db.store.breakerPath();
      const signals = [0, 2, 0];
      const keys: number[] = [];
      for (const [i, signal] of signals.entries()) {
        const led = id("led");
        await db.raw(
          "INSERT INTO ledger (id, tree_id, seq, kind, grant_id, agent_id, outcome, record, prev_hash, hash, created_at) VALUES (?, ?, ?, 'decision', ?, ?, 'allow', '{}', '', 'h', ?)",
          [led, g.root_id, i + 1, g.id, a.id, T0],
        );
        keys.push(await paths.insertSignal(led, a.id, T0 + 10, signal));
      }
      expect(keys[0]! < keys[1]! && keys[1]! < keys[2]!).toBe(true);
      expect(await paths.signalsFrom(a.id, [T0 + 10, keys[0]!], 10)).toEqual(
        signals.map((signal, i) => ({ at: T0 + 10, seq: keys[i], signal })),
      );
    });

    it("approve only a pending grant, once", async () => {
      const g = grant(a.id, { status: "pending_approval", approval_required: true });
      await db.store.insertGrant(g);
      expect((await db.store.listGrantsByStatus("pending_approval", { limit: 1000 })).map((x) => x.id)).toContain(g.id);
      expect(await db.store.approveGrant(g.id, "boss@example.com", T0 + 1)).toBe(true);
      expect(await db.store.approveGrant(g.id, "other@example.com", T0 + 2)).toBe(false);
      expect(await db.store.getGrant(g.id)).toMatchObject({ status: "active", approved_by: "boss@example.com", approved_at: T0 + 1 });
    });

    it("change the enforcement mode only from the expected one", async () => {
      const g = grant(a.id, { enforcement_mode: "observe" });
      await db.store.insertGrant(g);
      expect(await db.store.setEnforcementMode(g.id, "enforce", "observe")).toBe(false);
      expect(await db.store.setEnforcementMode(g.id, "observe", "enforce")).toBe(true);
      expect((await db.store.getGrant(g.id))!.enforcement_mode).toBe("enforce");
    });

    it("keep an append-only history", async () => {
      const g = grant(a.id);
      await db.store.insertGrant(g);
      await db.store.appendGrantEvent({ id: id("evt"), grant_id: g.id, kind: "issued", actor: "x", at: T0, detail: { a: 1 } });
      expect(await db.store.listGrantEvents(g.id)).toEqual([expect.objectContaining({ kind: "issued", detail: { a: 1 } })]);
    });

    it("compute usage from live holds only: an expired hold stops counting at once", async () => {
      const g = grant(a.id);
      await db.store.insertGrant(g);
      const ledger =
        "INSERT INTO ledger (id, tree_id, seq, kind, grant_id, agent_id, outcome, record, prev_hash, hash, created_at) VALUES (?, ?, ?, 'decision', ?, ?, 'allow', '{}', '', 'h', ?)";
      // Amount, expiry, settled amount: a use without an amount places no hold at all.
      const decisions: Array<[number, number, number | null]> = [
        [100, T0 + HOUR, null], // live hold
        [200, T0 + 10, null], // expired hold
        [300, T0 + HOUR, 250], // settled 250 of 300
        [0, T0 + HOUR, null], // a use without an amount
      ];
      const path = db.store.decisionPath();
      for (const [i, [amount, expires, settled]] of decisions.entries()) {
        const led = id("led");
        await db.raw(ledger, [led, g.root_id, i + 1, g.id, a.id, T0]);
        await path.countUses([g.id]);
        if (amount === 0) continue;
        await path.insertCharge({
          id: id("chg"),
          ledger_id: led,
          grant_id: g.id,
          amount_minor: amount,
          expires_at: expires,
          settled_minor: null,
          settled_at: null,
          released_at: null,
          settlement_ledger_id: null,
        });
        if (settled !== null) expect(await path.settleCharges(led, settled, T0 + 5, id("led"))).toBe(1);
      }
      const usage = (await db.store.usage([g.id, "grt_none"], T0 + 100)).get(g.id);
      expect(usage).toEqual({ uses: 4, held_minor: 100, settled_minor: 250 });
      expect((await db.store.usage(["grt_none"], T0)).get("grt_none")).toEqual({ uses: 0, held_minor: 0, settled_minor: 0 });
      // Only holds are charges: the use without an amount wrote none.
      const [counted] = (await db.raw("SELECT COUNT(*) AS n FROM charges WHERE grant_id = ?", [g.id])) as { n: unknown }[];
      expect(Number(counted!.n)).toBe(3);
    });

    it("show the decision path exact usage from batch to batch: its own uses and holds, an expiry at once, and another connection's settlement", async () => {
      // On SQLite a batch keeps the usage it read and updates it with its own writes (the decision cache).
      const other = openStore(db.url, db.options);
      try {
        const g = grant(a.id);
        await db.store.insertGrant(g);
        const usageAt = (now: number) =>
          db.store.batchedTransaction(async (tx) => (await tx.decisionPath().liveUsage([g.id], now)).get(g.id));
        let seq = 0;
        /** A decision sealed in a batch: one use, and a hold when it has an amount. */
        const decide = (amount: number, expiresAt: number) =>
          db.store.batchedTransaction(async (tx) => {
            const path = tx.decisionPath();
            await path.liveUsage([g.id], T0);
            const led = id("led");
            seq += 1;
            await path.appendLedger({
              id: led,
              tree_id: g.root_id,
              seq,
              kind: "decision",
              grant_id: g.id,
              agent_id: a.id,
              outcome: "allow",
              record: "{}",
              prev_hash: "",
              hash: `h${seq}`,
              created_at: T0,
            });
            await path.countUses([g.id]);
            if (amount > 0) {
              await path.insertCharge({
                id: id("chg"),
                ledger_id: led,
                grant_id: g.id,
                amount_minor: amount,
                expires_at: expiresAt,
                settled_minor: null,
                settled_at: null,
                released_at: null,
                settlement_ledger_id: null,
              });
            }
            return led;
          });
        expect(await usageAt(T0)).toEqual({ uses: 0, held_minor: 0, settled_minor: 0 });
        await decide(0, 0);
        expect(await usageAt(T0 + 1)).toEqual({ uses: 1, held_minor: 0, settled_minor: 0 });
        const held = await decide(300, T0 + 50);
        await decide(100, T0 + 80);
        expect(await usageAt(T0 + 2)).toEqual({ uses: 3, held_minor: 400, settled_minor: 0 });
        // The first hold stops counting at its expiry, the second at its own.
        expect(await usageAt(T0 + 49)).toEqual({ uses: 3, held_minor: 400, settled_minor: 0 });
        expect(await usageAt(T0 + 50)).toEqual({ uses: 3, held_minor: 100, settled_minor: 0 });
        expect(await usageAt(T0 + 80)).toEqual({ uses: 3, held_minor: 0, settled_minor: 0 });
        // A clock that goes back reads again: both holds were live then.
        expect(await usageAt(T0 + 49)).toEqual({ uses: 3, held_minor: 400, settled_minor: 0 });
        // A settlement by another connection is seen by the next batch.
        const live = await decide(500, T0 + HOUR);
        expect(await usageAt(T0 + 81)).toEqual({ uses: 4, held_minor: 500, settled_minor: 0 });
        expect(await other.decisionPath().settleCharges(live, 200, T0 + 82, id("led"))).toBe(1);
        expect(await usageAt(T0 + 83)).toEqual({ uses: 4, held_minor: 0, settled_minor: 200 });
        // And one by this connection, outside a batch.
        expect(await db.store.decisionPath().settleCharges(held, 0, T0 + 84, id("led"))).toBe(1);
        await decide(700, T0 + HOUR);
        expect(await usageAt(T0 + 85)).toEqual({ uses: 5, held_minor: 700, settled_minor: 200 });
        expect(await db.store.usage([g.id], T0 + 85)).toEqual(new Map([[g.id, { uses: 5, held_minor: 700, settled_minor: 200 }]]));
      } finally {
        await other.close();
      }
    });
  });

  describe("integrity", () => {
    it("rolls a failed transaction back whole", async () => {
      const before = await db.store.countRows();
      await expect(
        db.store.transaction(async (tx) => {
          await tx.createAgentIfAbsent(agent("rolled-back"));
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect(await db.store.countRows()).toEqual(before);
    });

    it("refuses to delete records and to change sealed ones, in the database itself", async () => {
      const { agent: a } = await db.store.createAgentIfAbsent(agent("kept-agent"));
      const g = grant(a.id);
      await db.store.insertGrant(g);
      await expect(db.raw("DELETE FROM grants WHERE id = ?", [g.id])).rejects.toThrow(/never deleted/);
      await expect(db.raw("DELETE FROM agents WHERE id = ?", [a.id])).rejects.toThrow(/never deleted/);
      await db.store.appendGrantEvent({ id: id("evt"), grant_id: g.id, kind: "issued", actor: "x", at: T0, detail: {} });
      await expect(db.raw("UPDATE grant_events SET actor = 'mallory' WHERE grant_id = ?", [g.id])).rejects.toThrow(/sealed/);
      await db.raw(
        "INSERT INTO ledger (id, tree_id, seq, kind, grant_id, agent_id, outcome, record, prev_hash, hash, created_at) VALUES (?, ?, 1, 'decision', ?, ?, 'deny', '{}', '', 'h', ?)",
        [id("led"), "tree-x", g.id, a.id, T0],
      );
      await expect(db.raw("UPDATE ledger SET outcome = 'allow' WHERE tree_id = 'tree-x'")).rejects.toThrow(/sealed/);
      await expect(db.raw("DELETE FROM ledger WHERE tree_id = 'tree-x'")).rejects.toThrow(/never deleted/);
      const led = ((await db.raw("SELECT id FROM ledger WHERE tree_id = 'tree-x'")) as { id: string }[])[0]!.id;
      await db.raw(
        "INSERT INTO decision_approvals (id, ledger_id, grant_id, tool, amount_ceiling_minor, currency, approver, approved_at, expires_at) VALUES (?, ?, ?, 'payments.refund', 100, 'EUR', 'cfo@example.com', ?, ?)",
        [id("apv"), led, g.id, T0, T0 + HOUR],
      );
      await expect(db.raw("DELETE FROM decision_approvals WHERE ledger_id = ?", [led])).rejects.toThrow(/never deleted/);
      await db.raw("INSERT INTO idempotency_keys VALUES ('key_x', 'k1', 'POST', '/v1/authorize', 'h', 200, '{}', ?)", [T0]);
      await db.raw("DELETE FROM idempotency_keys WHERE created_at <= ?", [T0]);
    });

    it("serialises concurrent transactions", async () => {
      const { agent: a } = await db.store.createAgentIfAbsent(agent("race-agent"));
      const g = grant(a.id, { status: "pending_approval", approval_required: true });
      await db.store.insertGrant(g);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          db.store.transaction(async (tx) => {
            await tx.lockGrant(g.id);
            return tx.approveGrant(g.id, `approver${i}@example.com`, T0 + i);
          }),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });
  });
}
