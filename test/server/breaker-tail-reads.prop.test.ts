// A window's tail read ahead (decision 1952): on SQLite and PostgreSQL, while signals are appended
// at the agent's head between reads, every answer of `CarriedWindows.tailOf` is what the store's
// `signalsFrom(tail, 2)` answers at that moment: the read never runs past a signal written since.
import { CarriedWindows, sealRecord } from "@agent-authority/server";
import fc from "fast-check";
import { expect, it } from "vitest";
import { forEachStore, storeForSuite } from "./targets.js";

/** Appending signals (some at the same instant as the one before), moving the tail on, or setting it anew. */
const opsArb = fc.array(
  fc.oneof(
    fc.record({ append: fc.integer({ min: 1, max: 40 }), sameInstant: fc.boolean() }),
    fc.record({ advance: fc.integer({ min: 1, max: 45 }) }),
    // The tail set elsewhere, as a window counted afresh sets it.
    fc.record({ jump: fc.nat() }),
  ),
  { minLength: 1, maxLength: 12 },
);

forEachStore("a window's tail read ahead", (target) => {
  const testStore = storeForSuite(target);

  it("answers what the store answers for the tail at that moment, with signals appended between reads", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(opsArb, async (ops) => {
        run += 1;
        const agent = `agt_tail${String(run).padStart(20, "0")}`;
        await testStore().store.createAgentIfAbsent({
          id: agent,
          name: `tail-${run}`,
          description: null,
          created_at: 0,
          created_by: "test",
        });
        const paths = testStore().store.breakerPath();
        let at = 1_000;
        let written = 0;
        const append = async (count: number, sameInstant: boolean): Promise<void> => {
          for (let i = 0; i < count; i += 1) {
            if (!(sameInstant && i % 2 === 1)) at += 1;
            written += 1;
            const record = {
              id: `led_${agent}${String(written).padStart(6, "0")}`,
              tree_id: agent,
              kind: "decision" as const,
              grant_id: "grt_none",
              agent_id: agent,
              outcome: written % 3 === 0 ? "deny" : "allow",
              created_at: at,
              body: { would_outcome: null, reason_code: written % 3 === 0 ? "other" : "decision.allow" },
            };
            await testStore().store.transaction(async (tx) => {
              await sealRecord(tx.decisionPath(), record);
              await tx.breakerPath().insertSignal(record.id, agent, at, written % 3);
            });
          }
        };
        await append(1, false);
        const [first] = await paths.signalsFrom(agent, [0, 0], 1);
        let tail: [number, number] | null = [first!.at, first!.seq];
        const carried = new CarriedWindows();
        for (const op of ops) {
          if ("append" in op) {
            await append(op.append, op.sameInstant);
            continue;
          }
          if ("jump" in op) {
            const all = await paths.signalsFrom(agent, [0, 0], written);
            const to = all[op.jump % all.length]!;
            tail = [to.at, to.seq];
            continue;
          }
          for (let i = 0; i < op.advance && tail !== null; i += 1) {
            const expected = await paths.signalsFrom(agent, tail, 2);
            const got = await carried.tailOf(paths, agent, "w", tail);
            expect(got.map((r) => [r.at, r.seq, r.signal])).toEqual(expected.map((r) => [r.at, r.seq, r.signal]));
            // A window keeps its tail on its last signal until another is written, as `advance` starts again from it.
            tail = got[1] === undefined ? tail : [got[1].at, got[1].seq];
            if (got[1] === undefined) break;
          }
        }
      }),
      { numRuns: 80, seed: Number(process.env["FC_SEED"] ?? 20261129) },
    );
  }, 120_000);
});
