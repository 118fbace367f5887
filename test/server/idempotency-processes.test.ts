// HEAVY (a few seconds per database): Idempotency-Key across real server processes. Requests with
// one key raced over two processes on one database make one effect; a process killed with SIGKILL
// just before or just after committing a request's effects (the test-only FaultHooks, which
// main.ts reads from AUTHORITY_TEST_CRASH_*) leaves a retry that makes no second effect.

import { openStore, type Store } from "@agent-authority/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, CERTIFICATION } from "./http-harness.js";
import { agentWithKey, ATTESTATION, grant, post, SERVER_BUILT, startServerProcess, type ServerProcess, type SharedDatabase } from "./server-processes.js";
import { forEachStore, type StoreTarget } from "./targets.js";

const RACERS = 20;

interface Sent { readonly status: number; readonly text: string; readonly replayed: boolean }

/** One POST with an Idempotency-Key; a dropped connection (the process died) answers undefined. */
async function send(baseUrl: string, path: string, key: string, body: unknown, idempotencyKey: string): Promise<Sent | undefined> {
  try {
    const response = await fetch(`${baseUrl}${path}`, {
      method: "POST", body: JSON.stringify(body),
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": idempotencyKey },
    });
    return { status: response.status, text: await response.text(), replayed: response.headers.get("idempotent-replayed") === "true" };
  } catch (error) {
    if (error instanceof TypeError) return undefined;
    throw error;
  }
}

function delta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const changed: Record<string, number> = {};
  for (const [table, n] of Object.entries(after)) if (n !== before[table]) changed[table] = n - (before[table] ?? 0);
  return changed;
}

interface Request { readonly key: string; readonly path: string; readonly body: unknown }

function processesSuite(target: StoreTarget): void {
  let db: SharedDatabase & { dispose(): Promise<void> };
  let store: Store;
  let steady: ServerProcess[] = [];
  let agent: { id: string; key: string };
  let n = 0;
  beforeAll(async () => {
    db = await target.create();
    store = openStore(db.url, db.schema === undefined ? {} : { schema: db.schema });
    await store.migrate(Date.now());
    steady = await Promise.all([startServerProcess(db), startServerProcess(db)]);
    agent = await agentWithKey(steady[0]!.baseUrl, "idem-processes");
  });
  afterAll(async () => {
    for (const server of steady) {
      server.child.kill("SIGKILL");
      await server.exited;
    }
    await store?.close();
    await db?.dispose();
  });

  const base = () => steady[0]!.baseUrl;
  const CASES: Record<string, () => Promise<Request>> = {
    "POST /v1/grants": async () => ({
      key: ADMIN_KEY, path: "/grants",
      body: { agent_id: agent.id, principal_type: "service", principal_id: "proof", scope: { tool: ["payments.*"] }, budget_amount_minor: 1000, budget_currency: "EUR" },
    }),
    "POST /v1/keys": async () => ({ key: ADMIN_KEY, path: "/keys", body: { identity: `raced-${(n += 1)}`, kind: "service", roles: ["auditor"] } }),
    "POST /v1/agents/{id}/certification": async () => {
      const fresh = await post(base(), "/agents", ADMIN_KEY, { name: `certified-${(n += 1)}` });
      return { key: ADMIN_KEY, path: `/agents/${fresh.body.id}/certification`, body: CERTIFICATION };
    },
    "POST /v1/grants/{id}/delegate": async () => {
      const parent = await grant(base(), agent.id, { budget_amount_minor: 1000, budget_currency: "EUR", delegation_policy: "attenuating" });
      return { key: ADMIN_KEY, path: `/grants/${parent}/delegate`, body: { agent_id: agent.id } };
    },
    "POST /v1/decisions/{id}/settle": async () => {
      const grantId = await grant(base(), agent.id, { budget_amount_minor: 1000, budget_currency: "EUR" });
      const decided = await post(base(), "/authorize", agent.key, { grant_id: grantId, tool: "payments.send", amount_minor: 100, currency: "EUR", attestation: ATTESTATION });
      return { key: agent.key, path: `/decisions/${decided.body.ledger_id}/settle`, body: { amount_minor: 40 } };
    },
  };

  /** What one request of the case changes, measured on a request of its own. */
  async function oneEffect(prepare: () => Promise<Request>): Promise<{ changed: Record<string, number>; status: number }> {
    const request = await prepare();
    const before = await store.countRows();
    const sent = await send(base(), request.path, request.key, request.body, `single-${(n += 1)}`);
    expect(sent?.status, sent?.text).toBeLessThan(300);
    return { changed: delta(before, await store.countRows()), status: sent!.status };
  }

  for (const [name, prepare] of Object.entries(CASES)) {
    it(`${name}: ${RACERS} requests with one key over two processes make one effect and one answer`, async () => {
      const one = await oneEffect(prepare);
      const request = await prepare();
      const key = `race-${(n += 1)}`;
      const before = await store.countRows();
      const replies = await Promise.all(Array.from({ length: RACERS }, (_, i) => send(steady[i % 2]!.baseUrl, request.path, request.key, request.body, key)));
      expect(delta(before, await store.countRows())).toEqual(one.changed);
      expect(replies.filter((r) => r?.replayed)).toHaveLength(RACERS - 1);
      const replays = new Set(replies.filter((r) => r?.replayed).map((r) => `${r!.status}\n${r!.text}`));
      expect(replays.size).toBe(1);
      // A key's secret is in the first answer alone; any other answer is replayed as sent.
      if (name !== "POST /v1/keys") expect(replays).toEqual(new Set(replies.filter((r) => !r?.replayed).map((r) => `${r!.status}\n${r!.text}`)));
    });
  }

  for (const point of ["before-commit", "after-commit"] as const) {
    for (const [name, prepare] of Object.entries(CASES)) {
      it(`${name}: kill -9 ${point === "before-commit" ? "before" : "after"} the effects commit, then a retry: one effect`, async () => {
        const one = await oneEffect(prepare);
        const request = await prepare();
        const key = `crash-${point}-${(n += 1)}`;
        const variable = point === "before-commit" ? "AUTHORITY_TEST_CRASH_BEFORE_COMMIT" : "AUTHORITY_TEST_CRASH_AFTER_COMMIT";
        const crashing = await startServerProcess(db, { [variable]: key });
        const before = await store.countRows();
        expect(await send(crashing.baseUrl, request.path, request.key, request.body, key)).toBeUndefined();
        await crashing.exited;
        expect(crashing.child.signalCode).toBe("SIGKILL");
        // The retry, on a process that stayed up.
        const retried = await send(base(), request.path, request.key, request.body, key);
        expect(delta(before, await store.countRows())).toEqual(one.changed);
        expect(retried?.replayed).toBe(point === "after-commit");
        const expected = point === "after-commit" && name === "POST /v1/keys" ? 409 : one.status;
        expect(retried?.status, retried?.text).toBe(expected);
        // Another retry replays the stored answer: the same, or for a key the problem that names it.
        const again = await send(steady[1]!.baseUrl, request.path, request.key, request.body, key);
        if (name === "POST /v1/keys") expect(again).toMatchObject({ status: 409, replayed: true });
        else expect(again).toMatchObject({ status: retried!.status, text: retried!.text, replayed: true });
      });
    }
  }
}

describe.skipIf(!SERVER_BUILT)("Idempotency-Key across processes (heavy)", () => {
  forEachStore("two server processes and a crashing one on one database", processesSuite);
});
