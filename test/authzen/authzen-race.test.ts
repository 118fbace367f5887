// Exact budgets under 200 evaluations raced over two server processes on one database, on SQLite
// and PostgreSQL: each evaluation is an authorize decision, so the budget is spent exactly once.

import { openStore, type Store } from "@agent-authority/server";
import type { Grant } from "@agent-authority/sdk";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ADMIN_KEY } from "../server/http-harness.js";
import {
  agentWithKey,
  ATTESTATION,
  get,
  grant,
  SERVER_BUILT,
  startServerProcess,
  type ServerProcess,
  type SharedDatabase,
} from "../server/server-processes.js";
import { forEachStore, type StoreTarget } from "../server/targets.js";

const RACERS = 200;

/** One evaluation, sent again after `Retry-After` while it is answered 409 `contention` (nothing was written). */
async function evaluate(baseUrl: string, key: string, body: unknown, requestId: string): Promise<{ status: number; decision?: boolean }> {
  for (let tries = 0; ; tries += 1) {
    const response = await fetch(`${baseUrl}/access/v1/evaluation`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-request-id": requestId },
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as { decision?: boolean; code?: string };
    if (response.status !== 409 || answer.code !== "contention" || tries >= 9) return { status: response.status, ...answer };
    await new Promise((resolve) => setTimeout(resolve, 200 + Math.random() * 300));
  }
}

function raceSuite(target: StoreTarget): void {
  let db: SharedDatabase & { dispose(): Promise<void> };
  let store: Store;
  let servers: ServerProcess[] = [];
  const origin = (i: number) => new URL(servers[i % servers.length]!.baseUrl).origin;

  beforeAll(async () => {
    db = await target.create();
    store = openStore(db.url, db.schema === undefined ? {} : { schema: db.schema });
    await store.migrate(Date.now());
    servers = await Promise.all([startServerProcess(db), startServerProcess(db)]);
  });
  afterAll(async () => {
    for (const server of servers) {
      server.child.kill("SIGKILL");
      await server.exited;
    }
    await store?.close();
    await db?.dispose();
  });

  it.skipIf(!SERVER_BUILT)(`spends a budget exactly under ${RACERS} evaluations raced over two processes`, async () => {
    const agent = await agentWithKey(servers[0]!.baseUrl, "authzen-racer");
    const grantId = await grant(servers[0]!.baseUrl, agent.id, { budget_amount_minor: 3_000, budget_currency: "EUR" });
    const body = {
      subject: { type: "agent", id: agent.id, properties: { attestation: ATTESTATION } },
      action: { name: "payments.send" },
      resource: { type: "grant", id: grantId },
      context: { amount_minor: 100, currency: "EUR" },
    };
    const answers = await Promise.all(Array.from({ length: RACERS }, (_, i) => evaluate(origin(i), agent.key, body, `race-${i}`)));
    for (const answer of answers) expect(answer.status, JSON.stringify(answer)).toBe(200);
    expect(answers.filter((a) => a.decision === true)).toHaveLength(30);
    const read = await get<Grant>(servers[1]!.baseUrl, `/grants/${grantId}`, ADMIN_KEY);
    expect(read).toMatchObject({ uses: 30, held_minor: 3_000 });
  });
}

forEachStore("AuthZEN evaluations raced over two processes", raceSuite);
