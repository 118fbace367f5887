// Behavioural contracts and circuit breakers over HTTP against a real server, on decision histories
// with known answers made through POST /v1/authorize on a clock the test moves.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, CERTIFICATION } from "./http-harness.js";
import { certifiedAgent, issueGrant, startDecisionServer, type DecisionServer } from "./decisions-http.js";
import type { StoreTarget } from "./targets.js";
import type { Breaker, Contract, ContractList, Counterfactual, Decision, FindingList, Grant, KeyCreated, Trip } from "@agent-authority/sdk";

type Finding = FindingList["findings"][number];
type BreakerEvent = NonNullable<Breaker["history"]>[number];

const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

type Agent = { id: string; key: string };

export function breakersHttpSuite(target: StoreTarget): void {
  let s: DecisionServer;
  let approverKey: string;
  beforeAll(async () => {
    s = await startDecisionServer(target);
    approverKey = (
      await s.call<KeyCreated>("POST", "/keys", ADMIN_KEY, { identity: "risk@example.com", kind: "human", roles: ["approver"] })
    ).body.key;
  });
  afterAll(async () => {
    await s?.close();
  });

  /** One decision a second: `allow` in scope, `deny` (scope.out_of_scope) outside it. */
  async function decide(agent: Agent, grantId: string, allow: boolean): Promise<Decision> {
    s.clock.now += 1_000;
    const reply = await s.call<Decision>("POST", "/authorize", agent.key, {
      grant_id: grantId,
      tool: allow ? "payments.send" : "mail.send",
      attestation: ATTESTATION,
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body;
  }

  async function run(agent: Agent, grantId: string, pattern: readonly [number, boolean][]): Promise<void> {
    for (const [count, allow] of pattern) for (let i = 0; i < count; i += 1) await decide(agent, grantId, allow);
  }

  async function contract(agentId: string, body: Record<string, unknown>, key = ADMIN_KEY): Promise<Contract> {
    const reply = await s.call<Contract>("POST", `/agents/${agentId}/contracts`, key, body);
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    return reply.body;
  }

  async function breaker(agentId: string, contractId: string, action: "notify" | "revoke"): Promise<Breaker> {
    const reply = await s.call<Breaker>("POST", `/agents/${agentId}/breakers`, ADMIN_KEY, { contract_id: contractId, action });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    expect(reply.body.mode).toBe("observe");
    return reply.body;
  }

  const attenuating = { delegation_policy: "attenuating" };

  describe("contracts", () => {
    it("keeps 40 decisions slightly above the ceiling not_demonstrated, and never trips on it", async () => {
      const agent = await certifiedAgent(s, "noisy");
      const grant = await issueGrant(s, agent.id);
      const c = await contract(agent.id, { metric: "refusal_rate", ceiling: 0.1, window_decisions: 40 });
      expect(c).toMatchObject({ status: "not_demonstrated", n: 0, rate: null, declared_by: "admin" });
      const b = await breaker(agent.id, c.id, "revoke");
      // 5 refusals in 40 decisions measure 12.5% against a 10% ceiling.
      await run(agent, grant.id, [
        [7, true],
        [1, false],
        [7, true],
        [1, false],
        [7, true],
        [1, false],
        [7, true],
        [1, false],
        [7, true],
        [1, false],
      ]);
      const list = await s.call<ContractList>("GET", `/agents/${agent.id}/contracts`, ADMIN_KEY);
      expect(list.body.contracts).toHaveLength(1);
      const read = list.body.contracts[0];
      expect(read).toMatchObject({ status: "not_demonstrated", n: 40, successes: 5, rate: 0.125 });
      expect(read.interval.lower).toBeCloseTo(0.0546, 3);
      expect(read.interval.upper).toBeCloseTo(0.261, 3);
      expect((await s.call("GET", `/breakers/${b.id}`, ADMIN_KEY)).body.trips).toEqual([]);
      expect((await s.call("GET", `/grants/${grant.id}`, ADMIN_KEY)).body.status).toBe("active");
    });

    it("needs exactly one window, and names its declarer", async () => {
      const agent = await certifiedAgent(s, "windows");
      const both = await s.call("POST", `/agents/${agent.id}/contracts`, ADMIN_KEY, {
        metric: "deny_rate",
        ceiling: 0.2,
        window_decisions: 10,
        window_hours: 1,
      });
      expect(both.status).toBe(400);
      const none = await s.call("POST", `/agents/${agent.id}/contracts`, ADMIN_KEY, { metric: "deny_rate", ceiling: 0.2 });
      expect(none.status).toBe(400);
      expect(
        (await s.call("POST", `/agents/${agent.id}/contracts`, ADMIN_KEY, { metric: "deny_rate", ceiling: 1.5, window_hours: 1 })).status,
      ).toBe(400);
      const c = await contract(agent.id, { metric: "deny_rate", ceiling: 0.2, window_hours: 24 }, approverKey);
      expect(c).toMatchObject({ declared_by: "risk@example.com", window_hours: 24, window_decisions: null });
    });
  });

  describe("trips", () => {
    it("trips once on a clear breach, not on every following decision, and observe changes nothing", async () => {
      const agent = await certifiedAgent(s, "breacher");
      const helper = await certifiedAgent(s, "breacher-helper");
      const root = await issueGrant(s, agent.id, attenuating);
      const second = await issueGrant(s, agent.id);
      const child = await s.call("POST", `/grants/${root.id}/delegate`, ADMIN_KEY, { agent_id: helper.id });
      expect(child.status).toBe(201);
      const c = await contract(agent.id, { metric: "out_of_scope_rate", ceiling: 0.1, window_decisions: 20 });
      const b = await breaker(agent.id, c.id, "revoke");
      const notify = await breaker(agent.id, c.id, "notify");
      await run(agent, root.id, [[10, true]]);
      const ids = [root.id, second.id, child.body.id];
      const view = async () => Promise.all(ids.map(async (id) => (await s.call("GET", `/grants/${id}`, ADMIN_KEY)).body));
      const before = await view();
      const rowsBefore = await s.db.store.countRows();
      const trips = async (action: string): Promise<number> => {
        const text = (await s.call("GET", "/metrics", ADMIN_KEY)).text;
        return Number(
          /^authority_breaker_trips_total\{action="(\w+)",mode="observe"\} (\d+)$/m.exec(
            text
              .split("\n")
              .filter((l) => l.includes(`action="${action}",mode="observe"`))
              .join("\n"),
          )?.[2],
        );
      };
      const tripsBefore = { revoke: await trips("revoke"), notify: await trips("notify") };
      await run(agent, root.id, [[30, false]]);
      // Each breaker's one trip is counted by its action and mode in /v1/metrics.
      expect({ revoke: await trips("revoke"), notify: await trips("notify") }).toEqual({
        revoke: tripsBefore.revoke + 1,
        notify: tripsBefore.notify + 1,
      });
      // Refusals count no use: the grants read exactly as before, and no grant event was written.
      expect(await view()).toEqual(before);
      const rowsAfter = await s.db.store.countRows();
      expect(rowsAfter["grant_events"]).toBe(rowsBefore["grant_events"]);
      expect(rowsAfter["findings"]).toBe(rowsBefore["findings"]);
      const got = (await s.call<Breaker>("GET", `/breakers/${b.id}`, ADMIN_KEY)).body;
      expect(got.mode).toBe("observe");
      expect(got.contract?.status).toBe("breached");
      expect(got.trips).toHaveLength(1);
      expect(got.trips[0]).toMatchObject({ mode: "observe", action: "revoke", performed: false, declared_by: "admin" });
      expect([...got.trips[0].grant_ids].sort()).toEqual([...ids].sort());
      const n = (await s.call<Breaker>("GET", `/breakers/${notify.id}`, ADMIN_KEY)).body;
      expect(n.trips).toHaveLength(1);
      expect(n.trips[0]).toMatchObject({ mode: "observe", action: "notify", grant_ids: [], finding_id: null });
      expect((await s.call("GET", `/findings?agent_id=${agent.id}`, ADMIN_KEY)).body.findings).toEqual([]);
      expect((await decide(agent, root.id, true)).outcome).toBe("allow");
    });

    it("armed revoke revokes every grant of the agent through three levels of delegation", async () => {
      const agent = await certifiedAgent(s, "cascade-root");
      const b1 = await certifiedAgent(s, "cascade-1");
      const b2 = await certifiedAgent(s, "cascade-2");
      const b3 = await certifiedAgent(s, "cascade-3");
      const root = await issueGrant(s, agent.id, attenuating);
      const l1 = (await s.call("POST", `/grants/${root.id}/delegate`, ADMIN_KEY, { agent_id: b1.id })).body;
      const l2 = (await s.call("POST", `/grants/${l1.id}/delegate`, ADMIN_KEY, { agent_id: b2.id })).body;
      const l3 = (await s.call<Grant>("POST", `/grants/${l2.id}/delegate`, ADMIN_KEY, { agent_id: b3.id })).body;
      expect(l3.id).toMatch(/^grt_/);
      expect((await decide(b3, l3.id, true)).outcome).toBe("allow");
      const c = await contract(agent.id, { metric: "refusal_rate", ceiling: 0.05, window_decisions: 10 });
      const b = await breaker(agent.id, c.id, "revoke");
      const cf = await s.call("GET", `/agents/${agent.id}/breakers/counterfactual?breaker_id=${b.id}`, ADMIN_KEY);
      expect(cf.body).toEqual({ window_days: 90, breakers: [{ breaker_id: b.id, trips: 0, trip_times: [] }] });
      const armed = await s.call("POST", `/breakers/${b.id}/arm`, approverKey, {
        basis: "no trips in 90 days of history",
        expecting_trips: 0,
      });
      expect(armed.status, JSON.stringify(armed.body)).toBe(200);
      expect(armed.body).toMatchObject({ mode: "armed", armed_by: "risk@example.com", expecting_trips: 0 });
      await run(agent, root.id, [
        [5, true],
        [6, false],
      ]);
      const got = (await s.call<Breaker>("GET", `/breakers/${b.id}`, ADMIN_KEY)).body;
      expect(got.trips).toHaveLength(1);
      expect(got.trips[0]).toMatchObject({ mode: "armed", performed: true, declared_by: "admin", armed_by: "risk@example.com" });
      expect([...got.trips[0].grant_ids].sort()).toEqual([root.id, l1.id, l2.id, l3.id].sort());
      for (const id of [root.id, l1.id, l2.id, l3.id]) {
        const g = (await s.call("GET", `/grants/${id}`, ADMIN_KEY)).body;
        expect(g).toMatchObject({ status: "revoked", revoked_by: b.id });
      }
      const next = await decide(b3, l3.id, true);
      expect(next).toMatchObject({ outcome: "deny", reason_code: "status.revoked" });
      expect((await decide(agent, root.id, true)).outcome).toBe("deny");
    });
  });

  describe("counterfactual and arming", () => {
    // Three bursts of refusals, each well past the ceiling, each followed by a clean run.
    const pattern: [number, boolean][] = [
      [15, false],
      [30, true],
      [15, false],
      [30, true],
      [15, false],
      [30, true],
    ];
    const spec = { metric: "refusal_rate", ceiling: 0.2, window_decisions: 20 };

    it("equals the trips an armed breaker then performs on the same history replayed live", async () => {
      const first = await certifiedAgent(s, "replay-a");
      const firstGrant = await issueGrant(s, first.id);
      const c1 = await contract(first.id, spec);
      const observed = await breaker(first.id, c1.id, "notify");
      await run(first, firstGrant.id, pattern);
      const cf = (await s.call<Counterfactual>("GET", `/agents/${first.id}/breakers/counterfactual`, ADMIN_KEY)).body;
      expect(cf.window_days).toBe(90);
      expect(cf.breakers).toHaveLength(1);
      expect(cf.breakers[0].trips).toBe(3);
      // The breaker in observe tripped live at exactly the replayed times.
      const live = (await s.call<Breaker>("GET", `/breakers/${observed.id}`, ADMIN_KEY)).body.trips;
      expect(live.map((t: Trip) => t.at)).toEqual(cf.breakers[0].trip_times);

      const wrong = await s.call("POST", `/breakers/${observed.id}/arm`, approverKey, { basis: "reviewed", expecting_trips: 2 });
      expect(wrong.status).toBe(409);
      expect(wrong.body.code).toBe("trip_count_mismatch");
      expect(JSON.stringify(wrong.body)).not.toMatch(/\b3\b/);
      expect((await s.call("GET", `/breakers/${observed.id}`, ADMIN_KEY)).body.mode).toBe("observe");

      const second = await certifiedAgent(s, "replay-b");
      const secondGrant = await issueGrant(s, second.id);
      const c2 = await contract(second.id, spec);
      const armed = await breaker(second.id, c2.id, "notify");
      s.clock.now += 1;
      expect((await s.call("POST", `/breakers/${armed.id}/arm`, approverKey, { basis: "fresh agent", expecting_trips: 0 })).status).toBe(
        200,
      );
      await run(second, secondGrant.id, pattern);
      const trips = (await s.call<Breaker>("GET", `/breakers/${armed.id}`, ADMIN_KEY)).body.trips;
      expect(trips).toHaveLength(cf.breakers[0].trips);
      expect(trips.every((t: Trip) => t.performed && t.finding_id !== null)).toBe(true);
      const findings = (await s.call<FindingList>("GET", `/findings?agent_id=${second.id}`, ADMIN_KEY)).body.findings;
      expect(findings).toHaveLength(3);
      expect(findings[0]).toMatchObject({ kind: "breaker_trip", breaker_id: armed.id, detail: { declared_by: "admin" } });
      const page = (await s.call<FindingList>("GET", `/findings?agent_id=${second.id}&limit=2`, ADMIN_KEY)).body;
      expect(page.findings.map((f: Finding) => f.id)).toEqual(findings.slice(0, 2).map((f: Finding) => f.id));
      const rest = (await s.call("GET", `/findings?agent_id=${second.id}&limit=2&after=${page.next_after}`, ADMIN_KEY)).body;
      expect(rest).toEqual({ findings: [findings[2]], next_after: null });
      // A breaker of another agent is not found under this one.
      const foreign = await s.call("GET", `/agents/${first.id}/breakers/counterfactual?breaker_id=${armed.id}`, ADMIN_KEY);
      expect(foreign.body.code).toBe("breaker_not_found");
      // Notify touches no authority.
      expect((await s.call("GET", `/grants/${secondGrant.id}`, ADMIN_KEY)).body.status).toBe("active");

      const disarmed = await s.call<Breaker>("POST", `/breakers/${armed.id}/disarm`, approverKey, { reason: "tuning the ceiling" });
      expect(disarmed.body.mode).toBe("observe");
      expect((await s.call("POST", `/breakers/${armed.id}/disarm`, approverKey, {})).body.code).toBe("breaker_not_armed");
      expect(disarmed.body.history?.map((h: BreakerEvent) => h.kind)).toEqual(["created", "armed", "disarmed"]);
    });

    it("accepts x-api-key, wants JSON on POST, and checks ids", async () => {
      const agent = await certifiedAgent(s, "transport");
      const c = await contract(agent.id, spec);
      const b = await breaker(agent.id, c.id, "notify");
      const viaHeader = await fetch(`${s.server.baseUrl}/breakers/${b.id}`, { headers: { "x-api-key": ADMIN_KEY } });
      expect(viaHeader.status).toBe(200);
      const text = await fetch(`${s.server.baseUrl}/breakers/${b.id}/arm`, {
        method: "POST",
        headers: { "x-api-key": approverKey, "content-type": "text/plain" },
        body: JSON.stringify({ basis: "x", expecting_trips: 0 }),
      });
      expect(text.status).toBe(415);
      const armViaHeader = await fetch(`${s.server.baseUrl}/breakers/${b.id}/arm`, {
        method: "POST",
        headers: { "x-api-key": approverKey, "content-type": "application/json" },
        body: JSON.stringify({ basis: "x", expecting_trips: 0 }),
      });
      expect(armViaHeader.status).toBe(200);
      expect((await s.call("POST", `/breakers/${b.id}/arm`, approverKey, { basis: "x", expecting_trips: 0 })).body.code).toBe(
        "breaker_already_armed",
      );
      expect((await s.call("GET", "/breakers/brk_nope", ADMIN_KEY)).status).toBe(400);
      expect((await s.call("GET", "/breakers/brk_0000000000000000000000000a", ADMIN_KEY)).status).toBe(404);
      const other = await certifiedAgent(s, "transport-other");
      expect((await s.call("POST", `/agents/${other.id}/breakers`, ADMIN_KEY, { contract_id: c.id, action: "revoke" })).body.code).toBe(
        "contract_not_found",
      );
      expect((await s.call("POST", `/agents/${agent.id}/breakers`, ADMIN_KEY, { contract_id: c.id, action: "widen" })).status).toBe(400);
      expect(
        (await s.call("POST", `/agents/${agent.id}/breakers`, ADMIN_KEY, { contract_id: c.id, action: "revoke", mode: "armed" })).status,
      ).toBe(400);
    });
  });
}
