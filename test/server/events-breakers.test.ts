// The events of contracts and breakers: a trip in observe says what it would have done, an armed
// trip says what it did, with the declarer's name; `contract.breached`, `breaker.armed`,
// `finding.raised` and the revocation of the agent's grants with their subtrees, each once.

import { afterAll, beforeAll, expect, it } from "vitest";
import { ADMIN_KEY, CERTIFICATION } from "./http-harness.js";
import { certifiedAgent, issueGrant, startDecisionServer, type DecisionServer } from "./decisions-http.js";
import { forEachStore, type StoreTarget } from "./targets.js";
import type { Counterfactual, KeyCreated } from "@agent-authority/sdk";

const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

function breakerEventsSuite(target: StoreTarget): void {
  let s: DecisionServer;
  let approverKey: string;
  let declarerKey: string;
  beforeAll(async () => {
    s = await startDecisionServer(target);
    approverKey = (
      await s.call<KeyCreated>("POST", "/keys", ADMIN_KEY, { identity: "risk@example.com", kind: "human", roles: ["approver"] })
    ).body.key;
    declarerKey = (await s.call<KeyCreated>("POST", "/keys", ADMIN_KEY, { identity: "dana@example.com", kind: "human", roles: ["issuer"] }))
      .body.key;
  });
  afterAll(async () => {
    await s?.close();
  });

  async function decide(agent: { key: string }, grantId: string, allow: boolean): Promise<void> {
    s.clock.now += 1_000;
    const reply = await s.call("POST", "/authorize", agent.key, {
      grant_id: grantId,
      tool: allow ? "payments.send" : "mail.send",
      attestation: ATTESTATION,
    });
    expect(reply.status).toBe(200);
  }

  async function eventsSince(seq: number) {
    return s.db.store.eventPath().eventsAfter(seq, 1_000);
  }

  it("an observing trip says what it would revoke and touches nothing; an armed one revokes and says so", async () => {
    const agent = await certifiedAgent(s, "events-breaker");
    const root = await issueGrant(s, agent.id, { delegation_policy: "attenuating" });
    const child = (await s.call("POST", `/grants/${root.id}/delegate`, ADMIN_KEY, { agent_id: agent.id })).body;
    const contract = (
      await s.call("POST", `/agents/${agent.id}/contracts`, declarerKey, { metric: "refusal_rate", ceiling: 0.05, window_decisions: 10 })
    ).body;
    const observing = (await s.call("POST", `/agents/${agent.id}/breakers`, ADMIN_KEY, { contract_id: contract.id, action: "revoke" }))
      .body;
    // Ids sort by time: a later millisecond makes the notifying breaker's id, and its evaluation, second.
    s.clock.now += 1;
    const notifying = (await s.call("POST", `/agents/${agent.id}/breakers`, ADMIN_KEY, { contract_id: contract.id, action: "notify" }))
      .body;
    s.clock.now += 1;
    const start = await s.db.store.eventPath().lastSeq();
    expect((await s.call("POST", `/breakers/${notifying.id}/arm`, approverKey, { basis: "fresh agent", expecting_trips: 0 })).status).toBe(
      200,
    );
    for (let i = 0; i < 5; i += 1) await decide(agent, root.id, true);
    for (let i = 0; i < 6; i += 1) await decide(agent, root.id, false);
    const events = await eventsSince(start);
    // Breakers are evaluated in id order: the observing one (created first) trips first.
    expect(events.map((e) => e.type)).toEqual([
      "breaker.armed",
      "contract.breached",
      "breaker.tripped",
      "finding.raised",
      "breaker.tripped",
    ]);
    expect(events[0]!.data).toMatchObject({
      breaker_id: notifying.id,
      armed_by: "risk@example.com",
      expecting_trips: 0,
      basis: "fresh agent",
    });
    expect(events[1]!.data).toMatchObject({ contract_id: contract.id, declared_by: "dana@example.com", agent_id: agent.id });
    const trips = events.filter((e) => e.type === "breaker.tripped");
    const observed = trips.find((e) => e.subject === observing.id)!;
    expect(observed.data).toMatchObject({ action: "revoke", mode: "observe", performed: false, declared_by: "dana@example.com" });
    expect([...(observed.data["would"] as { revoke: string[] }).revoke].sort()).toEqual([root.id, child.id].sort());
    const notified = trips.find((e) => e.subject === notifying.id)!;
    expect(notified.data).toMatchObject({
      action: "notify",
      mode: "armed",
      performed: true,
      would: { raise_finding: true },
      declared_by: "dana@example.com",
    });
    expect(events[3]!.data).toMatchObject({ finding_id: notified.data["finding_id"], breaker_id: notifying.id });
    // Observe changed nothing.
    expect((await s.call("GET", `/grants/${root.id}`, ADMIN_KEY)).body.status).toBe("active");

    // Armed revoke: one grant.revoked for the root with its whole subtree, named after the breaker.
    const disarmed = await s.call("POST", `/breakers/${notifying.id}/disarm`, approverKey, { reason: "one at a time" });
    expect(disarmed.status).toBe(200);
    for (let i = 0; i < 20; i += 1) await decide(agent, root.id, true);
    const cf = (await s.call<Counterfactual>("GET", `/agents/${agent.id}/breakers/counterfactual?breaker_id=${observing.id}`, ADMIN_KEY))
      .body;
    expect(
      (await s.call("POST", `/breakers/${observing.id}/arm`, approverKey, { basis: "reviewed", expecting_trips: cf.breakers[0].trips }))
        .status,
    ).toBe(200);
    const armedAt = await s.db.store.eventPath().lastSeq();
    for (let i = 0; i < 6; i += 1) await decide(agent, root.id, false);
    const after = await eventsSince(armedAt);
    const revoked = after.filter((e) => e.type === "grant.revoked");
    expect(revoked).toHaveLength(1);
    expect(revoked[0]!.data).toMatchObject({ grant_id: root.id, revoked_by: observing.id, breaker_id: observing.id });
    expect([...(revoked[0]!.data["revoked"] as string[])].sort()).toEqual([root.id, child.id].sort());
    const trip = after.find((e) => e.type === "breaker.tripped" && e.subject === observing.id)!;
    expect(trip.data).toMatchObject({ mode: "armed", performed: true, declared_by: "dana@example.com" });
    expect(after.filter((e) => e.type === "contract.breached")).toHaveLength(1);
  });
}

forEachStore("breaker events", breakerEventsSuite);
