// The two reads of the decision path against a real server: gated decisions waiting for a human
// (until approved, or until their grant expires or is revoked) and a grant tree's sealed records in
// chain order with the tree's chain verification, on a clock the test moves.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_LIMITS } from "@agent-authority/api";
import { ADMIN_KEY, CERTIFICATION } from "./http-harness.js";
import { certifiedAgent, issueGrant, startDecisionServer, type DecisionServer, type Reply } from "./decisions-http.js";
import type { StoreTarget } from "./targets.js";
import type {
  Decision,
  GateResult,
  Grant,
  LedgerRecord,
  PendingDecision,
  PendingDecisionList,
  Settlement,
  TreeLedger,
} from "@agent-authority/sdk";

const HOUR = 3_600_000;
const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};
const GATES = ["grant", "status", "window", "audience", "certification", "scope", "conditions", "policy", "budget"];
const CFO = "cfo@example.com";
const GATED_POLICY = `amount_minor <= 1000 || approver == "${CFO}"`;

function problem(reply: Reply, status: number, code: string): void {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.body.code).toBe(code);
}

export function decisionReadsSuite(target: StoreTarget): void {
  let s: DecisionServer;
  let agent: { id: string; key: string };
  let approverKey: string;
  let auditorKey: string;
  let issuerKey: string;
  const pay = (grantId: string, amount: number, extra: Record<string, unknown> = {}) => ({
    grant_id: grantId,
    tool: "payments.send",
    amount_minor: amount,
    currency: "EUR",
    attestation: ATTESTATION,
    ...extra,
  });
  const gatedOn = async (grantId: string, amount = 2500): Promise<string> => {
    const reply = await s.call("POST", "/authorize", agent.key, pay(grantId, amount));
    expect(reply.body.outcome, reply.text).toBe("gated");
    s.clock.now += 1; // ledger ids sort by time: one millisecond apart keeps "newest first" exact
    return reply.body.ledger_id as string;
  };
  /** Every pending decision, walking the cursor with the given page size. */
  const allPending = async (limit: number, key = approverKey): Promise<PendingDecision[]> => {
    const out: PendingDecision[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 1000; pages += 1) {
      const reply: Reply<PendingDecisionList> = await s.call<PendingDecisionList>(
        "GET",
        `/decisions/pending?limit=${limit}${after === null ? "" : `&after=${after}`}`,
        key,
      );
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body.decisions.length).toBeLessThanOrEqual(limit);
      out.push(...reply.body.decisions);
      after = reply.body.next_after;
      if (after === null) return out;
    }
    throw new Error("the cursor never ended");
  };
  const pendingIds = async (): Promise<string[]> => (await allPending(API_LIMITS.listLimitMax)).map((d) => d.ledger_id);

  beforeAll(async () => {
    s = await startDecisionServer(target);
    agent = await certifiedAgent(s, "reader-buyer");
    const key = async (identity: string, roles: string[]) =>
      (await s.call("POST", "/keys", ADMIN_KEY, { identity, kind: "human", roles })).body.key as string;
    approverKey = await key(CFO, ["approver"]);
    auditorKey = await key("audit@example.com", ["auditor"]);
    issuerKey = await key("issuer@example.com", ["issuer"]);
  });
  afterAll(async () => {
    await s?.close();
  });

  describe("GET /v1/decisions/pending", () => {
    it("lists a gated decision with its residual and gates until it is approved; the retry is then allowed", async () => {
      const grant = await issueGrant(s, agent.id, { policy: GATED_POLICY });
      const ledgerId = await gatedOn(grant.id);
      const listed = (await allPending(100)).find((d) => d.ledger_id === ledgerId);
      expect(listed).toMatchObject({
        ledger_id: ledgerId,
        outcome: "gated",
        decided_by: "policy",
        residual: `approver == "${CFO}"`,
        grant_id: grant.id,
        agent_id: agent.id,
        request: { tool: "payments.send", amount_minor: 2500, currency: "EUR" },
      });
      expect(listed!.gates.map((g: GateResult) => g.gate)).toEqual(GATES);
      expect(listed!.gates.find((g: GateResult) => g.gate === "policy")!.result).toBe("fail");
      // An allowed or denied decision on the same grant is never listed.
      const allowed = await s.call("POST", "/authorize", agent.key, pay(grant.id, 10));
      expect(allowed.body.outcome).toBe("allow");
      expect(await pendingIds()).not.toContain(allowed.body.ledger_id);

      const approval = await s.call("POST", `/decisions/${ledgerId}/approve`, approverKey, {});
      expect(approval.status, approval.text).toBe(201);
      expect(await pendingIds()).not.toContain(ledgerId);
      const retry = await s.call("POST", "/authorize", agent.key, pay(grant.id, 2500, { approval_id: approval.body.approval_id }));
      expect(retry.body).toMatchObject({ outcome: "allow", approver: CFO });
    });

    it("drops a decision once its grant has expired or was revoked", async () => {
      const shortLived = await issueGrant(s, agent.id, { policy: GATED_POLICY, ttl_hours: 1 });
      const revoked = await issueGrant(s, agent.id, { policy: GATED_POLICY });
      const expiring = await gatedOn(shortLived.id);
      const revoking = await gatedOn(revoked.id);
      expect(await pendingIds()).toEqual(expect.arrayContaining([expiring, revoking]));
      expect((await s.call("POST", `/grants/${revoked.id}/revoke`, ADMIN_KEY, { reason: "done" })).status).toBe(200);
      expect(await pendingIds()).not.toContain(revoking);
      expect(await pendingIds()).toContain(expiring);
      s.clock.now += 2 * HOUR;
      expect(await pendingIds()).not.toContain(expiring);
    });

    it("pages newest first with a cursor, and refuses a limit or cursor out of bounds", async () => {
      const grant = await issueGrant(s, agent.id, { policy: GATED_POLICY });
      const ids = [await gatedOn(grant.id), await gatedOn(grant.id), await gatedOn(grant.id)];
      const byOne = (await allPending(1)).map((d) => d.ledger_id);
      const atOnce = await pendingIds();
      expect(byOne).toEqual(atOnce);
      expect(atOnce.slice(0, 3)).toEqual([...ids].reverse());
      const first = await s.call("GET", "/decisions/pending?limit=1", approverKey);
      expect(first.body).toMatchObject({ decisions: [{ ledger_id: ids[2] }], next_after: ids[2] });
      const second = await s.call<PendingDecisionList>("GET", `/decisions/pending?limit=2&after=${ids[2]}`, approverKey);
      expect(second.body.decisions.map((d: PendingDecision) => d.ledger_id)).toEqual([ids[1], ids[0]]);
      expect((await s.call("GET", `/decisions/pending?limit=${API_LIMITS.listLimitMax}`, approverKey)).status).toBe(200);
      problem(await s.call("GET", `/decisions/pending?limit=${API_LIMITS.listLimitMax + 1}`, approverKey), 400, "invalid_query");
      problem(await s.call("GET", "/decisions/pending?limit=0", approverKey), 400, "invalid_query");
      problem(await s.call("GET", "/decisions/pending?after=grt_0000000000000000000000000a", approverKey), 400, "invalid_query");
      const past = await s.call("GET", `/decisions/pending?after=led_00000000000000000000000000`, approverKey);
      expect(past.body).toEqual({ decisions: [], next_after: null });
    });

    it("shows the approver that the agent stopped waiting; the first report stands, and only a gated decision's agent reports it", async () => {
      const grant = await issueGrant(s, agent.id, { policy: GATED_POLICY });
      const ledgerId = await gatedOn(grant.id);
      expect((await allPending(100)).find((d) => d.ledger_id === ledgerId)!.abandoned).toBeNull();
      problem(await s.call("POST", `/decisions/${ledgerId}/abandoned`, agent.key, { reason: "later", waited_ms: 5 }), 400, "invalid_body");
      problem(
        await s.call("POST", `/decisions/${ledgerId}/abandoned`, agent.key, {
          reason: "timeout",
          waited_ms: API_LIMITS.abandonWaitMsMax + 1,
        }),
        400,
        "invalid_body",
      );
      problem(await s.call("POST", `/decisions/${ledgerId}/abandoned`, approverKey, { reason: "timeout", waited_ms: 5 }), 403, "forbidden");
      expect((await allPending(100)).find((d) => d.ledger_id === ledgerId)!.abandoned).toBeNull();
      const first = await s.call("POST", `/decisions/${ledgerId}/abandoned`, agent.key, {
        reason: "timeout",
        waited_ms: API_LIMITS.abandonWaitMsMax,
      });
      expect(first.status, first.text).toBe(200);
      expect(first.body).toMatchObject({
        ledger_id: ledgerId,
        grant_id: grant.id,
        reason: "timeout",
        waited_ms: API_LIMITS.abandonWaitMsMax,
      });
      const again = await s.call("POST", `/decisions/${ledgerId}/abandoned`, agent.key, { reason: "cancelled", waited_ms: 1 });
      expect(again.body).toEqual(first.body);
      expect((await allPending(100)).find((d) => d.ledger_id === ledgerId)!.abandoned).toEqual(first.body);
      // An allowed decision had nothing to wait for; an unknown one is not found.
      const allowed = await s.call("POST", "/authorize", agent.key, pay(grant.id, 10));
      problem(
        await s.call("POST", `/decisions/${allowed.body.ledger_id}/abandoned`, agent.key, { reason: "timeout", waited_ms: 5 }),
        409,
        "decision_not_gated",
      );
      problem(
        await s.call("POST", "/decisions/led_00000000000000000000000000/abandoned", agent.key, { reason: "timeout", waited_ms: 5 }),
        404,
        "decision_not_found",
      );
    });

    it("answers another agent 404 for a decision not its own, whatever the body, as for one that does not exist", async () => {
      const grant = await issueGrant(s, agent.id, { policy: GATED_POLICY });
      const ledgerId = await gatedOn(grant.id);
      const other = await certifiedAgent(s, "abandon-other-bot");
      const unknown = "led_00000000000000000000000000";
      for (const body of [undefined, {}, { reason: "later", waited_ms: 5 }, { reason: "timeout", waited_ms: 5 }]) {
        for (const path of [`/decisions/${ledgerId}/abandoned`, `/decisions/${ledgerId}/settle`]) {
          const refused = await s.call("POST", path, other.key, body);
          problem(refused, 404, "decision_not_found");
          // The same answer as for a decision that does not exist: nothing tells the two apart.
          const missing = await s.call("POST", path.replace(ledgerId, unknown), other.key, body);
          expect(String(refused.body["detail"]).replace(ledgerId, unknown), path).toBe(String(missing.body["detail"]));
        }
      }
      // The owner still hears what is wrong with its body.
      problem(await s.call("POST", `/decisions/${ledgerId}/abandoned`, agent.key, {}), 400, "invalid_body");
      expect((await allPending(100)).find((d) => d.ledger_id === ledgerId)!.abandoned).toBeNull();
    });

    it("is read by approvers and admins only", async () => {
      expect((await s.call("GET", "/decisions/pending", ADMIN_KEY)).status).toBe(200);
      problem(await s.call("GET", "/decisions/pending", auditorKey), 403, "forbidden");
      problem(await s.call("GET", "/decisions/pending", agent.key), 403, "forbidden");
    });
  });

  describe("GET /v1/grants/{grant_id}/ledger", () => {
    let root: Grant;
    let child: Grant;
    const sealed: string[] = [];

    beforeAll(async () => {
      const helper = await certifiedAgent(s, "reader-helper");
      root = await issueGrant(s, agent.id, { policy: GATED_POLICY, budget_amount_minor: 100_000, delegation_policy: "attenuating" });
      const delegated = await s.call<Grant>("POST", `/grants/${root.id}/delegate`, ADMIN_KEY, {
        agent_id: helper.id,
        budget_amount_minor: 5_000,
      });
      expect(delegated.status, delegated.text).toBe(201);
      child = delegated.body;
      const allow = await s.call<Decision>("POST", "/authorize", agent.key, pay(root.id, 500));
      sealed.push(allow.body.ledger_id);
      const settled = await s.call<Settlement>("POST", `/decisions/${allow.body.ledger_id}/settle`, agent.key, { amount_minor: 400 });
      expect(settled.status, settled.text).toBe(200);
      sealed.push(settled.body.ledger_id);
      sealed.push((await s.call<Decision>("POST", "/authorize", agent.key, pay(root.id, 500, { tool: "mail.send" }))).body.ledger_id);
      sealed.push(await gatedOn(root.id));
      sealed.push((await s.call<Decision>("POST", "/authorize", helper.key, pay(child.id, 100))).body.ledger_id);
    });

    it("lists the tree's records in chain order with each decision's nine gates, from any grant of the tree", async () => {
      for (const grantId of [root.id, child.id]) {
        const reply = await s.call<TreeLedger>("GET", `/grants/${grantId}/ledger`, auditorKey);
        expect(reply.status, reply.text).toBe(200);
        expect(reply.body.tree_id).toBe(root.id);
        expect(reply.body.next_after).toBeNull();
        expect(reply.body.verification).toEqual({ ok: true, trees: 1, records: 5, broken: null });
        const records = reply.body.records;
        expect(records.map((r: LedgerRecord) => r.ledger_id)).toEqual(sealed);
        expect(records.map((r: LedgerRecord) => r.seq)).toEqual([1, 2, 3, 4, 5]);
        expect(records.map((r: LedgerRecord) => r.kind)).toEqual(["decision", "settlement", "decision", "decision", "decision"]);
        expect(records.map((r: LedgerRecord) => r.outcome)).toEqual(["allow", null, "deny", "gated", "allow"]);
        expect(records[0].prev_hash).toBe("0".repeat(64));
        for (let i = 1; i < records.length; i += 1) expect(records[i].prev_hash).toBe(records[i - 1].hash);
        for (const r of records.filter((x: LedgerRecord) => x.kind === "decision"))
          expect(r.gates?.map((g: GateResult) => g.gate)).toEqual(GATES);
        expect(records[2]).toMatchObject({ decided_by: "scope", request: { tool: "mail.send" } });
        expect(records[3]).toMatchObject({ residual: `approver == "${CFO}"`, mode: "enforce" });
        expect(records[4].grant_id).toBe(child.id);
      }
    });

    it("pages by seq and refuses bad bounds", async () => {
      const first = await s.call<TreeLedger>("GET", `/grants/${root.id}/ledger?limit=2`, issuerKey);
      expect(first.body.records.map((r: LedgerRecord) => r.seq)).toEqual([1, 2]);
      expect(first.body.next_after).toBe("2");
      const rest = await s.call<TreeLedger>("GET", `/grants/${root.id}/ledger?limit=3&after=2`, issuerKey);
      expect(rest.body.records.map((r: LedgerRecord) => r.seq)).toEqual([3, 4, 5]);
      expect(rest.body.next_after).toBe("5");
      const end = await s.call("GET", `/grants/${root.id}/ledger?limit=3&after=5`, issuerKey);
      expect(end.body).toMatchObject({ records: [], next_after: null, verification: { ok: true, records: 5 } });
      expect((await s.call("GET", `/grants/${root.id}/ledger?limit=${API_LIMITS.listLimitMax}`, ADMIN_KEY)).status).toBe(200);
      problem(await s.call("GET", `/grants/${root.id}/ledger?limit=${API_LIMITS.listLimitMax + 1}`, ADMIN_KEY), 400, "invalid_query");
      problem(await s.call("GET", `/grants/${root.id}/ledger?after=led_00000000000000000000000000`, ADMIN_KEY), 400, "invalid_query");
      problem(await s.call("GET", "/grants/grt_0000000000000000000000000a/ledger", ADMIN_KEY), 404, "grant_not_found");
      problem(await s.call("GET", `/grants/${root.id}/ledger`, approverKey), 403, "forbidden");
      problem(await s.call("GET", `/grants/${root.id}/ledger`, agent.key), 403, "forbidden");
    });

    it("reports a tampered record in the tree's verification", async () => {
      const victim = sealed[2]!;
      await s.db.raw(target.name === "sqlite" ? "DROP TRIGGER ledger_sealed" : "DROP TRIGGER ledger_sealed ON ledger");
      try {
        await s.db.raw(
          'UPDATE ledger SET record = replace(record, \'"outcome":"deny"\', \'"outcome":"allow"\'), outcome = \'allow\' WHERE id = ?',
          [victim],
        );
        const reply = await s.call<TreeLedger>("GET", `/grants/${child.id}/ledger?limit=1`, auditorKey);
        expect(reply.body.verification).toMatchObject({ ok: false, broken: { tree_id: root.id, seq: 3, ledger_id: victim } });
        expect(reply.body.verification.broken?.problem).toMatch(/changed after sealing/);
        const tampered = (await s.call<TreeLedger>("GET", `/grants/${root.id}/ledger?after=2&limit=1`, auditorKey)).body.records[0];
        expect(tampered).toMatchObject({ ledger_id: victim, outcome: "allow" }); // shown as stored, flagged by verification
      } finally {
        await s.db.raw(
          'UPDATE ledger SET record = replace(record, \'"outcome":"allow"\', \'"outcome":"deny"\'), outcome = \'deny\' WHERE id = ?',
          [victim],
        );
        await s.db.raw(
          target.name === "sqlite"
            ? "CREATE TRIGGER ledger_sealed BEFORE UPDATE ON ledger BEGIN SELECT RAISE(ABORT, 'ledger records are sealed'); END"
            : "CREATE TRIGGER ledger_sealed BEFORE UPDATE ON ledger FOR EACH ROW EXECUTE FUNCTION authority_refuse_update()",
        );
      }
      expect((await s.call<TreeLedger>("GET", `/grants/${root.id}/ledger`, auditorKey)).body.verification.ok).toBe(true);
    });
  });
}
