// HEAVY (a few seconds per database): the crash proof. Under load, the server process is killed
// with SIGKILL and started again; every decision and settlement a client received is in the
// ledger, every chain verifies, and each grant's usage is exactly what its sealed records say.

import { openStore, verifyLedger } from "@agent-authority/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY } from "./http-harness.js";
import {
  agentWithKey,
  ATTESTATION,
  get,
  grant,
  post,
  SERVER_BUILT,
  startServerProcess,
  type ServerProcess,
  type SharedDatabase,
} from "./server-processes.js";
import { forEachStore, type StoreTarget } from "./targets.js";
import type { Decision, Settlement } from "@agent-authority/sdk";

/** The fields of a sealed ledger record this test reads: a settlement's decision and amount, a decision's request. */
interface SealedRecord {
  readonly kind: "decision" | "settlement";
  readonly decision_ledger_id: string;
  readonly amount_minor: number;
  readonly request: { readonly amount_minor: number };
}

const WORKERS = 16;
const LOAD_MS = 1_500;

interface Received {
  decisions: Map<string, { outcome: string; amount: number }>;
  settlements: Map<string, { decision: string; amount: number }>;
}

function crashSuite(target: StoreTarget): void {
  let db: SharedDatabase & { dispose(): Promise<void> };
  let running: ServerProcess | undefined;
  beforeAll(async () => {
    db = await target.create();
  });
  afterAll(async () => {
    running?.child.kill("SIGKILL");
    await running?.exited;
    await db?.dispose();
  });

  /** One client: authorize, settle half of every other allow, until the server stops answering. */
  async function worker(baseUrl: string, key: string, grantId: string, received: Received, seed: number): Promise<void> {
    for (let i = 0; ; i += 1) {
      const amount = 1 + ((seed * 31 + i * 17) % 100);
      try {
        const decision = await post<Decision>(baseUrl, "/authorize", key, {
          grant_id: grantId,
          tool: "payments.send",
          amount_minor: amount,
          currency: "EUR",
          attestation: ATTESTATION,
        });
        if (decision.status !== 200) throw new Error(`authorize answered ${decision.status}: ${JSON.stringify(decision.body)}`);
        received.decisions.set(decision.body.ledger_id, { outcome: decision.body.outcome, amount });
        if (decision.body.outcome === "allow" && i % 2 === 0) {
          const settled = await post<Settlement>(baseUrl, `/decisions/${decision.body.ledger_id}/settle`, key, {
            amount_minor: Math.floor(amount / 2),
          });
          if (settled.status !== 200) throw new Error(`settle answered ${settled.status}: ${JSON.stringify(settled.body)}`);
          received.settlements.set(settled.body.ledger_id, { decision: decision.body.ledger_id, amount: Math.floor(amount / 2) });
        }
      } catch (error) {
        // The process was killed: a refused connection or a reset ends this client.
        if (error instanceof TypeError) return;
        throw error;
      }
    }
  }

  it("kill -9 under load loses no answered decision, and the chains and budgets agree after restart", async () => {
    running = await startServerProcess(db);
    const agent = await agentWithKey(running.baseUrl, "crash");
    const grantId = await grant(running.baseUrl, agent.id, { budget_amount_minor: 50_000_000, budget_currency: "EUR" });
    const received: Received = { decisions: new Map(), settlements: new Map() };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(running!.baseUrl, agent.key, grantId, received, i)));
    await new Promise((r) => setTimeout(r, LOAD_MS));
    running.child.kill("SIGKILL");
    await running.exited;
    await load;
    expect(received.decisions.size).toBeGreaterThan(20);

    running = await startServerProcess(db);
    const store = openStore(db.url, db.schema === undefined ? {} : { schema: db.schema });
    try {
      const verification = await verifyLedger(store);
      expect(verification, JSON.stringify(verification.broken)).toMatchObject({ ok: true, broken: null });
      const rows = await store.decisionPath().ledgerChain(grantId, 0, 1_000_000);
      const sealed = new Map(rows.map((row) => [row.id, { row, record: JSON.parse(row.record) as SealedRecord }]));
      for (const [id, answer] of received.decisions) expect(sealed.get(id)?.row.outcome, id).toBe(answer.outcome);
      for (const [id, answer] of received.settlements) {
        expect(sealed.get(id)?.record, id).toMatchObject({
          kind: "settlement",
          decision_ledger_id: answer.decision,
          amount_minor: answer.amount,
        });
      }
      // Usage is what the sealed records say: each allow holds its amount until settled, then counts what was captured.
      const settledBy = new Map<string, number>();
      for (const { record } of sealed.values())
        if (record.kind === "settlement") settledBy.set(record.decision_ledger_id, record.amount_minor);
      let uses = 0;
      let held = 0;
      let settled = 0;
      for (const { row, record } of sealed.values()) {
        if (row.kind !== "decision" || row.outcome !== "allow") continue;
        uses += 1;
        const captured = settledBy.get(row.id);
        if (captured === undefined) held += record.request.amount_minor;
        else settled += captured;
      }
      const view = await get(running.baseUrl, `/grants/${grantId}`, ADMIN_KEY);
      expect(view).toMatchObject({ uses, held_minor: held, settled_minor: settled });
      // The Merkle log covers every answered decision and settlement: the decision path writes
      // nothing for it, and the logger catches up from the chains alone (decision 1941).
      const checkpoint = await fetch(`${running.baseUrl}/ledger/checkpoint`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      expect(checkpoint.status).toBe(200);
      const size = Number((await checkpoint.text()).split("\n")[1]);
      expect(size).toBe((await store.countRows())["ledger"]);
      const log = store.ledgerLog();
      for (const id of [...received.decisions.keys(), ...received.settlements.keys()]) expect(await log.positionOf(id), id).toBeDefined();
    } finally {
      await store.close();
    }
  });
}

describe.skipIf(!SERVER_BUILT)("crash proof (heavy)", () => {
  forEachStore("kill -9 under load", crashSuite);
});
