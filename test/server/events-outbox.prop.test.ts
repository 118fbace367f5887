// The outbox's property: over random programs of effects sent through the HTTP API, every
// committed effect has exactly its event, in commit order, and no rolled-back effect has one. The
// rollbacks are real: a trigger refuses every event of a "doomed" agent, on PostgreSQL deferred to
// COMMIT (after the events were numbered), so the whole transaction of the effect is undone late.

import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ADMIN_KEY, CERTIFICATION } from "./http-harness.js";
import { startDecisionServer, type DecisionServer } from "./decisions-http.js";
import { forEachStore, type StoreTarget } from "./targets.js";
import type { Agent, Certificate, Decision, Grant, KeyCreated } from "@agent-authority/sdk";

const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

async function installDoomTrigger(s: DecisionServer, target: StoreTarget): Promise<void> {
  if (target.name === "sqlite") {
    await s.db.raw(`CREATE TRIGGER doomed_events AFTER INSERT ON events
      WHEN NEW.agent_id IN (SELECT id FROM agents WHERE name LIKE 'doomed%')
      BEGIN SELECT RAISE(ABORT, 'doomed agent'); END`);
    return;
  }
  await s.db.raw(`CREATE FUNCTION doomed_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.agent_id IN (SELECT id FROM agents WHERE name LIKE 'doomed%') THEN RAISE EXCEPTION 'doomed agent'; END IF;
      RETURN NULL;
    END $$`);
  // Deferred: it runs at COMMIT, after the transaction's events were numbered.
  await s.db.raw(`CREATE CONSTRAINT TRIGGER doomed_events AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION doomed_event()`);
}

type Op =
  | { kind: "issue"; agent: number; pending: boolean; observe: boolean }
  | { kind: "approve"; grant: number }
  | { kind: "delegate"; grant: number }
  | { kind: "escalate"; grant: number }
  | { kind: "revoke"; grant: number }
  | { kind: "certify"; agent: number }
  | { kind: "revokeCertificate"; agent: number }
  | { kind: "gate"; grant: number }
  | { kind: "approveDecision"; decision: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("issue" as const), agent: fc.nat(3), pending: fc.boolean(), observe: fc.boolean() }),
  fc.record({ kind: fc.constant("approve" as const), grant: fc.nat(20) }),
  fc.record({ kind: fc.constant("delegate" as const), grant: fc.nat(20) }),
  fc.record({ kind: fc.constant("escalate" as const), grant: fc.nat(20) }),
  fc.record({ kind: fc.constant("revoke" as const), grant: fc.nat(20) }),
  fc.record({ kind: fc.constant("certify" as const), agent: fc.nat(3) }),
  fc.record({ kind: fc.constant("revokeCertificate" as const), agent: fc.nat(3) }),
  { arbitrary: fc.record({ kind: fc.constant("gate" as const), grant: fc.nat(20) }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant("approveDecision" as const), decision: fc.nat(10) }), weight: 3 },
);

interface World {
  agents: { id: string; key: string; doomed: boolean; certificate: string | null }[];
  grants: { id: string; agent: number }[];
  decisions: string[];
}

/** What an answer means for the outbox: the events it must have written, in order. */
type Expected = { type: string; subject: string }[];

export function outboxSuite(target: StoreTarget): void {
  let s: DecisionServer;
  let approverKey: string;
  beforeAll(async () => {
    s = await startDecisionServer(target);
    approverKey = (
      await s.call<KeyCreated>("POST", "/keys", ADMIN_KEY, { identity: "approver@example.com", kind: "human", roles: ["approver"] })
    ).body.key;
    await installDoomTrigger(s, target);
  });
  afterAll(async () => {
    await s?.close();
  });

  async function newWorld(run: number, expected: Expected = []): Promise<World> {
    const world: World = { agents: [], grants: [], decisions: [] };
    for (let i = 0; i < 4; i += 1) {
      const doomed = i % 2 === 1;
      const name = `${doomed ? "doomed" : "fine"}-${run}-${i}`;
      const agent = (await s.call<Agent>("POST", "/agents", ADMIN_KEY, { name })).body;
      const key = (
        await s.call<KeyCreated>("POST", "/keys", ADMIN_KEY, {
          identity: `${name}-key`,
          kind: "service",
          roles: ["agent"],
          agent_id: agent.id,
        })
      ).body.key;
      world.agents.push({ id: agent.id, key, doomed, certificate: null });
      // The agents that can be certified are, so that refusing modes are reachable.
      if (!doomed) expected.push(...(await apply(world, { kind: "certify", agent: i })));
    }
    return world;
  }

  /** Runs one operation; answers the events it must have written (none when it failed). */
  async function apply(world: World, op: Op): Promise<Expected> {
    s.clock.now += 1_000;
    const grant = "grant" in op ? world.grants[op.grant % Math.max(1, world.grants.length)] : undefined;
    if ("grant" in op && grant === undefined) return [];
    const agentOf = (i: number) => world.agents[i]!;
    switch (op.kind) {
      case "issue": {
        const agent = agentOf(op.agent);
        const r = await s.call<Grant>("POST", "/grants", ADMIN_KEY, {
          agent_id: agent.id,
          principal_type: "human",
          principal_id: "p@example.com",
          scope: { tool: ["payments.*"] },
          budget_amount_minor: 1_000,
          budget_currency: "EUR",
          delegation_policy: "attenuating",
          policy: 'amount_minor < 500 || approver == "approver@example.com"',
          enforcement_mode: op.observe ? "observe" : "enforce",
          ...(op.pending ? { require_approval: true } : {}),
        });
        if (r.status !== 201) return [];
        world.grants.push({ id: r.body.id, agent: op.agent });
        return [{ type: "grant.issued", subject: r.body.id }];
      }
      case "approve": {
        const r = await s.call("POST", `/grants/${grant!.id}/approve`, approverKey, {});
        return r.status === 200 ? [{ type: "grant.approved", subject: grant!.id }] : [];
      }
      case "delegate": {
        const r = await s.call<Grant>("POST", `/grants/${grant!.id}/delegate`, ADMIN_KEY, { agent_id: agentOf(grant!.agent).id });
        if (r.status !== 201) return [];
        world.grants.push({ id: r.body.id, agent: grant!.agent });
        return [{ type: "grant.delegated", subject: r.body.id }];
      }
      case "escalate": {
        const r = await s.call("POST", `/grants/${grant!.id}/enforcement`, ADMIN_KEY, { enforcement_mode: "enforce" });
        return r.status === 200 ? [{ type: "grant.enforcement_changed", subject: grant!.id }] : [];
      }
      case "revoke": {
        const r = await s.call("POST", `/grants/${grant!.id}/revoke`, ADMIN_KEY, {});
        return r.status === 200 ? [{ type: "grant.revoked", subject: grant!.id }] : [];
      }
      case "certify": {
        const agent = agentOf(op.agent);
        const r = await s.call<Certificate>("POST", `/agents/${agent.id}/certification`, ADMIN_KEY, CERTIFICATION);
        if (r.status !== 201) return [];
        const before = agent.certificate;
        agent.certificate = r.body.id;
        return [
          ...(before === null ? [] : [{ type: "certificate.revoked", subject: before }]),
          { type: "certificate.issued", subject: r.body.id },
        ];
      }
      case "revokeCertificate": {
        const agent = agentOf(op.agent);
        if (agent.certificate === null) return [];
        const r = await s.call("POST", `/certificates/${agent.certificate}/revoke`, ADMIN_KEY, {});
        if (r.status !== 200) return [];
        const revoked = agent.certificate;
        agent.certificate = null;
        return [{ type: "certificate.revoked", subject: revoked }];
      }
      case "gate": {
        const agent = agentOf(grant!.agent);
        const r = await s.call<Decision>("POST", "/authorize", agent.key, {
          grant_id: grant!.id,
          tool: "payments.send",
          amount_minor: 700,
          currency: "EUR",
          attestation: ATTESTATION,
        });
        if (r.status !== 200 || r.body.outcome !== "gated") return [];
        // Only a decision its policy gated can be approved by a human; one gated by a pending grant waits for the grant.
        if (r.body.decided_by === "policy") world.decisions.push(r.body.ledger_id);
        return [{ type: "decision.gated", subject: r.body.ledger_id }];
      }
      case "approveDecision": {
        const ledgerId = world.decisions[op.decision % Math.max(1, world.decisions.length)];
        if (ledgerId === undefined) return [];
        const r = await s.call("POST", `/decisions/${ledgerId}/approve`, approverKey, {});
        return r.status === 201 ? [{ type: "decision.approved", subject: ledgerId }] : [];
      }
    }
  }

  it("writes exactly the events of committed effects, in commit order, numbered without gaps", async () => {
    let run = 0;
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 10, maxLength: 40 }), async (ops) => {
        run += 1;
        const before = await s.db.store.eventPath().lastSeq();
        const expected: Expected = [];
        const world = await newWorld(run, expected);
        for (const op of ops) {
          const events = await apply(world, op);
          expected.push(...events);
          for (const e of events) seen.add(e.type);
        }
        const written = await s.db.store.eventPath().eventsAfter(before, 10_000);
        expect(written.map((e) => ({ type: e.type, subject: e.subject }))).toEqual(expected);
        expect(written.map((e) => e.seq)).toEqual(expected.map((_, i) => before + i + 1));
        // No event of a doomed agent ever commits; their effects are undone with them.
        const doomed = new Set(world.agents.filter((a) => a.doomed).map((a) => a.id));
        expect(written.filter((e) => e.agent_id !== null && doomed.has(e.agent_id))).toEqual([]);
        for (const g of world.grants) expect(world.agents[g.agent]!.doomed).toBe(false);
      }),
      { numRuns: 15, seed: 3601 },
    );
    // The programs reached every kind of effect, so the property was tested on each.
    expect([...seen].sort()).toEqual([
      "certificate.issued",
      "certificate.revoked",
      "decision.approved",
      "decision.gated",
      "grant.approved",
      "grant.delegated",
      "grant.enforcement_changed",
      "grant.issued",
      "grant.revoked",
    ]);
  });

  it("rolls back a doomed agent's effect with its event: no grant, no certificate", async () => {
    const world = await newWorld(999);
    const doomed = world.agents[1]!;
    const before = await s.db.store.countRows();
    const issued = await s.call("POST", "/grants", ADMIN_KEY, {
      agent_id: doomed.id,
      principal_type: "human",
      principal_id: "p@example.com",
      scope: { tool: ["payments.*"] },
      enforcement_mode: "observe",
    });
    expect(issued.status).toBe(500);
    const certified = await s.call("POST", `/agents/${doomed.id}/certification`, ADMIN_KEY, CERTIFICATION);
    expect(certified.status).toBe(500);
    const after = await s.db.store.countRows();
    expect(after["grants"]).toBe(before["grants"]);
    expect(after["certificates"]).toBe(before["certificates"]);
    expect(after["events"]).toBe(before["events"]);
  });
}

forEachStore("events outbox", outboxSuite);
