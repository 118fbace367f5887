// Edges of the v1 contract on a real server: the delegation chain limit, settlement of an expired
// hold, and the headers every answer carries (no sniffing, nothing cached).

import { ENGINE_LIMITS } from "@agent-authority/engine";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { certifiedAgent, issueGrant, startDecisionServer, type DecisionServer, type Reply } from "./decisions-http.js";
import { ADMIN_KEY, CERTIFICATION } from "./http-harness.js";
import type { StoreTarget } from "./targets.js";
import type { Decision, Grant } from "@agent-authority/sdk";

const HOUR = 3_600_000;
const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

function expectCode(reply: Reply, status: number, code: string): void {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(reply.body.code).toBe(code);
}

function expectSafetyHeaders(reply: Reply, what: string): void {
  expect(reply.headers.get("x-content-type-options"), what).toBe("nosniff");
  expect(reply.headers.get("cache-control"), what).toBe("no-store");
}

export function edgesHttpSuite(target: StoreTarget): void {
  let s: DecisionServer;
  let agent: { id: string; key: string };
  const pay = (grantId: string, amount: number) => ({
    grant_id: grantId,
    tool: "payments.send",
    amount_minor: amount,
    currency: "EUR",
    attestation: ATTESTATION,
  });
  beforeAll(async () => {
    s = await startDecisionServer(target);
    agent = await certifiedAgent(s, "edge-agent");
  });
  afterAll(async () => {
    await s?.close();
  });

  describe("the delegation chain limit", () => {
    it(`delegates down to link ${ENGINE_LIMITS.chainLinksMax}, which authorizes, and refuses one link more with 422, creating nothing`, async () => {
      let tip = await issueGrant(s, agent.id, { delegation_policy: "attenuating" });
      for (let link = 2; link <= ENGINE_LIMITS.chainLinksMax; link += 1) {
        const child = await s.call<Grant>("POST", `/grants/${tip.id}/delegate`, ADMIN_KEY, { agent_id: agent.id });
        expect(child.status, child.text).toBe(201);
        tip = child.body;
      }
      expect((await s.call("POST", "/authorize", agent.key, pay(tip.id, 1))).body.outcome).toBe("allow");
      const before = await s.db.store.countRows();
      const refused = await s.call("POST", `/grants/${tip.id}/delegate`, ADMIN_KEY, { agent_id: agent.id });
      expectCode(refused, 422, "delegation_chain_too_long");
      expect(refused.body.detail).toContain(String(ENGINE_LIMITS.chainLinksMax));
      expect(await s.db.store.countRows()).toEqual(before);
    });
  });

  describe("settling an expired hold", () => {
    it("is refused with 409 `hold_expired`, so the released amount cannot be spent twice", async () => {
      const grant = await issueGrant(s, agent.id, { budget_amount_minor: 1_000, ttl_hours: 72 });
      const first = await s.call("POST", "/authorize", agent.key, pay(grant.id, 1_000));
      expect(first.body.outcome).toBe("allow");
      s.clock.now += 24 * HOUR;
      const second = await s.call("POST", "/authorize", agent.key, pay(grant.id, 1_000));
      expect(second.body.outcome).toBe("allow");
      const before = await s.db.store.countRows();
      expectCode(
        await s.call("POST", `/decisions/${first.body.ledger_id}/settle`, agent.key, { amount_minor: 1_000 }),
        409,
        "hold_expired",
      );
      expect(await s.db.store.countRows()).toEqual(before);
      expect((await s.call("POST", `/decisions/${second.body.ledger_id}/settle`, agent.key, { amount_minor: 1_000 })).status).toBe(200);
      expect((await s.call("GET", `/grants/${grant.id}`, ADMIN_KEY)).body).toMatchObject({ settled_minor: 1_000, held_minor: 0 });
      expect((await s.call("GET", "/ledger/verify", ADMIN_KEY)).body.ok).toBe(true);
    });

    it("never lets settled plus held spend exceed the budget, whatever the order of decisions, settlements and time", async () => {
      // Each step authorizes, may wait short of or past the 24-hour hold lifetime, and may settle an earlier allow.
      const step = fc.record({
        amount: fc.integer({ min: 300, max: 700 }),
        waitHours: fc.constantFrom(0, 12, 25),
        settle: fc.option(fc.record({ pick: fc.nat({ max: 5 }), percent: fc.integer({ min: 1, max: 100 }) }), { nil: undefined }),
      });
      const budget = 1_000;
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 6 }), async (steps) => {
          const grant = await issueGrant(s, agent.id, { budget_amount_minor: budget, ttl_hours: 8_000 });
          const allowed: { ledgerId: string; amount: number }[] = [];
          for (const each of steps) {
            const decision = await s.call<Decision>("POST", "/authorize", agent.key, pay(grant.id, each.amount));
            expect(decision.status).toBe(200);
            if (decision.body.outcome === "allow") allowed.push({ ledgerId: decision.body.ledger_id, amount: each.amount });
            s.clock.now += each.waitHours * HOUR;
            if (each.settle !== undefined && allowed.length > 0) {
              const held = allowed[each.settle.pick % allowed.length]!;
              const settled = await s.call("POST", `/decisions/${held.ledgerId}/settle`, agent.key, {
                amount_minor: Math.floor((held.amount * each.settle.percent) / 100),
              });
              expect([200, 409], settled.text).toContain(settled.status);
            }
            const view = (await s.call<Grant>("GET", `/grants/${grant.id}`, ADMIN_KEY)).body;
            expect(view.settled_minor + view.held_minor).toBeLessThanOrEqual(budget);
          }
        }),
        { numRuns: 30 },
      );
      expect((await s.call("GET", "/ledger/verify", ADMIN_KEY)).body.ok).toBe(true);
    });
  });

  describe("headers of every answer", () => {
    it("no answer may be sniffed or kept in a cache, a key's secret above all", async () => {
      const created = await s.call("POST", "/keys", ADMIN_KEY, { identity: "fresh@example.com", kind: "human", roles: ["auditor"] });
      expect(created.status).toBe(201);
      expect(typeof created.body.key).toBe("string");
      expectSafetyHeaders(created, "POST /keys");
      const keyed = { "idempotency-key": "key-creation-1" };
      const body = { identity: "replayed@example.com", kind: "human", roles: ["auditor"] };
      expectSafetyHeaders(await s.call("POST", "/keys", ADMIN_KEY, body, keyed), "POST /keys with an idempotency key");
      expectSafetyHeaders(await s.call("POST", "/keys", ADMIN_KEY, body, keyed), "POST /keys replayed");
      const grant = await issueGrant(s, agent.id);
      const answers: [string, Reply][] = [
        ["authorize", await s.call("POST", "/authorize", agent.key, pay(grant.id, 1))],
        ["authorize refused", await s.call("POST", "/authorize", "aa_wrong-key-00000000000000000000000000", pay(grant.id, 1))],
        ["authorize bad body", await s.call("POST", "/authorize", agent.key, { grant_id: grant.id })],
        ["grant", await s.call("GET", `/grants/${grant.id}`, ADMIN_KEY)],
        ["health", await s.call("GET", "/health", ADMIN_KEY)],
        ["openapi", await s.call("GET", "/openapi.json", ADMIN_KEY)],
        ["unknown route", await s.call("GET", "/nowhere", ADMIN_KEY)],
        ["wrong method", await s.call("DELETE", "/grants", ADMIN_KEY)],
      ];
      for (const [what, reply] of answers) expectSafetyHeaders(reply, what);
    });
  });
}
