// The decision path over HTTP against a real server: authorize, holds, settlement, approvals of
// gated decisions, idempotency keys and the sealed ledger, on a clock the test moves.

import { startServer, verifyLedger, type AuthorityServer } from "@agent-authority/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, CERTIFICATION, ENVIRONMENT, TEST_SERVER_KEY } from "./http-harness.js";
import { ResponseRecorder } from "./openapi-conformance.js";
import { openTestStore, type StoreTarget, type TestStore } from "./targets.js";
import type { Decision, Grant, KeyCreated, PendingDecision, PendingDecisionList, Problem } from "@agent-authority/sdk";

const HOUR = 3_600_000;
const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

/** An answer of the API; `T` names the wire type the caller expects of its body (the SDK's types). */
export interface Reply<T = Record<string, unknown>> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface DecisionServer {
  readonly db: TestStore;
  server: AuthorityServer;
  clock: { now: number };
  /** Every answer `call` received; checked against the served OpenAPI document on `close()`. */
  readonly recorder: ResponseRecorder;
  call<T = Record<string, unknown>>(
    method: string,
    path: string,
    key: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Reply<T>>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startDecisionServer(
  target: StoreTarget,
  config: { holdLifetimeHours?: number; ledgerOrigin?: string; authzenPdp?: string } = {},
): Promise<DecisionServer> {
  const db = await openTestStore(target);
  const clock = { now: Date.now() };
  const start = () =>
    startServer(
      {
        host: "127.0.0.1",
        port: 0,
        dataDir: "unused",
        databaseUrl: db.url,
        environment: ENVIRONMENT,
        adminKey: ADMIN_KEY,
        serverKey: TEST_SERVER_KEY,
        autoApprovalCeilingMinor: 100_000,
        logLevel: "silent",
        ...config,
      },
      { store: db.store, ownsStore: false, now: () => clock.now },
    );
  const recorder = new ResponseRecorder();
  const s: DecisionServer = {
    db,
    clock,
    recorder,
    server: await start(),
    async call<T>(method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> {
      const init: RequestInit = {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
      };
      const url = `${s.server.baseUrl}${path}`;
      const response = await fetch(url, init);
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
      recorder.record(s.server.baseUrl, method, url, response, parsed);
      return { status: response.status, body: parsed as T, text, headers: response.headers };
    },
    async restart() {
      await s.server.close();
      s.server = await start();
    },
    async close() {
      try {
        await recorder.check(s.server.baseUrl);
      } finally {
        await s.server.close();
        await db.close();
      }
    },
  };
  return s;
}

/** Registers a certified agent with its own agent key. */
export async function certifiedAgent(s: DecisionServer, name: string, certified = true): Promise<{ id: string; key: string }> {
  const agent = await s.call("POST", "/agents", ADMIN_KEY, { name });
  if (certified) expect((await s.call("POST", `/agents/${agent.body.id}/certification`, ADMIN_KEY, CERTIFICATION)).status).toBe(201);
  const key = await s.call("POST", "/keys", ADMIN_KEY, {
    identity: `${name}-key`,
    kind: "service",
    roles: ["agent"],
    agent_id: agent.body.id,
  });
  return { id: agent.body.id as string, key: key.body.key as string };
}

export async function issueGrant(s: DecisionServer, agentId: string, extra: Record<string, unknown> = {}): Promise<Grant> {
  const reply = await s.call<Grant>("POST", "/grants", ADMIN_KEY, {
    agent_id: agentId,
    principal_type: "human",
    principal_id: "alice@example.com",
    scope: { tool: ["payments.*"] },
    budget_amount_minor: 10_000,
    budget_currency: "EUR",
    ...extra,
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body;
}

export function decisionsHttpSuite(target: StoreTarget): void {
  let s: DecisionServer;
  let agent: { id: string; key: string };
  let other: { id: string; key: string };
  let approverKey: string;
  const pay = (grantId: string, amount: number, extra: Record<string, unknown> = {}) => ({
    grant_id: grantId,
    tool: "payments.send",
    amount_minor: amount,
    currency: "EUR",
    attestation: ATTESTATION,
    ...extra,
  });
  beforeAll(async () => {
    s = await startDecisionServer(target);
    agent = await certifiedAgent(s, "buyer");
    other = await certifiedAgent(s, "other");
    approverKey = (
      await s.call<KeyCreated>("POST", "/keys", ADMIN_KEY, { identity: "cfo@example.com", kind: "human", roles: ["approver"] })
    ).body.key;
  });
  afterAll(async () => {
    await s?.close();
  });

  describe("authorize", () => {
    it("answers 200 for every outcome and seals each decision", async () => {
      const grant = await issueGrant(s, agent.id, { budget_count: 2 });
      const allow = await s.call("POST", "/authorize", agent.key, pay(grant.id, 100));
      expect(allow.status).toBe(200);
      expect(allow.body).toMatchObject({ outcome: "allow", reason_code: "decision.allow", enforcement_mode: "enforce" });
      expect(allow.body.ledger_id).toMatch(/^led_[0-9a-z]{26}$/);
      expect(allow.body.holds).toEqual([expect.objectContaining({ grant_id: grant.id, amount_minor: 100, currency: "EUR" })]);
      const deny = await s.call("POST", "/authorize", agent.key, pay(grant.id, 100, { tool: "mail.send" }));
      expect(deny.status).toBe(200);
      expect(deny.body).toMatchObject({ outcome: "deny", decided_by: "scope", reason_code: "scope.out_of_scope" });
      expect((await s.call("POST", "/authorize", agent.key, pay(grant.id, 100))).body.outcome).toBe("allow");
      const exhausted = await s.call("POST", "/authorize", agent.key, pay(grant.id, 100));
      expect(exhausted.body).toMatchObject({ outcome: "exhausted", reason_code: "budget.count_exhausted" });
      const view = await s.call("GET", `/grants/${grant.id}`, ADMIN_KEY);
      expect(view.body).toMatchObject({ uses: 2, held_minor: 200, settled_minor: 0 });
      const sealed = (await s.db.raw("SELECT id, outcome FROM ledger WHERE grant_id = ? ORDER BY seq", [grant.id])) as {
        id: string;
        outcome: string;
      }[];
      expect(sealed.map((r) => r.outcome)).toEqual(["allow", "deny", "allow", "exhausted"]);
      expect(sealed[0]!.id).toBe(allow.body.ledger_id);
    });

    it("decides a grant held by another agent as an unknown one: deny, existence not leaked", async () => {
      const foreign = await issueGrant(s, other.id);
      const theirs = await s.call("POST", "/authorize", agent.key, pay(foreign.id, 1));
      const unknown = await s.call<Decision>("POST", "/authorize", agent.key, pay("grt_0000000000000000000000000a", 1));
      expect(theirs.status).toBe(200);
      expect(theirs.body).toMatchObject({ outcome: "deny", reason_code: "grant.not_held" });
      expect(theirs.body.reason).toBe(unknown.body.reason.replace("grt_0000000000000000000000000a", foreign.id));
      expect((await s.call("GET", `/grants/${foreign.id}`, ADMIN_KEY)).body.uses).toBe(0);
    });

    it("seals racing refusals on grants the agent does not hold in the agent's own chain, unforked", async () => {
      const replies = await Promise.all(
        Array.from({ length: 20 }, () => s.call("POST", "/authorize", other.key, pay("grt_0000000000000000000000000b", 1))),
      );
      for (const reply of replies) expect(reply.body, reply.text).toMatchObject({ outcome: "deny", reason_code: "grant.not_held" });
      const chain = (await s.db.raw("SELECT seq FROM ledger WHERE tree_id = ? ORDER BY seq", [other.id])) as { seq: number }[];
      expect(chain.map((r) => Number(r.seq))).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect((await verifyLedger(s.db.store)).ok).toBe(true);
    });

    it("answers allow with would_outcome in observe, and counts as enforce would", async () => {
      const uncertified = await certifiedAgent(s, "observer", false);
      const grant = await issueGrant(s, uncertified.id, { enforcement_mode: "observe" });
      const reply = await s.call("POST", "/authorize", uncertified.key, { grant_id: grant.id, tool: "mail.send" });
      expect(reply.body).toMatchObject({
        outcome: "allow",
        would_outcome: "deny",
        enforcement_mode: "observe",
        reason_code: "scope.out_of_scope",
      });
      expect((await s.call("GET", `/grants/${grant.id}`, ADMIN_KEY)).body.uses).toBe(0);
    });

    it("refuses a key without the agent role, a malformed body, and no key, as problems", async () => {
      expect((await s.call("POST", "/authorize", ADMIN_KEY, pay("grt_0000000000000000000000000a", 1))).body.code).toBe("forbidden");
      expect((await s.call("POST", "/authorize", "nope", pay("grt_0000000000000000000000000a", 1))).status).toBe(401);
      const bad = await s.call("POST", "/authorize", agent.key, { grant_id: "grt_x", tool: "payments.send", extra: 1 });
      expect(bad.status).toBe(400);
      expect(bad.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect((await s.call("POST", "/authorize", agent.key, "{")).body.code).toBe("malformed_json");
      expect((await s.call("POST", "/authorize", agent.key, JSON.stringify({ pad: "x".repeat(70_000) }))).status).toBe(413);
    });
  });

  describe("holds and settlement", () => {
    it("holds on the grant and every ancestor; settle captures, releases the rest, replays, and refuses another amount", async () => {
      const root = await issueGrant(s, agent.id, { delegation_policy: "attenuating" });
      const child = await s.call<Grant>("POST", `/grants/${root.id}/delegate`, ADMIN_KEY, {
        agent_id: agent.id,
        budget_amount_minor: 5_000,
      });
      expect(child.status, JSON.stringify(child.body)).toBe(201);
      const allow = await s.call<Decision>("POST", "/authorize", agent.key, pay(child.body.id, 1_000));
      expect(allow.body.holds?.map((h) => h.grant_id)).toEqual([root.id, child.body.id]);
      expect((await s.call("GET", `/grants/${root.id}`, ADMIN_KEY)).body.held_minor).toBe(1_000);
      const settle = await s.call("POST", `/decisions/${allow.body.ledger_id}/settle`, agent.key, { amount_minor: 600 });
      expect(settle.status, settle.text).toBe(200);
      expect(settle.body).toMatchObject({
        decision_ledger_id: allow.body.ledger_id,
        amount_minor: 600,
        held_minor: 1_000,
        released_minor: 400,
        currency: "EUR",
      });
      for (const id of [root.id, child.body.id]) {
        expect((await s.call("GET", `/grants/${id}`, ADMIN_KEY)).body).toMatchObject({ held_minor: 0, settled_minor: 600 });
      }
      const again = await s.call("POST", `/decisions/${allow.body.ledger_id}/settle`, agent.key, { amount_minor: 600 });
      expect(again.text).toBe(settle.text);
      expect((await s.call("POST", `/decisions/${allow.body.ledger_id}/settle`, agent.key, { amount_minor: 500 })).body.code).toBe(
        "already_settled",
      );
      const next = await s.call("POST", "/authorize", agent.key, pay(child.body.id, 100));
      expect((await s.call("POST", `/decisions/${next.body.ledger_id}/settle`, agent.key, { amount_minor: 101 })).body.code).toBe(
        "settle_exceeds_hold",
      );
      expect((await s.call("POST", `/decisions/${next.body.ledger_id}/settle`, other.key, { amount_minor: 1 })).body.code).toBe(
        "decision_not_found",
      );
      const deny = await s.call("POST", "/authorize", agent.key, pay(child.body.id, 1, { tool: "mail.send" }));
      expect((await s.call("POST", `/decisions/${deny.body.ledger_id}/settle`, agent.key, { amount_minor: 0 })).body.code).toBe(
        "nothing_held",
      );
      expect((await s.call("POST", "/decisions/led_0000000000000000000000000a/settle", agent.key, { amount_minor: 0 })).status).toBe(404);
    });

    it("counts a use without an amount on the grant and every ancestor, and writes charges only for holds", async () => {
      const root = await issueGrant(s, agent.id, { delegation_policy: "attenuating" });
      const child = await s.call<Grant>("POST", `/grants/${root.id}/delegate`, ADMIN_KEY, {
        agent_id: agent.id,
        budget_amount_minor: 5_000,
      });
      expect(child.status, JSON.stringify(child.body)).toBe(201);
      const bare = { grant_id: child.body.id, tool: "payments.send", attestation: ATTESTATION };
      const use = await s.call<Decision>("POST", "/authorize", agent.key, bare);
      expect(use.body).toMatchObject({ outcome: "allow", holds: [] });
      const held = await s.call<Decision>("POST", "/authorize", agent.key, pay(child.body.id, 300));
      expect(held.body.outcome).toBe("allow");
      for (const id of [root.id, child.body.id]) {
        expect((await s.call("GET", `/grants/${id}`, ADMIN_KEY)).body).toMatchObject({ uses: 2, held_minor: 300 });
      }
      const charges = async (ledgerId: string) =>
        ((await s.db.raw("SELECT grant_id FROM charges WHERE ledger_id = ? ORDER BY grant_id", [ledgerId])) as { grant_id: string }[]).map(
          (r) => r.grant_id,
        );
      expect(await charges(use.body.ledger_id)).toEqual([]);
      expect(await charges(held.body.ledger_id)).toEqual([root.id, child.body.id].sort());
      expect((await s.call("POST", `/decisions/${use.body.ledger_id}/settle`, agent.key, { amount_minor: 0 })).body.code).toBe(
        "nothing_held",
      );
    });

    it("an expired hold stops counting at once, without a sweeper", async () => {
      const grant = await issueGrant(s, agent.id, { budget_amount_minor: 1_000, ttl_hours: 72 });
      expect((await s.call("POST", "/authorize", agent.key, pay(grant.id, 1_000))).body.outcome).toBe("allow");
      expect((await s.call("POST", "/authorize", agent.key, pay(grant.id, 1))).body).toMatchObject({
        outcome: "exhausted",
        reason_code: "budget.amount_exhausted",
      });
      s.clock.now += 24 * HOUR + 1;
      try {
        expect((await s.call("GET", `/grants/${grant.id}`, ADMIN_KEY)).body.held_minor).toBe(0);
        expect((await s.call("POST", "/authorize", agent.key, pay(grant.id, 1_000))).body.outcome).toBe("allow");
      } finally {
        s.clock.now -= 24 * HOUR + 1;
      }
    });
  });

  describe("hold lifetime", () => {
    it("is the configured one, and a hold never outlives its grant", async () => {
      const short = await startDecisionServer(target, { holdLifetimeHours: 1 });
      try {
        const buyer = await certifiedAgent(short, "short-holds");
        const grant = await issueGrant(short, buyer.id, { ttl_hours: 48 });
        const allow = await short.call<Decision>("POST", "/authorize", buyer.key, pay(grant.id, 10));
        expect(Date.parse(allow.body.holds![0]!.expires_at!) - Date.parse(allow.body.decided_at)).toBe(HOUR);
        const brief = await startDecisionServer(target, { holdLifetimeHours: 72 });
        try {
          const other = await certifiedAgent(brief, "long-holds");
          const g = await issueGrant(brief, other.id, { ttl_hours: 2 });
          const a = await brief.call<Decision>("POST", "/authorize", other.key, pay(g.id, 10));
          expect(a.body.holds?.[0]?.expires_at).toBe(g.expires_at);
        } finally {
          await brief.close();
        }
      } finally {
        await short.close();
      }
    });
  });

  describe("approvals of gated decisions", () => {
    it("approve, retry with approval_id binding approver, single use", async () => {
      const grant = await issueGrant(s, agent.id, { policy: 'amount_minor <= 500 || approver == "cfo@example.com"' });
      const gated = await s.call("POST", "/authorize", agent.key, pay(grant.id, 2_000));
      expect(gated.body).toMatchObject({ outcome: "gated", decided_by: "policy", residual: 'approver == "cfo@example.com"' });
      expect((await s.call("POST", `/decisions/${gated.body.ledger_id}/approve`, agent.key, {})).body.code).toBe("forbidden");
      const approval = await s.call("POST", `/decisions/${gated.body.ledger_id}/approve`, approverKey, { note: "quarterly licence" });
      expect(approval.status, approval.text).toBe(201);
      expect(approval.body).toMatchObject({
        grant_id: grant.id,
        tool: "payments.send",
        amount_minor_max: 2_000,
        approver: "cfo@example.com",
      });
      expect((await s.call("POST", `/decisions/${gated.body.ledger_id}/approve`, approverKey, {})).body.code).toBe(
        "decision_already_approved",
      );
      const over = await s.call("POST", "/authorize", agent.key, pay(grant.id, 2_001, { approval_id: approval.body.approval_id }));
      expect(over.body).toMatchObject({ outcome: "deny", reason_code: "approval.over_ceiling" });
      const retry = await s.call("POST", "/authorize", agent.key, pay(grant.id, 2_000, { approval_id: approval.body.approval_id }));
      expect(retry.body).toMatchObject({ outcome: "allow", approver: "cfo@example.com", approval_id: approval.body.approval_id });
      const reused = await s.call("POST", "/authorize", agent.key, pay(grant.id, 2_000, { approval_id: approval.body.approval_id }));
      expect(reused.body.outcome).toBe("gated");
      const allowed = await s.call("POST", "/authorize", agent.key, pay(grant.id, 100));
      expect((await s.call("POST", `/decisions/${allowed.body.ledger_id}/approve`, approverKey, {})).body.code).toBe("decision_not_gated");
    });

    it("the agent reads the approval of its own gated decision once a human gave it", async () => {
      const grant = await issueGrant(s, agent.id, { policy: 'approver == "cfo@example.com"' });
      const gated = await s.call("POST", "/authorize", agent.key, pay(grant.id, 10));
      const path = `/decisions/${gated.body.ledger_id}/approval`;
      const waiting = await s.call("GET", path, agent.key);
      expect([waiting.status, waiting.body.code]).toEqual([404, "approval_not_found"]);
      const approval = await s.call("POST", `/decisions/${gated.body.ledger_id}/approve`, approverKey, { note: "ok" });
      const read = await s.call("GET", path, agent.key);
      expect(read.status).toBe(200);
      expect(read.body).toEqual({ ...approval.body, note: null });
      expect((await s.call("GET", path, other.key)).body.code).toBe("decision_not_found");
      expect((await s.call("GET", path, approverKey)).status).toBe(200);
    });

    it("refuses an approver the residual does not admit with 422 and the residual, leaving the decision for one it admits", async () => {
      const bob = (
        await s.call<KeyCreated>("POST", "/keys", ADMIN_KEY, { identity: "bob@example.com", kind: "human", roles: ["approver"] })
      ).body.key;
      const dave = (
        await s.call<KeyCreated>("POST", "/keys", ADMIN_KEY, { identity: "dave@example.com", kind: "human", roles: ["approver"] })
      ).body.key;
      const grant = await issueGrant(s, agent.id, { policy: 'amount_minor <= 500 || approver == "bob@example.com"' });
      const gated = await s.call("POST", "/authorize", agent.key, pay(grant.id, 2_000, { args: { invoice: "INV-7" } }));
      expect(gated.body).toMatchObject({ outcome: "gated", residual: 'approver == "bob@example.com"' });
      const path = `/decisions/${gated.body.ledger_id}/approve`;
      // The queue tells each caller whether it may approve, with the agent's name and the action's arguments.
      const listed = async (key: string) =>
        (await s.call<PendingDecisionList>("GET", "/decisions/pending?limit=1000", key)).body.decisions.find(
          (d: PendingDecision) => d.ledger_id === gated.body.ledger_id,
        );
      expect(await listed(dave)).toMatchObject({ caller_admitted: false, agent_name: "buyer", request: { args: { invoice: "INV-7" } } });
      expect(await listed(bob)).toMatchObject({ caller_admitted: true, agent_name: "buyer" });
      const refused = await s.call("POST", path, dave, {});
      expect(refused.status, refused.text).toBe(422);
      expect(refused.body).toMatchObject({ code: "approver_not_admitted", residual: 'approver == "bob@example.com"' });
      expect(refused.body.detail).toContain("`dave@example.com`");
      // Nothing was burnt: the decision is still waiting, and bob approves it.
      expect(await listed(bob)).toBeDefined();
      const approval = await s.call("POST", path, bob, {});
      expect(approval.status, approval.text).toBe(201);
      expect(approval.body.approver).toBe("bob@example.com");
      const retry = await s.call(
        "POST",
        "/authorize",
        agent.key,
        pay(grant.id, 2_000, { args: { invoice: "INV-7" }, approval_id: approval.body.approval_id }),
      );
      expect(retry.body).toMatchObject({ outcome: "allow", approver: "bob@example.com" });
    });

    it("admits on the decision's own action: a part that fails on its `args` admits nobody but the one named (issue 33)", async () => {
      const keyOf = async (identity: string) =>
        (await s.call<KeyCreated>("POST", "/keys", ADMIN_KEY, { identity, kind: "human", roles: ["approver"] })).body.key;
      const [h7, h9, mallory] = [await keyOf("h7"), await keyOf("h9"), await keyOf("mallory@example.com")];
      const grant = await issueGrant(s, agent.id, { policy: 'approver == "h7" || !(args.x == 5) && approver == "h9"' });
      const action = { args: { x: "s" } };
      const gated = await s.call("POST", "/authorize", agent.key, pay(grant.id, 10, action));
      expect(gated.body).toMatchObject({ outcome: "gated" });
      const path = `/decisions/${gated.body.ledger_id}/approve`;
      const listed = async (key: string) =>
        (await s.call<PendingDecisionList>("GET", "/decisions/pending?limit=1000", key)).body.decisions.find(
          (d: PendingDecision) => d.ledger_id === gated.body.ledger_id,
        );
      expect(await listed(mallory)).toMatchObject({ caller_admitted: false });
      expect(await listed(h9)).toMatchObject({ caller_admitted: false });
      expect(await listed(h7)).toMatchObject({ caller_admitted: true });
      // Anyone admitted here could have burnt the decision's one approval: now only h7 is.
      for (const key of [mallory, h9]) {
        const refused = await s.call<Problem>("POST", path, key, {});
        expect([refused.status, refused.body.code], refused.text).toEqual([422, "approver_not_admitted"]);
      }
      const approval = await s.call("POST", path, h7, {});
      expect(approval.status, approval.text).toBe(201);
      const retry = await s.call("POST", "/authorize", agent.key, pay(grant.id, 10, { ...action, approval_id: approval.body.approval_id }));
      expect(retry.body).toMatchObject({ outcome: "allow", approver: "h7" });
    });

    it("an expired approval does not allow", async () => {
      const grant = await issueGrant(s, agent.id, { policy: 'approver == "cfo@example.com"' });
      const gated = await s.call("POST", "/authorize", agent.key, pay(grant.id, 10));
      const approval = await s.call("POST", `/decisions/${gated.body.ledger_id}/approve`, approverKey, { expires_in_minutes: 1 });
      s.clock.now += 61_000;
      try {
        const late = await s.call("POST", "/authorize", agent.key, pay(grant.id, 10, { approval_id: approval.body.approval_id }));
        expect(late.body).toMatchObject({ outcome: "deny", reason_code: "approval.expired" });
      } finally {
        s.clock.now -= 61_000;
      }
    });
  });

  describe("idempotency keys", () => {
    it("replays the first answer byte for byte, refuses another body, and survives a restart", async () => {
      const grant = await issueGrant(s, agent.id);
      const key = { "idempotency-key": `pay-${Date.now()}` };
      const first = await s.call("POST", "/authorize", agent.key, pay(grant.id, 10), key);
      const second = await s.call("POST", "/authorize", agent.key, pay(grant.id, 10), key);
      expect(second.text).toBe(first.text);
      expect(second.headers.get("idempotent-replayed")).toBe("true");
      expect((await s.call("GET", `/grants/${grant.id}`, ADMIN_KEY)).body.uses).toBe(1);
      const other = await s.call("POST", "/authorize", agent.key, pay(grant.id, 11), key);
      expect(other.status).toBe(422);
      expect(other.body.code).toBe("idempotency_key_reused");
      await s.restart();
      expect((await s.call("POST", "/authorize", agent.key, pay(grant.id, 10), key)).text).toBe(first.text);
      const settleKey = { "idempotency-key": "settle-1" };
      const settled = await s.call("POST", `/decisions/${first.body.ledger_id}/settle`, agent.key, { amount_minor: 5 }, settleKey);
      expect((await s.call("POST", `/decisions/${first.body.ledger_id}/settle`, agent.key, { amount_minor: 5 }, settleKey)).text).toBe(
        settled.text,
      );
      expect((await s.call("POST", `/decisions/${first.body.ledger_id}/settle`, agent.key, { amount_minor: 4 }, settleKey)).status).toBe(
        422,
      );
      const agentReply = await s.call("POST", "/agents", ADMIN_KEY, { name: "idem-agent" }, { "idempotency-key": "agent-1" });
      const agentAgain = await s.call("POST", "/agents", ADMIN_KEY, { name: "idem-agent" }, { "idempotency-key": "agent-1" });
      expect(agentAgain.status).toBe(agentReply.status);
      expect(agentAgain.text).toBe(agentReply.text);
      expect((await s.call("POST", "/authorize", agent.key, pay(grant.id, 10), { "idempotency-key": "bad key" })).body.code).toBe(
        "invalid_idempotency_key",
      );
    });
  });

  describe("the sealed ledger", () => {
    it("verifies, refuses UPDATE and DELETE, and reports a tampered record once the trigger is gone", async () => {
      const grant = await issueGrant(s, agent.id);
      const allow = await s.call("POST", "/authorize", agent.key, pay(grant.id, 10));
      expect(await verifyLedger(s.db.store)).toMatchObject({ ok: true, broken: null });
      await expect(s.db.raw("UPDATE ledger SET outcome = 'deny' WHERE id = ?", [allow.body.ledger_id])).rejects.toThrow(/sealed/);
      await expect(s.db.raw("DELETE FROM ledger WHERE id = ?", [allow.body.ledger_id])).rejects.toThrow(/never deleted/);
      await s.db.raw(target.name === "sqlite" ? "DROP TRIGGER ledger_sealed" : "DROP TRIGGER ledger_sealed ON ledger");
      try {
        await s.db.raw(
          'UPDATE ledger SET record = replace(record, \'"outcome":"allow"\', \'"outcome":"deny"\'), outcome = \'deny\' WHERE id = ?',
          [allow.body.ledger_id],
        );
        const result = await verifyLedger(s.db.store);
        expect(result.ok).toBe(false);
        expect(result.broken).toMatchObject({ ledger_id: allow.body.ledger_id, tree_id: grant.id });
        expect(result.broken!.problem).toMatch(/changed after sealing/);
      } finally {
        await s.db.raw(
          'UPDATE ledger SET record = replace(record, \'"outcome":"deny"\', \'"outcome":"allow"\'), outcome = \'allow\' WHERE id = ?',
          [allow.body.ledger_id],
        );
        await s.db.raw(
          target.name === "sqlite"
            ? "CREATE TRIGGER ledger_sealed BEFORE UPDATE ON ledger BEGIN SELECT RAISE(ABORT, 'ledger records are sealed'); END"
            : "CREATE TRIGGER ledger_sealed BEFORE UPDATE ON ledger FOR EACH ROW EXECUTE FUNCTION authority_refuse_update()",
        );
      }
      expect((await verifyLedger(s.db.store)).ok).toBe(true);
    });

    it("reconciles each grant's uses, holds and settlements with its records: a chain's newest record deleted is reported", async () => {
      const grant = await issueGrant(s, agent.id);
      const first = await s.call("POST", "/authorize", agent.key, pay(grant.id, 10));
      const settled = await s.call("POST", `/decisions/${first.body.ledger_id}/settle`, agent.key, { amount_minor: 7 });
      expect(settled.status).toBe(200);
      const newest = await s.call("POST", "/authorize", agent.key, pay(grant.id, 20));
      expect(newest.body.outcome).toBe("allow");
      expect(await verifyLedger(s.db.store, s.clock.now)).toMatchObject({ ok: true, broken: null });
      const guarded = ["ledger", "charges", "decision_signals"];
      const dropKept = guarded.map((t) => (target.name === "sqlite" ? `DROP TRIGGER ${t}_kept` : `DROP TRIGGER ${t}_kept ON ${t}`));
      const restore = guarded.map((t) =>
        target.name === "sqlite"
          ? `CREATE TRIGGER ${t}_kept BEFORE DELETE ON ${t} BEGIN SELECT RAISE(ABORT, '${t} records are never deleted'); END`
          : `CREATE TRIGGER ${t}_kept BEFORE DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION authority_refuse_delete()`,
      );
      const saved = (await s.db.raw("SELECT * FROM ledger WHERE id = ?", [newest.body.ledger_id]))[0] as Record<string, unknown>;
      const charges = (await s.db.raw("SELECT * FROM charges WHERE ledger_id = ?", [newest.body.ledger_id])) as Record<string, unknown>[];
      const signals = (await s.db.raw("SELECT * FROM decision_signals WHERE ledger_id = ?", [newest.body.ledger_id])) as Record<
        string,
        unknown
      >[];
      for (const sql of dropKept) await s.db.raw(sql);
      try {
        // The intruder deletes the newest decision and its hold, as if it had never been made: the
        // chain is still whole, but the grant still counts the use.
        await s.db.raw("DELETE FROM charges WHERE ledger_id = ?", [newest.body.ledger_id]);
        await s.db.raw("DELETE FROM decision_signals WHERE ledger_id = ?", [newest.body.ledger_id]);
        await s.db.raw("DELETE FROM ledger WHERE id = ?", [newest.body.ledger_id]);
        const result = await verifyLedger(s.db.store, s.clock.now);
        expect(result.ok).toBe(false);
        expect(result.broken).toMatchObject({ tree_id: grant.id, ledger_id: settled.body.ledger_id });
        expect(result.broken!.problem).toMatch(new RegExp(`grant \`${grant.id}\` counts uses 2 but its sealed records show 1`));
      } finally {
        const columns = Object.keys(saved);
        if ((await s.db.raw("SELECT id FROM ledger WHERE id = ?", [newest.body.ledger_id])).length === 0)
          await s.db.raw(
            `INSERT INTO ledger (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
            columns.map((c) => saved[c]),
          );
        for (const [table, rows] of [
          ["charges", charges],
          ["decision_signals", signals],
        ] as const) {
          for (const row of rows) {
            const names = Object.keys(row);
            await s.db.raw(
              `INSERT INTO ${table} (${names.join(", ")}) VALUES (${names.map(() => "?").join(", ")}) ON CONFLICT DO NOTHING`,
              names.map((c) => row[c]),
            );
          }
        }
        for (const sql of restore) await s.db.raw(sql);
      }
      expect((await verifyLedger(s.db.store, s.clock.now)).ok).toBe(true);
    });
  });
}
