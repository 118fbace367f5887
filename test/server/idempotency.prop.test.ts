// The law of Idempotency-Key as a property, on both databases: for any sequence of requests drawn
// from a few keys and bodies, with the clock moved to and across the expiry edge between them, the
// server answers as the model says (replay the live answer of the same request, refuse another
// request under a live key, run anew under a free or expired key) and makes one grant per fresh run.

import fc from "fast-check";
import { IDEMPOTENCY_LIMITS } from "@agent-authority/server";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ADMIN_KEY } from "./http-harness.js";
import { certifiedAgent, startDecisionServer, type DecisionServer } from "./decisions-http.js";
import { forEachStore, type StoreTarget } from "./targets.js";

const RETENTION = IDEMPOTENCY_LIMITS.retentionMs;

interface Step {
  readonly key: number;
  readonly body: number;
  readonly advanceMs: number;
}

const step: fc.Arbitrary<Step> = fc.record({
  key: fc.integer({ min: 0, max: 2 }),
  body: fc.integer({ min: 0, max: 1 }),
  advanceMs: fc.constantFrom(0, 0, 1, RETENTION - 1, RETENTION),
});

/** What the model keeps of a key: the request it answered, when, and the answer's exact text. */
interface Kept {
  readonly body: number;
  readonly at: number;
  readonly text: string;
}

function lawSuite(target: StoreTarget): void {
  let s: DecisionServer;
  let agentId: string;
  let run = 0;
  beforeAll(async () => {
    s = await startDecisionServer(target);
    agentId = (await certifiedAgent(s, "idem-law")).id;
  });
  afterAll(async () => {
    await s?.close();
  });

  const grantBody = (body: number) => ({
    agent_id: agentId,
    principal_type: "human",
    principal_id: `principal-${body}@example.com`,
    scope: { tool: ["payments.*"] },
    budget_amount_minor: 1000,
    budget_currency: "EUR",
  });

  it("answers every sequence of keyed requests as the model does, with one grant per fresh run", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        run += 1;
        const model = new Map<number, Kept>();
        let fresh = 0;
        const before = (await s.db.store.countRows())["grants"]!;
        for (const { key, body, advanceMs } of steps) {
          s.clock.now += advanceMs;
          const reply = await s.call("POST", "/grants", ADMIN_KEY, grantBody(body), { "idempotency-key": `law-${run}-${key}` });
          const kept = model.get(key);
          const live = kept !== undefined && s.clock.now < kept.at + RETENTION;
          if (live && kept.body === body) {
            expect(reply.text).toBe(kept.text);
            expect(reply.headers.get("idempotent-replayed")).toBe("true");
          } else if (live) {
            expect(reply.status).toBe(422);
            expect(reply.body.code).toBe("idempotency_key_reused");
          } else {
            expect(reply.status, reply.text).toBe(201);
            expect(reply.headers.get("idempotent-replayed")).toBeNull();
            model.set(key, { body, at: s.clock.now, text: reply.text });
            fresh += 1;
          }
        }
        expect((await s.db.store.countRows())["grants"]! - before).toBe(fresh);
      }),
      { numRuns: 25 },
    );
  });
}

forEachStore("the Idempotency-Key law", lawSuite);
