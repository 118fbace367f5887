// Checkpoints and receipts against a real server on SQLite and PostgreSQL: signed tree heads over
// the sealed records, consistency proofs, receipts verified offline with every member tampered
// with, and a witness's check of the database that reports each tamper with its position.

import { recordLeaf, treeHash, verifyCheckpoint, verifyConsistency, verifyReceipt, type CheckpointKey } from "@agent-authority/sdk";
import type { DecisionReceipt, KeyCreated, SigningKeySet } from "@agent-authority/sdk";
import {
  CheckpointRefused,
  logPending,
  openStore,
  startLedgerLogger,
  treeHead,
  verifyCheckpointAgainst,
  verifyLedger,
} from "@agent-authority/server";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { certifiedAgent, issueGrant, startDecisionServer, type DecisionServer } from "./decisions-http.js";
import { ADMIN_KEY, CERTIFICATION } from "./http-harness.js";
import { forEachStore, type StoreTarget } from "./targets.js";
import { authorityAsync, buildCli } from "../cli/run-cli.js";

/** A problem answer: its status and stable code. */
function expectProblem(reply: { status: number; body: unknown }, status: number, code: string): void {
  const body = typeof reply.body === "object" && reply.body !== null ? (reply.body as Record<string, unknown>) : {};
  expect({ status: reply.status, code: body["code"] }, JSON.stringify(reply.body)).toEqual({ status, code });
}

const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

/** Every path to a leaf value of a JSON value, and every object and array. */
function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = at.length === 0 ? [] : [at];
  if (Array.isArray(value)) for (const [i, v] of value.entries()) out.push(...paths(v, [...at, i]));
  else if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, k]));
  return out;
}

/** A copy of `value` with the member at `path` changed: a string altered, a number moved, an array or object grown. */
function tampered(value: unknown, path: (string | number)[]): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let parent = copy;
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  const old = parent[last];
  if (typeof old === "string") {
    // A hex or base64 character swapped for another of the same alphabet, so that only the meaning changes.
    const i = Math.floor(old.length / 2);
    const c = old[i] ?? "a";
    const swapped = c === "0" ? "1" : c === "a" ? "b" : c === "A" ? "B" : /[0-9a-zA-Z]/.test(c) ? (c === "b" ? "c" : "a") : "0";
    parent[last] = old.length === 0 ? "x" : old.slice(0, i) + swapped + old.slice(i + 1);
  } else if (typeof old === "number") parent[last] = old + 1;
  else if (Array.isArray(old)) parent[last] = old.length > 0 ? old.slice(1) : ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="];
  else if (old !== null && typeof old === "object") (old as Record<string, unknown>)["extra"] = 1;
  else parent[last] = "x";
  return copy;
}

function checkpointSuite(target: StoreTarget): void {
  let s: DecisionServer;
  let agent: { id: string; key: string };
  let auditorKey: string;
  let keys: readonly CheckpointKey[];
  const pay = (grantId: string, amount: number, extra: Record<string, unknown> = {}) => ({
    grant_id: grantId,
    tool: "payments.send",
    amount_minor: amount,
    currency: "EUR",
    attestation: ATTESTATION,
    ...extra,
  });
  const checkpoint = async (): Promise<string> => {
    const reply = await s.call("GET", "/ledger/checkpoint", auditorKey);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    return reply.text;
  };
  /**
   * Runs statements past the store as an intruder with database access would: foreign keys and
   * triggers off for the session (`PRAGMA foreign_keys`, `session_replication_role`), so that no
   * guard of the schema stops them.
   */
  const intrude = async (statements: readonly string[]): Promise<void> => {
    if (s.db.schema === undefined) {
      const db = new Database(s.db.url);
      try {
        db.pragma("foreign_keys = OFF");
        // Triggers are dropped and made again around the statements: SQLite has no switch for them.
        const guards = db
          .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ('ledger', 'ledger_leaves')")
          .all() as { name: string; sql: string }[];
        db.transaction(() => {
          for (const guard of guards) db.exec(`DROP TRIGGER ${guard.name}`);
          for (const sql of statements) db.exec(sql);
          for (const guard of guards) db.exec(guard.sql);
        })();
      } finally {
        db.close();
      }
      return;
    }
    const client = new pg.Client({ connectionString: s.db.url, options: `-c search_path=${s.db.schema}` });
    await client.connect();
    try {
      await client.query("SET session_replication_role = replica");
      for (const sql of statements) await client.query(sql);
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    s = await startDecisionServer(target);
    agent = await certifiedAgent(s, "witnessed");
    auditorKey = (
      await s.call<KeyCreated>("POST", "/keys", ADMIN_KEY, { identity: "audit@example.com", kind: "human", roles: ["auditor"] })
    ).body.key;
    keys = (await s.call<SigningKeySet>("GET", "/signing-keys", ADMIN_KEY)).body.keys;
  });
  afterAll(async () => {
    await s?.close();
  });

  it("signs a tree head of every sealed record, for auditors and admins only, that the JWKS verifies", async () => {
    const grant = await issueGrant(s, agent.id);
    for (const amount of [100, 200])
      expect((await s.call("POST", "/authorize", agent.key, pay(grant.id, amount))).body.outcome).toBe("allow");
    const note = await checkpoint();
    const checked = verifyCheckpoint(note, keys);
    expect(checked.ok, JSON.stringify(checked)).toBe(true);
    if (!checked.ok) return;
    expect(checked.origin).toBe(`agent-authority/${keys[0]!.kid}`);
    expect(checked.kid).toBe(keys.find((k) => (k as { status?: string }).status === "active")!.kid);
    // The root is the tree of every sealed record's leaf, in the log's order.
    const rows = (await s.db.raw(
      "SELECT g.position AS position, l.hash AS hash FROM ledger_leaves g JOIN ledger l ON l.id = g.ledger_id ORDER BY g.position",
    )) as { position: number; hash: string }[];
    const count = (await s.db.raw("SELECT COUNT(*) AS n FROM ledger")) as { n: number | string }[];
    expect(checked.size).toBe(Number(count[0]!.n));
    expect(rows.map((r) => Number(r.position))).toEqual([...Array(checked.size).keys()]);
    expect(treeHash(rows.map((r) => recordLeaf(r.hash))).equals(checked.root)).toBe(true);
    // Roles: as GET /v1/ledger/verify.
    expect((await s.call("GET", "/ledger/checkpoint", ADMIN_KEY)).status).toBe(200);
    expect((await s.call("GET", "/ledger/checkpoint", agent.key)).status).toBe(403);
  });

  it("logs what was sealed from a timer too, so that a checkpoint request finds it done", async () => {
    const grant = await issueGrant(s, agent.id);
    for (let i = 0; i < 3; i += 1) await s.call("POST", "/authorize", agent.key, pay(grant.id, 1));
    // What waits is what the ledger holds beyond the log's leaves: nothing else is written for it (decision 1941).
    const pending = async () =>
      Number(
        (
          (await s.db.raw(
            "SELECT COUNT(*) AS n FROM ledger l WHERE NOT EXISTS (SELECT 1 FROM ledger_leaves v WHERE v.ledger_id = l.id)",
          )) as { n: number | string }[]
        )[0]!.n,
      );
    expect(await pending()).toBeGreaterThanOrEqual(3);
    const logs: string[] = [];
    const timer = startLedgerLogger(s.db.store, { log: (level, msg) => logs.push(`${level} ${msg}`) }, 20);
    try {
      for (let waited = 0; waited < 5_000 && (await pending()) > 0; waited += 50) await new Promise((r) => setTimeout(r, 50));
    } finally {
      await timer.stop();
    }
    expect(await pending()).toBe(0);
    expect(logs.some((line) => line.startsWith("debug sealed records logged"))).toBe(true);
    const count = Number(((await s.db.raw("SELECT COUNT(*) AS n FROM ledger")) as { n: number | string }[])[0]!.n);
    expect((await treeHead(s.db.store)).size).toBe(count);
  });

  it("proves each checkpoint consistent with every later one, and refuses sizes it cannot prove", async () => {
    const grant = await issueGrant(s, agent.id, { budget_count: 40 });
    const heads: { size: number; root: Buffer }[] = [];
    for (let round = 0; round < 4; round += 1) {
      for (let i = 0; i <= round * 3; i += 1)
        await s.call("POST", "/authorize", agent.key, pay(grant.id, 1, i % 2 === 0 ? {} : { tool: "mail.send" }));
      const checked = verifyCheckpoint(await checkpoint(), keys);
      if (!checked.ok) throw new Error(checked.message);
      heads.push({ size: checked.size, root: checked.root });
    }
    for (const [i, a] of heads.entries()) {
      for (const b of heads.slice(i)) {
        const reply = await s.call("GET", `/ledger/consistency?first=${a.size}&second=${b.size}`, auditorKey);
        expect(reply.status).toBe(200);
        const proof = (reply.body.proof as string[]).map((p) => Buffer.from(p, "base64"));
        expect(verifyConsistency(a.size, b.size, a.root, b.root, proof)).toBe(true);
        if (a.size < b.size) expect(verifyConsistency(a.size, b.size, b.root, a.root, proof)).toBe(false);
      }
    }
    const last = heads[heads.length - 1]!.size;
    for (const query of [
      "",
      "?first=1",
      `?first=2&second=1`,
      `?first=0&second=${last + 1_000}`,
      "?first=-1&second=2",
      "?first=01&second=2",
      "?first=x&second=2",
    ]) {
      expectProblem(await s.call("GET", `/ledger/consistency${query}`, auditorKey), 400, "invalid_query");
    }
  });

  it("answers any first and second with a proof or a 400, never a 5xx, and any id with a receipt or a 404", async () => {
    const size = Number((await checkpoint()).split("\n")[1]);
    const sizeText = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.integer({ min: -5, max: size + 5 }).map(String),
      fc.constant("9".repeat(30)),
    );
    await fc.assert(
      fc.asyncProperty(sizeText, sizeText, async (first, second) => {
        const reply = await s.call(
          "GET",
          `/ledger/consistency?first=${encodeURIComponent(first)}&second=${encodeURIComponent(second)}`,
          auditorKey,
        );
        const valid =
          /^(0|[1-9]\d*)$/.test(first) && /^(0|[1-9]\d*)$/.test(second) && Number(first) <= Number(second) && Number(second) <= size;
        expect(reply.status, `${first} ${second}: ${reply.text}`).toBe(valid ? 200 : 400);
      }),
      { numRuns: 60 },
    );
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 40 }), async (id) => {
        const reply = await s.call("GET", `/decisions/${encodeURIComponent(id)}/receipt`, auditorKey);
        expect([400, 404], `${id}: ${reply.text}`).toContain(reply.status);
      }),
      { numRuns: 40 },
    );
  });

  it("answers a receipt that verifies offline, and fails on every member tampered with", async () => {
    const grant = await issueGrant(s, agent.id);
    const allow = await s.call("POST", "/authorize", agent.key, pay(grant.id, 500));
    const ledgerId = allow.body.ledger_id as string;
    expect((await s.call("POST", `/decisions/${ledgerId}/settle`, agent.key, { amount_minor: 300 })).status).toBe(200);
    const reply = await s.call<DecisionReceipt>("GET", `/decisions/${ledgerId}/receipt`, agent.key);
    expect(reply.status, reply.text).toBe(200);
    const receipt = reply.body;
    const verified = verifyReceipt(receipt, keys);
    expect(verified, JSON.stringify(verified)).toMatchObject({ ok: true, ledger_id: ledgerId, kid: receipt.kid });
    expect(receipt.settlements).toHaveLength(1);
    expect(JSON.parse(receipt.settlements[0].record)).toMatchObject({
      kind: "settlement",
      decision_ledger_id: ledgerId,
      amount_minor: 300,
    });
    const all = paths(receipt);
    // Every member at every depth, and the receipt with a member added.
    expect(all.length).toBeGreaterThan(20);
    for (const path of all) {
      const result = verifyReceipt(tampered(receipt, path), keys);
      expect(result.ok, `tampering ${path.join(".")} passed`).toBe(false);
    }
    expect(verifyReceipt({ ...receipt, extra: 1 }, keys).ok).toBe(false);
    // A settlement left out, or moved into the receipt of another decision.
    expect(verifyReceipt({ ...receipt, settlements: [] }, keys)).toMatchObject({ ok: false, field: "signature.statement" });
    // Keys the verifier does not hold.
    expect(verifyReceipt(receipt, [])).toMatchObject({ ok: false, field: "checkpoint" });
    // A refusal has a receipt too; another agent's decision is not found; an auditor reads any.
    const deny = await s.call("POST", "/authorize", agent.key, pay(grant.id, 1, { tool: "mail.send" }));
    const denied = await s.call("GET", `/decisions/${deny.body.ledger_id}/receipt`, auditorKey);
    expect(verifyReceipt(denied.body, keys)).toMatchObject({ ok: true, record: { outcome: "deny" }, settlements: [] });
    const stranger = await certifiedAgent(s, "stranger");
    expectProblem(await s.call("GET", `/decisions/${ledgerId}/receipt`, stranger.key), 404, "decision_not_found");
  });

  describe("a witness's check of the database against a saved checkpoint", () => {
    let note: string;
    let size: number;
    /** Ledger ids by position, and which are refusals. */
    let order: { id: string; outcome: string | null }[];
    beforeAll(async () => {
      const grant = await issueGrant(s, agent.id, { budget_count: 3 });
      // Decisions without an amount hold nothing: no charge row refers to them, so they can be deleted alone.
      const free = { amount_minor: undefined, currency: undefined };
      for (const extra of [{}, { tool: "mail.send" }, {}, {}, { tool: "mail.send" }, {}])
        await s.call("POST", "/authorize", agent.key, pay(grant.id, 10, { ...free, ...extra }));
      note = await checkpoint();
      const checked = verifyCheckpoint(note, keys);
      if (!checked.ok) throw new Error(checked.message);
      size = checked.size;
      order = (await s.db.raw(
        "SELECT l.id AS id, l.outcome AS outcome FROM ledger_leaves g JOIN ledger l ON l.id = g.ledger_id ORDER BY g.position",
      )) as { id: string; outcome: string | null }[];
      // Records sealed after the checkpoint are beyond it: they change nothing.
      await s.call("POST", "/authorize", agent.key, pay(grant.id, 10));
      await checkpoint();
    });
    const check = () => verifyCheckpointAgainst(s.db.store, note, keys);
    /** Runs `change` on the database, checks, and undoes it with `undo`. */
    async function tamper(change: string[], undo: string[]) {
      await intrude(change);
      try {
        return await check();
      } finally {
        await intrude(undo);
      }
    }
    const rowOf = async (table: string, where: string, id: string | number): Promise<Record<string, unknown>> =>
      ((await s.db.raw(`SELECT * FROM ${table} WHERE ${where} = ?`, [id])) as Record<string, unknown>[])[0]!;
    const insertOf = (table: string, row: Record<string, unknown>): string => {
      const columns = Object.keys(row);
      // Numbers as they are; text quoted (both engines convert a quoted number into an integer column).
      const values = columns.map((c) =>
        row[c] === null
          ? "NULL"
          : typeof row[c] === "number" || typeof row[c] === "bigint"
            ? String(row[c])
            : `'${String(row[c]).replace(/'/g, "''")}'`,
      );
      return `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${values.join(", ")})`;
    };

    it("verifies the untouched database, and refuses a checkpoint tampered with or signed by a key it does not hold", async () => {
      expect(await check()).toMatchObject({ ok: true, size, broken: null });
      const lines = note.split("\n");
      const forged = [lines[0], String(size - 1), ...lines.slice(2)].join("\n");
      await expect(verifyCheckpointAgainst(s.db.store, forged, keys)).rejects.toBeInstanceOf(CheckpointRefused);
      await expect(verifyCheckpointAgainst(s.db.store, note, [])).rejects.toThrow(/no signature of the checkpoint is by a key/);
      // Without keys given it trusts the database's own public keys.
      expect(await verifyCheckpointAgainst(s.db.store, note)).toMatchObject({ ok: true });
    });

    it("reports the newest record deleted at its position, with or without its log row", async () => {
      const last = order[size - 1]!.id;
      const ledgerRow = await rowOf("ledger", "id", last);
      const leafRow = await rowOf("ledger_leaves", "ledger_id", last);
      const deleted = await tamper([`DELETE FROM ledger WHERE id = '${last}'`], [insertOf("ledger", ledgerRow)]);
      expect(deleted).toMatchObject({
        ok: false,
        broken: { position: size - 1, ledger_id: last, problem: expect.stringContaining("missing from the ledger") },
      });
      const cut = await tamper(
        [`DELETE FROM ledger WHERE id = '${last}'`, `DELETE FROM ledger_leaves WHERE ledger_id = '${last}'`],
        [insertOf("ledger", ledgerRow), insertOf("ledger_leaves", leafRow)],
      );
      expect(cut.ok).toBe(false);
      expect(cut.broken).toMatchObject({ position: size - 1 });
      expect(await check()).toMatchObject({ ok: true });
    });

    it("reports a refusal deleted from the middle at its position, even when the log is renumbered over the gap", async () => {
      const position = order.findIndex((r, i) => i > 0 && i < size - 2 && r.outcome === "deny");
      expect(position).toBeGreaterThan(0);
      const id = order[position]!.id;
      const ledgerRow = await rowOf("ledger", "id", id);
      const leafRow = await rowOf("ledger_leaves", "ledger_id", id);
      const deleted = await tamper([`DELETE FROM ledger WHERE id = '${id}'`], [insertOf("ledger", ledgerRow)]);
      expect(deleted).toMatchObject({ ok: false, broken: { position, ledger_id: id } });
      // The thorough intruder: the record and its leaf deleted, the later leaves moved down one.
      const later = (await s.db.raw("SELECT * FROM ledger_leaves WHERE position > ? ORDER BY position", [position])) as Record<
        string,
        unknown
      >[];
      const renumber = later.map(
        (row) => `UPDATE ledger_leaves SET position = ${Number(row["position"]) - 1} WHERE ledger_id = '${String(row["ledger_id"])}'`,
      );
      const restore = [...later]
        .reverse()
        .map((row) => `UPDATE ledger_leaves SET position = ${Number(row["position"])} WHERE ledger_id = '${String(row["ledger_id"])}'`);
      const renumbered = await tamper(
        [`DELETE FROM ledger WHERE id = '${id}'`, `DELETE FROM ledger_leaves WHERE ledger_id = '${id}'`, ...renumber],
        [...restore, insertOf("ledger", ledgerRow), insertOf("ledger_leaves", leafRow)],
      );
      expect(renumbered.ok, JSON.stringify({ renumbered, position, size })).toBe(false);
      expect(renumbered.broken!.position).toBeLessThanOrEqual(position);
      expect(renumbered.broken!.through).toBeGreaterThanOrEqual(position);
      expect(renumbered.broken!.through - renumbered.broken!.position).toBeLessThanOrEqual(1);
      expect(await check()).toMatchObject({ ok: true });
    });

    it("reports a rewritten field at its position, also when its hash and leaf were computed again", async () => {
      const position = order.findIndex((r) => r.outcome === "deny");
      const id = order[position]!.id;
      const row = await rowOf("ledger", "id", id);
      const leaf = await rowOf("ledger_leaves", "ledger_id", id);
      const record = String(row["record"]);
      const rewritten = record.replace('"outcome":"deny"', '"outcome":"allow"');
      expect(rewritten).not.toBe(record);
      const quote = (t: string) => `'${t.replace(/'/g, "''")}'`;
      const plain = await tamper(
        [`UPDATE ledger SET record = ${quote(rewritten)} WHERE id = '${id}'`],
        [`UPDATE ledger SET record = ${quote(record)} WHERE id = '${id}'`],
      );
      expect(plain).toMatchObject({ ok: false, broken: { position, ledger_id: id, problem: expect.stringContaining("rewritten") } });
      const { createHash } = await import("node:crypto");
      const hash = createHash("sha256")
        .update(`${String(row["prev_hash"])}\n${rewritten}`)
        .digest("hex");
      const thorough = await tamper(
        [
          `UPDATE ledger SET record = ${quote(rewritten)}, hash = '${hash}' WHERE id = '${id}'`,
          `UPDATE ledger_leaves SET leaf_hash = '${recordLeaf(hash).toString("hex")}' WHERE ledger_id = '${id}'`,
        ],
        [
          `UPDATE ledger SET record = ${quote(record)}, hash = '${String(row["hash"])}' WHERE id = '${id}'`,
          `UPDATE ledger_leaves SET leaf_hash = '${String(leaf["leaf_hash"])}' WHERE ledger_id = '${id}'`,
        ],
      );
      expect(thorough.ok).toBe(false);
      expect(thorough.broken!.position).toBeLessThanOrEqual(position);
      expect(thorough.broken!.through).toBeGreaterThanOrEqual(position);
      expect(await check()).toMatchObject({ ok: true });
    });

    it("reports two records swapped in the order at the first of them", async () => {
      const [a, b] = [1, size - 2];
      const rowA = await rowOf("ledger_leaves", "position", a);
      const rowB = await rowOf("ledger_leaves", "position", b);
      const set = (position: number, row: Record<string, unknown>) =>
        `UPDATE ledger_leaves SET ledger_id = '${String(row["ledger_id"])}', leaf_hash = '${String(row["leaf_hash"])}' WHERE position = ${position}`;
      const park = `UPDATE ledger_leaves SET ledger_id = 'parked' WHERE position = ${a}`;
      // The order alone swapped: each record's logged leaf goes with it.
      const swapped = await tamper([park, set(b, rowA), set(a, rowB)], [park, set(b, rowB), set(a, rowA)]);
      expect(swapped.ok).toBe(false);
      expect(swapped.broken!.position).toBeLessThanOrEqual(a);
      expect(swapped.broken!.through).toBeGreaterThanOrEqual(a);
      // Only the ids swapped: the record at the position is not the one logged there.
      const idsOnly = await tamper(
        [
          park,
          `UPDATE ledger_leaves SET ledger_id = '${String(rowA["ledger_id"])}' WHERE position = ${b}`,
          `UPDATE ledger_leaves SET ledger_id = '${String(rowB["ledger_id"])}' WHERE position = ${a}`,
        ],
        [park, set(b, rowB), set(a, rowA)],
      );
      expect(idsOnly).toMatchObject({ ok: false, broken: { position: a, problem: expect.stringContaining("not the one logged") } });
      expect(await check()).toMatchObject({ ok: true });
    });

    it("finds a chain's newest record, a refusal, deleted even without a checkpoint, once it was logged", async () => {
      const grant = await issueGrant(s, agent.id);
      const refusal = (
        await s.call("POST", "/authorize", agent.key, pay(grant.id, 1, { tool: "mail.send", amount_minor: undefined, currency: undefined }))
      ).body.ledger_id as string;
      await checkpoint();
      const position = Number(
        ((await s.db.raw("SELECT position FROM ledger_leaves WHERE ledger_id = ?", [refusal])) as { position: number | string }[])[0]!
          .position,
      );
      const row = await rowOf("ledger", "id", refusal);
      await intrude([`DELETE FROM ledger WHERE id = '${refusal}'`]);
      try {
        // The chain that is left verifies and the refusal counted nothing: only the log knows.
        expect(await verifyLedger(s.db.store)).toMatchObject({
          ok: false,
          broken: { position, ledger_id: refusal, problem: expect.stringContaining("missing from the ledger") },
        });
      } finally {
        await intrude([insertOf("ledger", row)]);
      }
      expect(await verifyLedger(s.db.store)).toMatchObject({ ok: true });
    });

    it("is what `authority ledger verify --checkpoint` reports, run from outside against this database", async () => {
      buildCli();
      const dir = mkdtempSync(join(tmpdir(), "authority-witness-cli-"));
      try {
        writeFileSync(join(dir, "checkpoint.txt"), note);
        writeFileSync(join(dir, "keys.json"), JSON.stringify({ keys }));
        const env = {
          AUTHORITY_DATA_DIR: "",
          AUTHORITY_DATABASE_URL: s.db.url,
          AUTHORITY_DATABASE_SCHEMA: s.db.schema ?? "",
          AUTHORITY_DATABASE_ENGINE: "",
          AUTHORITY_SERVER: "",
          AUTHORITY_KEY: "",
        };
        const run = () =>
          authorityAsync(["ledger", "verify", "--checkpoint", "checkpoint.txt", "--keys", "keys.json", "--format", "json"], {
            cwd: dir,
            env,
          });
        const clean = await run();
        expect(clean.code, clean.stdout + clean.stderr).toBe(0);
        expect(JSON.parse(clean.stdout).checkpoint).toMatchObject({ ok: true, size });
        const last = order[size - 1]!.id;
        const row = await rowOf("ledger", "id", last);
        await intrude([`DELETE FROM ledger WHERE id = '${last}'`]);
        try {
          const cut = await run();
          expect(cut.code, cut.stderr).toBe(1);
          expect(JSON.parse(cut.stdout).checkpoint).toMatchObject({ ok: false, broken: { position: size - 1, ledger_id: last } });
        } finally {
          await intrude([insertOf("ledger", row)]);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 240_000);

    it("reports a log truncated from a position on as cut there", async () => {
      const from = size - 3;
      const ids = order.slice(from).map((r) => r.id);
      const everything = (await s.db.raw("SELECT g.ledger_id AS id FROM ledger_leaves g WHERE g.position >= ? ORDER BY g.position", [
        from,
      ])) as { id: string }[];
      const ledgerRows = await Promise.all(everything.map((r) => rowOf("ledger", "id", r.id)));
      const leafRows = await Promise.all(everything.map((r) => rowOf("ledger_leaves", "ledger_id", r.id)));
      const cut = await tamper(
        [
          `DELETE FROM ledger WHERE id IN (${everything.map((r) => `'${r.id}'`).join(", ")})`,
          `DELETE FROM ledger_leaves WHERE position >= ${from}`,
        ],
        [...ledgerRows.map((r) => insertOf("ledger", r)), ...leafRows.map((r) => insertOf("ledger_leaves", r))],
      );
      expect(ids.length).toBe(3);
      expect(cut).toMatchObject({ ok: false, broken: { position: from, problem: expect.stringContaining("cut") } });
      expect(await check()).toMatchObject({ ok: true });
    });
  });
}

forEachStore("ledger checkpoints and receipts", (target) => {
  describe("over HTTP and in the database", () => checkpointSuite(target));
});

forEachStore("checkpoints under a configured origin", (target) => {
  it("name the ledger with AUTHORITY_LEDGER_ORIGIN, and the signature line with it", async () => {
    const s = await startDecisionServer(target, { ledgerOrigin: "ledger.example.com/payments" });
    try {
      const auditor = (
        await s.call<KeyCreated>("POST", "/keys", ADMIN_KEY, { identity: "origin@example.com", kind: "human", roles: ["auditor"] })
      ).body.key;
      const note = (await s.call("GET", "/ledger/checkpoint", auditor)).text;
      const keys = (await s.call<SigningKeySet>("GET", "/signing-keys", ADMIN_KEY)).body.keys;
      expect(note.split("\n")[0]).toBe("ledger.example.com/payments");
      expect(note).toContain("\n\n\u2014 ledger.example.com/payments ");
      expect(verifyCheckpoint(note, keys, "ledger.example.com/payments")).toMatchObject({
        ok: true,
        origin: "ledger.example.com/payments",
        size: 0,
      });
    } finally {
      await s.close();
    }
  });
});

describe("migration 11 on a database an earlier release wrote", () => {
  it("gives the records sealed before it positions in the order they were sealed, and a tree that verifies", async () => {
    const dir = mkdtempSync(join(tmpdir(), "authority-log-upgrade-"));
    const file = join(dir, "authority.db");
    copyFileSync(new URL("./fixtures/schema-v5.db", import.meta.url), file);
    const store = openStore(file);
    try {
      await store.migrate(Date.now());
      const count = await logPending(store, Date.now());
      const db = new Database(file, { readonly: true });
      let rows: { position: number; created_at: number; hash: string }[];
      let sealed: number;
      try {
        rows = db
          .prepare(
            "SELECT g.position AS position, l.created_at AS created_at, l.hash AS hash FROM ledger_leaves g JOIN ledger l ON l.id = g.ledger_id ORDER BY g.position",
          )
          .all() as typeof rows;
        sealed = (db.prepare("SELECT COUNT(*) AS n FROM ledger").get() as { n: number }).n;
      } finally {
        db.close();
      }
      expect(sealed).toBeGreaterThan(2);
      expect(count).toBe(sealed);
      expect(rows.map((r) => r.position)).toEqual([...Array(sealed).keys()]);
      for (let i = 1; i < rows.length; i += 1) expect(rows[i]!.created_at).toBeGreaterThanOrEqual(rows[i - 1]!.created_at);
      expect((await treeHead(store)).root.equals(treeHash(rows.map((r) => recordLeaf(r.hash))))).toBe(true);
      expect(await verifyLedger(store)).toMatchObject({ ok: true });
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
