// HEAVY (about 90 s on both databases on a shared 2-core machine): Idempotency-Key across real server processes, over the
// table of POST endpoints (test/server/post-cases.ts). Requests with one key raced over two
// processes on one database make one effect; for every endpoint with an effect, a process killed with SIGKILL just
// before or just after committing a request's effects (the test-only FaultHooks, which main.ts
// reads from AUTHORITY_TEST_CRASH_*) leaves a retry that makes no second effect. A crashing process
// dies only on its own case's key, so it is started ahead while the cases before it run.

import { openStore, type Store } from "@agent-authority/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY } from "./http-harness.js";
import { PREVIEW_ENDPOINTS, postCases, APPROVER_IDENTITY, type Post } from "./post-cases.js";
import {
  agentWithKey,
  post as postJson,
  SERVER_BUILT,
  startServerProcess,
  type ServerProcess,
  type SharedDatabase,
} from "./server-processes.js";
import { forEachStore, type StoreTarget } from "./targets.js";

const RACERS = 20;
/** How many crashing processes start ahead of the case that kills them. */
const CRASHING_AHEAD = 3;
const KEY_CREATION = "POST /v1/keys";
/**
 * The endpoints raced over two processes: those the audit duplicated. Every endpoint is raced in
 * one process by idempotency.test.ts, where the claim's wait is the same unique index or lock.
 */
const RACED_ACROSS_PROCESSES: ReadonlySet<string> = new Set([
  "POST /v1/grants",
  KEY_CREATION,
  "POST /v1/agents/{id}/certification",
  "POST /v1/grants/{id}/delegate",
  "POST /v1/decisions/{id}/settle",
]);

interface Sent {
  readonly status: number;
  readonly text: string;
  readonly replayed: boolean;
}

/** One POST with an Idempotency-Key; a dropped connection (the process died) answers undefined. */
async function send(baseUrl: string, request: Post, idempotencyKey: string): Promise<Sent | undefined> {
  try {
    const response = await fetch(`${baseUrl}${request.path}`, {
      method: "POST",
      body: JSON.stringify(request.body),
      headers: { authorization: `Bearer ${request.key}`, "content-type": "application/json", "idempotency-key": idempotencyKey },
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

type CrashPoint = "before-commit" | "after-commit";
interface CrashCase {
  readonly name: string;
  readonly point: CrashPoint;
  readonly key: string;
}

const CRASH_VARIABLE: Record<CrashPoint, string> = {
  "before-commit": "AUTHORITY_TEST_CRASH_BEFORE_COMMIT",
  "after-commit": "AUTHORITY_TEST_CRASH_AFTER_COMMIT",
};

/** The crashing processes of a suite, one per case, each started `CRASHING_AHEAD` cases before its own. */
class CrashingProcesses {
  readonly #started = new Map<number, Promise<ServerProcess>>();
  constructor(
    private readonly db: SharedDatabase,
    private readonly cases: readonly CrashCase[],
  ) {}

  /** The process that dies on case `index`, starting those of the next cases meanwhile. */
  take(index: number): Promise<ServerProcess> {
    for (let i = index; i < Math.min(this.cases.length, index + CRASHING_AHEAD); i += 1) {
      const crash = this.cases[i]!;
      if (this.#started.has(i)) continue;
      const started = startServerProcess(this.db, { [CRASH_VARIABLE[crash.point]]: crash.key });
      // A start that fails is reported by the case that takes it, not as an unhandled rejection.
      started.catch(() => undefined);
      this.#started.set(i, started);
    }
    return this.#started.get(index)!;
  }

  async stopAll(): Promise<void> {
    for (const started of this.#started.values()) {
      const server = await started.catch(() => undefined);
      if (server !== undefined && server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill("SIGKILL");
        await server.exited;
      }
    }
  }
}

function processesSuite(target: StoreTarget): void {
  let db: SharedDatabase & { dispose(): Promise<void> };
  let store: Store;
  let steady: ServerProcess[] = [];
  let agent: { id: string; key: string };
  let approverKey: string;
  let n = 0;
  const unique = (label: string) => `${label}-${(n += 1)}`;
  const base = () => steady[0]!.baseUrl;
  const post = async (key: string, path: string, body: unknown, status: number): Promise<Record<string, unknown>> => {
    const reply = await postJson(base(), path, key, body);
    expect(reply.status, JSON.stringify(reply.body)).toBe(status);
    return reply.body;
  };
  const CASES: Record<string, () => Promise<Post>> = {
    ...postCases({ post, agent: () => agent, approverKey: () => approverKey, unique }),
    [KEY_CREATION]: async () => ({
      key: ADMIN_KEY,
      path: "/keys",
      body: { identity: unique("raced"), kind: "service", roles: ["auditor"] },
    }),
  };
  const crashCases: CrashCase[] = (["before-commit", "after-commit"] as const).flatMap((point) =>
    Object.keys(CASES)
      .filter((name) => !PREVIEW_ENDPOINTS.has(name))
      .map((name, i) => ({ name, point, key: `crash-${point}-${i}` })),
  );
  let crashing: CrashingProcesses;

  beforeAll(async () => {
    db = await target.create();
    store = openStore(db.url, db.schema === undefined ? {} : { schema: db.schema });
    await store.migrate(Date.now());
    steady = await Promise.all([startServerProcess(db), startServerProcess(db)]);
    agent = await agentWithKey(base(), "idem-processes");
    approverKey = (await post(ADMIN_KEY, "/keys", { identity: APPROVER_IDENTITY, kind: "human", roles: ["approver"] }, 201)).key as string;
    crashing = new CrashingProcesses(db, crashCases);
    // The first crashing processes start while the races run.
    void crashing.take(0);
  });
  afterAll(async () => {
    await crashing?.stopAll();
    for (const server of steady) {
      server.child.kill("SIGKILL");
      await server.exited;
    }
    await store?.close();
    await db?.dispose();
  });

  /** What one request of the case changes, measured on a request of its own. */
  async function oneEffect(prepare: () => Promise<Post>): Promise<{ changed: Record<string, number>; status: number }> {
    const request = await prepare();
    const before = await store.countRows();
    const sent = await send(base(), request, unique("single"));
    expect(sent?.status, sent?.text).toBeLessThan(300);
    return { changed: delta(before, await store.countRows()), status: sent!.status };
  }

  for (const [name, prepare] of Object.entries(CASES).filter(([name]) => RACED_ACROSS_PROCESSES.has(name))) {
    it(`${name}: ${RACERS} requests with one key over two processes make one effect and one answer`, async () => {
      const one = await oneEffect(prepare);
      const request = await prepare();
      const key = unique("race");
      const before = await store.countRows();
      const replies = await Promise.all(Array.from({ length: RACERS }, (_, i) => send(steady[i % 2]!.baseUrl, request, key)));
      expect(delta(before, await store.countRows())).toEqual(one.changed);
      expect(replies.filter((r) => r?.replayed)).toHaveLength(RACERS - 1);
      const replays = new Set(replies.filter((r) => r?.replayed).map((r) => `${r!.status}\n${r!.text}`));
      expect(replays.size).toBe(1);
      // A key's secret is in the first answer alone; any other answer is replayed as sent.
      if (name !== KEY_CREATION)
        expect(replays).toEqual(new Set(replies.filter((r) => !r?.replayed).map((r) => `${r!.status}\n${r!.text}`)));
    });
  }

  crashCases.forEach(({ name, point, key }, index) => {
    it(`${name}: kill -9 ${point === "before-commit" ? "before" : "after"} the effects commit, then a retry: one effect`, async () => {
      const one = await oneEffect(CASES[name]!);
      const request = await CASES[name]!();
      const victim = await crashing.take(index);
      const before = await store.countRows();
      expect(await send(victim.baseUrl, request, key)).toBeUndefined();
      await victim.exited;
      expect(victim.child.signalCode).toBe("SIGKILL");
      // The retry, on a process that stayed up.
      const retried = await send(base(), request, key);
      expect(delta(before, await store.countRows())).toEqual(one.changed);
      expect(retried?.replayed).toBe(point === "after-commit");
      const expected = point === "after-commit" && name === KEY_CREATION ? 409 : one.status;
      expect(retried?.status, retried?.text).toBe(expected);
      // Another retry replays the stored answer: the same, or for a key the problem that names it.
      const again = await send(steady[1]!.baseUrl, request, key);
      if (name === KEY_CREATION) expect(again).toMatchObject({ status: 409, replayed: true });
      else expect(again).toMatchObject({ status: retried!.status, text: retried!.text, replayed: true });
    });
  });
}

describe.skipIf(!SERVER_BUILT)("Idempotency-Key across processes (heavy)", () => {
  forEachStore("two server processes and a crashing one per case on one database", processesSuite);
});
