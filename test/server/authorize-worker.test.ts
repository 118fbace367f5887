// The compiled server on a SQLite file runs authorize transactions on a worker thread with a second
// connection, and keeps grants and certificates between its batches (the decision cache). Through
// the real process: what the main thread changes (a revoked grant, a revoked certificate) the next
// decision sees at once, and so does a revoked key (the worker authenticates); idempotency and
// refusals cross the thread unchanged; a thread of its own copies the log into the database;
// shutdown is clean.

import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { endianness, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  NEW_DATABASE_PAGE_SIZE,
  THREAD_CHECKPOINT_STEP,
  THREADED_WRITER_CHECKPOINT_FRAMES,
  WRITER_CHECKPOINT_FRAMES,
} from "../../server/src/store/drivers/index.js";
import { API_LIMITS } from "@agent-authority/api";
import { ADMIN_KEY } from "./http-harness.js";
import { nestedList } from "./hostile-http.js";
import { agentWithKey, ATTESTATION, get, grant, post, SERVER_BUILT, startServerProcess, type ServerProcess } from "./server-processes.js";
import type { CertificationStatus, KeyCreated, TreeLedger } from "@agent-authority/sdk";

/**
 * The write-ahead log's frames and how many of them are copied into the database, from the header
 * of its index (the `-shm` file, native byte order): `mxFrame` at byte 16, `nBackfill` at byte 96.
 */
function walIndex(database: string): { frames: number; copied: number } {
  const header = readFileSync(`${database}-shm`).subarray(0, 136);
  const read = (offset: number): number => (endianness() === "LE" ? header.readUInt32LE(offset) : header.readUInt32BE(offset));
  return { frames: read(16), copied: read(96) };
}

describe.skipIf(!SERVER_BUILT)("authorize on the worker thread (SQLite, compiled server)", () => {
  const dir = mkdtempSync(join(tmpdir(), "authority-worker-"));
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess({ url: join(dir, "authority.db") });
  });
  afterAll(async () => {
    if (server !== undefined && server.child.exitCode === null) {
      server.child.kill("SIGKILL");
      await server.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const authorize = (key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    fetch(`${server.baseUrl}/authorize`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });

  it("says where authorize runs, and is ready while the worker runs", async () => {
    expect(server.output()).toMatch(/"msg":"listening".*"authorize_thread":"worker"/);
    const ready = await fetch(`${server.baseUrl}/ready`);
    expect(ready.status).toBe(200);
  });

  it("sees a grant revoked and a certificate revoked by the main thread in the very next decision", async () => {
    const base = server.baseUrl;
    const agent = await agentWithKey(base, "worker-agent");
    const grantId = await grant(base, agent.id, { budget_count: 100 });
    const body = { grant_id: grantId, tool: "payments.send", attestation: ATTESTATION };
    // Twice, so the second decision is made from the worker's cache.
    expect((await (await authorize(agent.key, body)).json()).outcome).toBe("allow");
    const cached = await (await authorize(agent.key, body)).json();
    expect(cached.outcome).toBe("allow");
    // The sealed record keeps every gate of the answer, member for member, and its chain verifies.
    const tree = await get<TreeLedger>(base, `/grants/${grantId}/ledger`, ADMIN_KEY);
    const sealed = tree.records.find((r: { ledger_id: string }) => r.ledger_id === cached.ledger_id);
    expect(sealed?.gates).toEqual(cached.gates);
    expect(sealed?.seq).toBe(2);
    expect(tree.verification).toMatchObject({ ok: true, records: 2 });

    const certification = await get<CertificationStatus>(base, `/agents/${agent.id}/certification`, ADMIN_KEY);
    const certificateId: string = certification.certificate!.id;
    expect((await post(base, `/certificates/${certificateId}/revoke`, ADMIN_KEY, { reason: "re-evaluate" })).status).toBe(200);
    const uncertified = await (await authorize(agent.key, body)).json();
    expect(uncertified.outcome).toBe("deny");
    expect(JSON.stringify(uncertified.gates)).toMatch(/certif/);
    // A failing gate carries more members (its outcome); the sealed record keeps them all.
    const afterRevocation = await get<TreeLedger>(base, `/grants/${grantId}/ledger`, ADMIN_KEY);
    const sealedDeny = afterRevocation.records.find((r: { ledger_id: string }) => r.ledger_id === uncertified.ledger_id);
    expect(sealedDeny?.gates).toEqual(uncertified.gates);
    expect(uncertified.gates.some((g: { outcome?: string }) => g.outcome !== undefined)).toBe(true);

    const other = await agentWithKey(base, "worker-agent-2");
    const second = await grant(base, other.id, { budget_count: 100 });
    const secondBody = { grant_id: second, tool: "payments.send", attestation: ATTESTATION };
    expect((await (await authorize(other.key, secondBody)).json()).outcome).toBe("allow");
    expect((await post(base, `/grants/${second}/revoke`, ADMIN_KEY, { reason: "done" })).status).toBe(200);
    const revoked = await (await authorize(other.key, secondBody)).json();
    expect(revoked.outcome).toBe("deny");
    expect(revoked.reason_code).toMatch(/revoked|status/);
  });

  it("decides args nested at the JSON depth limit and refuses one level more with 400, leaving no record", async () => {
    const agent = await agentWithKey(server.baseUrl, "worker-deep");
    const grantId = await grant(server.baseUrl, agent.id, { budget_count: 10, policy: "args.a == args.b" });
    const deep = nestedList(API_LIMITS.requestJsonDepthMax - 2);
    const decided = await authorize(agent.key, {
      grant_id: grantId,
      tool: "payments.send",
      attestation: ATTESTATION,
      args: { a: deep, b: deep },
    });
    expect(decided.status).toBe(200);
    expect((await decided.json()).outcome).toBe("allow");
    const over = await authorize(agent.key, {
      grant_id: grantId,
      tool: "payments.send",
      attestation: ATTESTATION,
      args: { a: [deep], b: 1 },
    });
    expect(over.status).toBe(400);
    expect((await over.json()).code).toBe("body_too_deep");
    expect((await get(server.baseUrl, `/grants/${grantId}`, ADMIN_KEY)).uses).toBe(1);
  });

  it("replays an idempotent answer byte for byte and refuses the key with another body", async () => {
    const agent = await agentWithKey(server.baseUrl, "worker-idem");
    const grantId = await grant(server.baseUrl, agent.id, { budget_count: 10 });
    const body = { grant_id: grantId, tool: "payments.send", attestation: ATTESTATION };
    const first = await authorize(agent.key, body, { "idempotency-key": "worker-once" });
    const firstText = await first.text();
    const again = await authorize(agent.key, body, { "idempotency-key": "worker-once" });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(firstText);
    const other = await authorize(agent.key, { ...body, tool: "payments.refund" }, { "idempotency-key": "worker-once" });
    expect(other.status).toBe(422);
    expect(other.headers.get("content-type")).toMatch(/problem\+json/);
    expect((await get(server.baseUrl, `/grants/${grantId}`, ADMIN_KEY)).uses).toBe(1);
  });

  it("names the asking key's id in each authorize log line, fresh or replayed, though the worker authenticated it", async () => {
    const agent = await agentWithKey(server.baseUrl, "worker-logged");
    const grantId = await grant(server.baseUrl, agent.id, { budget_count: 10 });
    const body = { grant_id: grantId, tool: "payments.send", attestation: ATTESTATION };
    const keyId = (await get(server.baseUrl, "/whoami", agent.key)).id as string;
    expect(keyId).toMatch(/^key_/);
    const answers = [
      await authorize(agent.key, body, { "idempotency-key": "logged-once" }),
      await authorize(agent.key, body, { "idempotency-key": "logged-once" }),
    ];
    const ids = answers.map((answer) => answer.headers.get("x-request-id"));
    const logged = (): string[] =>
      server
        .output()
        .split("\n")
        .filter((line) => ids.some((id) => id !== null && line.includes(id)));
    // The line is written once the answer has gone out; wait for it, a bounded number of times.
    for (let tries = 0; tries < 100 && logged().length < 2; tries += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    const lines = logged();
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ msg: "request", path: "/v1/authorize", status: 200, key_id: keyId });
  });

  it("authenticates in the decision's transaction: a key revoked after use is refused at once, and a refused key comes before a bad body", async () => {
    const base = server.baseUrl;
    const agent = await agentWithKey(base, "worker-keys");
    const grantId = await grant(base, agent.id, { budget_count: 100 });
    const body = { grant_id: grantId, tool: "payments.send", attestation: ATTESTATION };
    const rotated = await post<KeyCreated>(base, "/keys", ADMIN_KEY, {
      identity: "worker-keys-rotated",
      kind: "service",
      roles: ["agent"],
      agent_id: agent.id,
    });
    // Twice, so that the key's row is in the worker's cache when the main thread revokes it.
    for (let i = 0; i < 2; i += 1) expect((await (await authorize(rotated.body.key, body)).json()).outcome).toBe("allow");
    expect((await post(base, `/keys/${rotated.body.id}/revoke`, ADMIN_KEY, { reason: "rotated" })).status).toBe(200);
    const revoked = await authorize(rotated.body.key, body);
    expect(revoked.status).toBe(401);
    expect(revoked.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect((await revoked.json()).detail).toBe("the key is unknown or revoked");

    // A key without the agent role: 403, with a good body or a bad one.
    const auditor = await post<KeyCreated>(base, "/keys", ADMIN_KEY, {
      identity: "worker-keys-auditor",
      kind: "service",
      roles: ["auditor"],
    });
    expect((await authorize(auditor.body.key, body)).status).toBe(403);
    expect((await authorize(auditor.body.key, { tool: 1 })).status).toBe(403);
    // An unknown key is a 401 before a bad body's 400; a good key with a bad body is the 400.
    const unknown = await authorize(`aa_${"u".repeat(43)}`, { tool: 1 });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect((await authorize(agent.key, { tool: 1 })).status).toBe(400);
    expect((await authorize(agent.key, body, { "idempotency-key": "" })).status).toBe(400);
    const keyless = await fetch(`${base}/authorize`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(keyless.status).toBe(401);
    // Only the two allowed decisions counted.
    expect((await get(base, `/grants/${grantId}`, ADMIN_KEY)).uses).toBe(2);
  });

  it("copies the log on a thread of its own: a pass before SQLite's usual checkpoint, and the log starts over and stays bounded", async () => {
    const base = server.baseUrl;
    const database = join(dir, "authority.db");
    const agent = await agentWithKey(base, "worker-checkpoints");
    const grantId = await grant(base, agent.id, { budget_count: 1_000_000 });
    const body = { grant_id: grantId, tool: "payments.send", attestation: ATTESTATION };
    // Without the thread the writer copies the log at a thousand frames, all of it at once; the
    // thread's first pass comes at 750: a copied count between the two is that pass.
    let passed = false;
    let restarted = false;
    let previous = 0;
    const watch = setInterval(() => {
      const { frames, copied } = walIndex(database);
      if (copied >= THREAD_CHECKPOINT_STEP && copied < WRITER_CHECKPOINT_FRAMES) passed = true;
      // The log starts over: after the thread caught up with the writer, or at the writer's own
      // checkpoint (THREADED_WRITER_CHECKPOINT_FRAMES), whichever comes first.
      if (frames < previous) restarted = true;
      previous = frames;
    }, 2);
    let decisions = 0;
    try {
      // Ten requests at a time, until both are seen.
      for (let round = 0; round < 3_000 && !(passed && restarted); round += 1) {
        const answers = await Promise.all(Array.from({ length: 10 }, () => authorize(agent.key, body)));
        for (const answer of answers) expect(answer.status).toBe(200);
        decisions += 10;
      }
    } finally {
      clearInterval(watch);
    }
    expect(passed).toBe(true);
    expect(restarted).toBe(true);
    // Never longer than the writer's checkpoint and the last commits: about 20 MiB of 2 KiB pages.
    expect(statSync(`${database}-wal`).size).toBeLessThan((THREADED_WRITER_CHECKPOINT_FRAMES + 1_000) * (NEW_DATABASE_PAGE_SIZE + 24) + 32);
    expect((await get(base, `/grants/${grantId}`, ADMIN_KEY)).uses).toBe(decisions);
  });

  it("stops cleanly on SIGTERM, the worker's database closed", async () => {
    server.child.kill("SIGTERM");
    await server.exited;
    expect(server.child.exitCode).toBe(0);
    expect(server.output()).toContain('"msg":"stopped"');
  });
});
