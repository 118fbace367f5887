// The AuthZEN suite of one database: every request and answer checked against the specification's
// schemas, a small enforcement point written only from the specification, and the promises of
// docs/authzen.md (the mapping, sealing, budgets, batches, replays and refusals).

import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, CERTIFICATION } from "../server/http-harness.js";
import { certifiedAgent, issueGrant, startDecisionServer, type DecisionServer } from "../server/decisions-http.js";
import type { StoreTarget } from "../server/targets.js";
import { API_LIMITS } from "@agent-authority/api";
import { AUTHZEN_LIMITS } from "../../server/src/http/authzen.js";

const FIXTURES = new URL("../fixtures/authzen/", import.meta.url);
const ajv = new Ajv2020({ strict: false, allErrors: true });
function schema(name: string) {
  return ajv.compile(JSON.parse(readFileSync(new URL(name, FIXTURES), "utf8")) as object);
}
const evaluationRequest = schema("evaluation-request.schema.json");
const evaluationResponse = schema("evaluation-response.schema.json");
const evaluationsRequest = schema("derived-evaluations-request.schema.json");
const evaluationsResponse = schema("derived-evaluations-response.schema.json");
const configurationDocument = schema("derived-configuration.schema.json");
const searchSubjectRequest = schema("derived-search-subject-request.schema.json");
const searchActionRequest = schema("derived-search-action-request.schema.json");
const searchResponse = schema("derived-search-response.schema.json");

/** A search as the PEP sends it: the request and a 200's answer checked against the schemas derived from the specification. */
async function search(baseUrl: string, key: string, kind: "subject" | "action", request: unknown): Promise<Answer> {
  const checkRequest = kind === "subject" ? searchSubjectRequest : searchActionRequest;
  if (!checkRequest(request)) throw new Error(`the test sent a search the schema refuses: ${JSON.stringify(checkRequest.errors)}`);
  const response = await fetch(`${baseUrl}/access/v1/search/${kind}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(request),
  });
  const text = await response.text();
  const body = text.length === 0 ? undefined : JSON.parse(text);
  if (response.status === 200 && !searchResponse(body))
    throw new Error(`the answer breaks the schema: ${JSON.stringify(searchResponse.errors)} ${text}`);
  return { status: response.status, body, headers: response.headers };
}

const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: an AuthZEN answer, checked against its schema before it is read
  body: any;
  headers: Headers;
}

/**
 * A small policy enforcement point, written only from the specification: it sends an AuthZEN
 * request with its key and its own request id, and permits only on a literal `decision: true`.
 */
export async function pep(baseUrl: string, key: string, path: string, request: unknown, requestId?: string): Promise<Answer> {
  const checkRequest = path.endsWith("/evaluation") ? evaluationRequest : evaluationsRequest;
  if (!checkRequest(request)) throw new Error(`the test sent a request the schema refuses: ${JSON.stringify(checkRequest.errors)}`);
  const response = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      ...(requestId === undefined ? {} : { "x-request-id": requestId }),
    },
    body: JSON.stringify(request),
  });
  const text = await response.text();
  const body = text.length === 0 ? undefined : JSON.parse(text);
  if (response.status === 200) {
    const check = path.endsWith("/evaluation") ? evaluationResponse : evaluationsResponse;
    if (!check(body)) throw new Error(`the answer breaks the schema: ${JSON.stringify(check.errors)} ${text}`);
    if (path.endsWith("/evaluations"))
      for (const member of (body as { evaluations: unknown[] }).evaluations) expect(evaluationResponse(member)).toBe(true);
  }
  return { status: response.status, body, headers: response.headers };
}

/** The PEP's verdict: permit only on a 200 whose decision is exactly `true`. */
function permits(answer: Answer): boolean {
  return answer.status === 200 && answer.body.decision === true;
}

function origin(s: DecisionServer): string {
  return new URL(s.server.baseUrl).origin;
}

export function authzenSuite(target: StoreTarget): void {
  describe(`AuthZEN 1.0 (${target.name})`, () => {
    let s: DecisionServer;
    let agent: { id: string; key: string };
    let other: { id: string; key: string };

    beforeAll(async () => {
      s = await startDecisionServer(target);
      agent = await certifiedAgent(s, "authzen-agent");
      other = await certifiedAgent(s, "authzen-other");
    });
    afterAll(async () => {
      await s.close();
    });

    const ask = (grantId: string, tool: string, context: Record<string, unknown> = {}) => ({
      subject: { type: "agent", id: agent.id, properties: { attestation: ATTESTATION } },
      action: { name: tool },
      resource: { type: "grant", id: grantId },
      context,
    });

    it("an evaluation is a sealed decision: allow is decision true with the ledger id, the gate and the signed record", async () => {
      const grant = await issueGrant(s, agent.id);
      const answer = await pep(
        origin(s),
        agent.key,
        "/access/v1/evaluation",
        ask(grant.id, "payments.send", { amount_minor: 300, currency: "EUR" }),
      );
      expect(answer.status).toBe(200);
      expect(permits(answer)).toBe(true);
      const context = answer.body.context;
      expect(context.outcome).toBe("allow");
      expect(context.gate).toBeNull();
      expect(context.ledger_id).toMatch(/^led_/);
      expect(context.hold.settle).toBe(`POST /v1/decisions/${context.ledger_id}/settle`);
      expect(context.decision_record.signature).toBeDefined();
      const sealed = await s.call("GET", `/decisions/${context.ledger_id}/receipt`, ADMIN_KEY);
      expect(sealed.status).toBe(200);
      const read = await s.call<{ budget_used_minor?: number; budget_held_minor?: number }>("GET", `/grants/${grant.id}`, ADMIN_KEY);
      expect(JSON.stringify(read.body)).toContain("300");
    });

    it("a deny is decision false with reason_admin and reason_user keyed by status", async () => {
      const grant = await issueGrant(s, agent.id);
      const answer = await pep(origin(s), agent.key, "/access/v1/evaluation", ask(grant.id, "files.delete"));
      expect(answer.status).toBe(200);
      expect(answer.body.decision).toBe(false);
      expect(answer.body.context.outcome).toBe("deny");
      expect(Object.keys(answer.body.context.reason_admin)).toEqual(["403"]);
      expect(typeof answer.body.context.reason_user["403"]).toBe("string");
    });

    it("a gated action is decision false with who may approve and how to retry with the approval", async () => {
      const grant = await issueGrant(s, agent.id, { policy: 'amount_minor <= 500 || approver == "cfo@example.com"' });
      const answer = await pep(
        origin(s),
        agent.key,
        "/access/v1/evaluation",
        ask(grant.id, "payments.send", { amount_minor: 600, currency: "EUR" }),
      );
      expect(answer.status).toBe(200);
      expect(answer.body.decision).toBe(false);
      expect(answer.body.context.outcome).toBe("gated");
      expect(answer.body.context.approval.approvers).toContain("cfo@example.com");
      expect(answer.body.context.approval.approve).toBe(`POST /v1/decisions/${answer.body.context.ledger_id}/approve`);
      expect(answer.body.context.approval.retry).toContain("context.approval_id");
    });

    it("a request that names no grant is decision false with its reason, and nothing is sealed", async () => {
      const answer = await pep(origin(s), agent.key, "/access/v1/evaluation", {
        subject: { type: "agent", id: agent.id },
        action: { name: "payments.send" },
        resource: { type: "invoice", id: "inv-1" },
      });
      expect(answer.status).toBe(200);
      expect(answer.body.decision).toBe(false);
      expect(answer.body.context.error.message).toContain("names no grant");
    });

    it("a resource of another type names its grant in context.grant_id and reaches the policy as args.resource", async () => {
      const grant = await issueGrant(s, agent.id, { policy: 'args.resource.type == "invoice"' });
      const answer = await pep(origin(s), agent.key, "/access/v1/evaluation", {
        subject: { type: "agent", id: agent.id, properties: { attestation: ATTESTATION } },
        action: { name: "payments.send" },
        resource: { type: "invoice", id: "inv-7" },
        context: { grant_id: grant.id },
      });
      expect(answer.status).toBe(200);
      expect(answer.body.decision).toBe(true);
      const elsewhere = await pep(origin(s), agent.key, "/access/v1/evaluation", {
        subject: { type: "agent", id: agent.id, properties: { attestation: ATTESTATION } },
        action: { name: "payments.send" },
        resource: { type: "contract", id: "c-1" },
        context: { grant_id: grant.id },
      });
      expect(elsewhere.body.decision).toBe(false);
    });

    it("the same X-Request-ID from the same key replays the first answer and has no second effect", async () => {
      const grant = await issueGrant(s, agent.id, { budget_amount_minor: 500 });
      const request = ask(grant.id, "payments.send", { amount_minor: 400, currency: "EUR" });
      const first = await pep(origin(s), agent.key, "/access/v1/evaluation", request, "req-replay-1");
      const second = await pep(origin(s), agent.key, "/access/v1/evaluation", request, "req-replay-1");
      expect(first.headers.get("x-request-id")).toBe("req-replay-1");
      expect(second.body).toEqual(first.body);
      expect(first.body.decision).toBe(true);
      // A new request id is a new decision: the budget of 500 has 100 left, so 400 more is refused.
      const third = await pep(origin(s), agent.key, "/access/v1/evaluation", request, "req-replay-2");
      expect(third.body.decision).toBe(false);
    });

    it("the same X-Request-ID with another body is refused 422 and decides nothing; the id's length is bounded at 240", async () => {
      const grant = await issueGrant(s, agent.id);
      const first = await pep(origin(s), agent.key, "/access/v1/evaluation", ask(grant.id, "payments.send"), "req-reused");
      expect(first.body.decision).toBe(true);
      const other = await pep(origin(s), agent.key, "/access/v1/evaluation", ask(grant.id, "payments.refund"), "req-reused");
      expect(other.status).toBe(422);
      expect(other.body.code).toBe("idempotency_key_reused");
      const longest = await pep(
        origin(s),
        agent.key,
        "/access/v1/evaluation",
        ask(grant.id, "payments.send"),
        "r".repeat(AUTHZEN_LIMITS.requestIdCharsMax),
      );
      expect(longest.status).toBe(200);
      const tooLong = await pep(
        origin(s),
        agent.key,
        "/access/v1/evaluation",
        ask(grant.id, "payments.send"),
        "r".repeat(AUTHZEN_LIMITS.requestIdCharsMax + 1),
      );
      expect(tooLong.status).toBe(400);
      expect(tooLong.body.decision).toBeUndefined();
    });

    it(`an evaluations request holds at most ${AUTHZEN_LIMITS.evaluationsMax} members; one more is a 400 that decides nothing`, async () => {
      const grant = await issueGrant(s, agent.id);
      const request = (n: number) => ({ ...ask(grant.id, "payments.send"), evaluations: Array.from({ length: n }, () => ({})) });
      const most = await pep(origin(s), agent.key, "/access/v1/evaluations", request(AUTHZEN_LIMITS.evaluationsMax));
      expect(most.body.evaluations).toHaveLength(AUTHZEN_LIMITS.evaluationsMax);
      const ledger = async () =>
        (await s.call<{ records: unknown[] }>("GET", `/grants/${grant.id}/ledger?limit=100`, ADMIN_KEY)).body.records.length;
      const before = await ledger();
      const over = await pep(origin(s), agent.key, "/access/v1/evaluations", request(AUTHZEN_LIMITS.evaluationsMax + 1));
      expect(over.status).toBe(400);
      expect(await ledger()).toBe(before);
    });

    it("a key asking for an agent it does not speak for is refused as an unknown key, with nothing written", async () => {
      const grant = await issueGrant(s, agent.id);
      const before = await s.call("GET", `/grants/${grant.id}/ledger?limit=100`, ADMIN_KEY);
      const answer = await pep(origin(s), other.key, "/access/v1/evaluation", ask(grant.id, "payments.send"));
      expect(answer.status).toBe(401);
      expect(answer.body.code).toBe("unauthenticated");
      const unknown = await pep(
        origin(s),
        "aa_not-a-key-0123456789abcdefghijklmnopq",
        "/access/v1/evaluation",
        ask(grant.id, "payments.send"),
      );
      expect(unknown.status).toBe(401);
      expect(answer.body.detail).toBe(unknown.body.detail);
      expect((await s.call("GET", `/grants/${grant.id}/ledger?limit=100`, ADMIN_KEY)).body).toEqual(before.body);
    });

    describe("an enforcement point's key (`enforcer`)", () => {
      let enforcer: { id: string; key: string };
      beforeAll(async () => {
        const created = await s.call<{ id: string; key: string }>("POST", "/keys", ADMIN_KEY, {
          identity: "gateway-pep",
          kind: "service",
          roles: ["enforcer"],
          agent_ids: [agent.id],
        });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        enforcer = created.body;
      });

      it("asks for an agent its list names; the decision is sealed under the enforcer's key and counts against the budget", async () => {
        const grant = await issueGrant(s, agent.id, { budget_amount_minor: 100 });
        const first = await pep(
          origin(s),
          enforcer.key,
          "/access/v1/evaluation",
          ask(grant.id, "payments.send", { amount_minor: 60, currency: "EUR" }),
        );
        expect(first.status).toBe(200);
        expect(permits(first)).toBe(true);
        const second = await pep(
          origin(s),
          enforcer.key,
          "/access/v1/evaluation",
          ask(grant.id, "payments.send", { amount_minor: 60, currency: "EUR" }),
        );
        expect(permits(second)).toBe(false);
        expect(second.body.context.outcome).toBe("exhausted");
        const ledger = await s.call<{ records: { ledger_id: string; key_id: string | null }[] }>(
          "GET",
          `/grants/${grant.id}/ledger?limit=100`,
          ADMIN_KEY,
        );
        const sealed = ledger.body.records.find((r) => r.ledger_id === first.body.context.ledger_id);
        expect(sealed?.key_id).toBe(enforcer.id);
      });

      it("is refused, exactly as an unknown key, for an agent its list does not name, and for a whole batch holding one; nothing is written", async () => {
        const grant = await issueGrant(s, other.id);
        const before = await s.call("GET", `/grants/${grant.id}/ledger?limit=100`, ADMIN_KEY);
        const foreign = {
          subject: { type: "agent", id: other.id, properties: { attestation: ATTESTATION } },
          action: { name: "payments.send" },
          resource: { type: "grant", id: grant.id },
        };
        const refused = await pep(origin(s), enforcer.key, "/access/v1/evaluation", foreign);
        const unknown = await pep(origin(s), "aa_not-a-key-0123456789abcdefghijklmnopq", "/access/v1/evaluation", foreign);
        expect(refused.status).toBe(401);
        expect(refused.body).toEqual({ ...unknown.body, instance: refused.body.instance });
        const mine = await issueGrant(s, agent.id);
        const batch = await pep(origin(s), enforcer.key, "/access/v1/evaluations", {
          evaluations: [ask(mine.id, "payments.send"), foreign],
        });
        expect(batch.status).toBe(401);
        expect((await s.call("GET", `/grants/${grant.id}/ledger?limit=100`, ADMIN_KEY)).body).toEqual(before.body);
        const untouched = await s.call<{ records: unknown[] }>("GET", `/grants/${mine.id}/ledger?limit=100`, ADMIN_KEY);
        expect(untouched.body.records).toEqual([]);
      });

      it("may not use /v1/authorize: an enforcer asks through AuthZEN only", async () => {
        const grant = await issueGrant(s, agent.id);
        const answer = await s.call("POST", "/authorize", enforcer.key, {
          grant_id: grant.id,
          tool: "payments.send",
          attestation: ATTESTATION,
        });
        expect(answer.status).toBe(403);
      });

      it("is made with its explicit list only: none, an empty list, a list over the limit, or another role beside it is refused", async () => {
        const make = (extra: Record<string, unknown>) =>
          s.call("POST", "/keys", ADMIN_KEY, { identity: "pep-edge", kind: "service", roles: ["enforcer"], ...extra });
        // A rule of keys is a 422 `invalid_key_request`; a list the schema refuses (empty, too long) a 400.
        expect((await make({})).status).toBe(422);
        expect((await make({ agent_ids: [] })).status).toBe(400);
        expect((await make({ roles: ["enforcer", "auditor"], agent_ids: [agent.id] })).status).toBe(422);
        expect((await make({ roles: ["auditor"], agent_ids: [agent.id] })).status).toBe(422);
        expect((await make({ kind: "human", identity: "pep@example.com", agent_ids: [agent.id] })).status).toBe(422);
        expect((await make({ agent_ids: ["agt_01h00000000000000000000000"] })).status).toBe(404);
        const ids = (n: number) => Array.from({ length: n }, (_, i) => `agt_01h${String(i).padStart(23, "0")}`);
        const over = await make({ agent_ids: ids(API_LIMITS.enforcerAgentsMax + 1) });
        expect(over.status).toBe(400);
        // At the limit the list is well formed; these agents do not exist, so it is refused for that alone.
        expect((await make({ agent_ids: ids(API_LIMITS.enforcerAgentsMax) })).status).toBe(404);
      });
    });

    it("a malformed evaluation is a 400 with no decision and changes nothing", async () => {
      for (const raw of [
        "{",
        "[]",
        JSON.stringify({ subject: { type: "agent" }, action: { name: "x" }, resource: { type: "grant", id: "g" } }),
      ]) {
        const response = await fetch(`${origin(s)}/access/v1/evaluation`, {
          method: "POST",
          headers: { authorization: `Bearer ${agent.key}`, "content-type": "application/json" },
          body: raw,
        });
        expect(response.status).toBe(400);
        const body = (await response.json()) as Record<string, unknown>;
        expect(body["decision"]).toBeUndefined();
      }
    });

    it("a batch is decided in order, each member seeing the budget the ones before it spent", async () => {
      const grant = await issueGrant(s, agent.id, { budget_amount_minor: 1_000 });
      const member = { context: { amount_minor: 400, currency: "EUR" } };
      const answer = await pep(origin(s), agent.key, "/access/v1/evaluations", {
        subject: { type: "agent", id: agent.id, properties: { attestation: ATTESTATION } },
        action: { name: "payments.send" },
        resource: { type: "grant", id: grant.id },
        evaluations: [member, member, member],
      });
      expect(answer.body.evaluations.map((e: { decision: boolean }) => e.decision)).toEqual([true, true, false]);
    });

    it("the specification's three semantics: execute_all, deny_on_first_deny, permit_on_first_permit", async () => {
      const grant = await issueGrant(s, agent.id, { scope: { tool: ["read"] } });
      const denied = await issueGrant(s, agent.id, { scope: { tool: ["write"] } });
      // Three documents as in the specification's example; document 2 is one the agent may not read.
      const documents = [grant.id, denied.id, grant.id].map((id, n) => ({
        resource: { type: "document", id: String(n + 1) },
        context: { grant_id: id },
      }));
      const request = (semantic: string) => ({
        subject: { type: "agent", id: agent.id, properties: { attestation: ATTESTATION } },
        action: { name: "read" },
        options: { evaluations_semantic: semantic },
        evaluations: documents,
      });
      const decisions = async (semantic: string) =>
        (await pep(origin(s), agent.key, "/access/v1/evaluations", request(semantic))).body.evaluations.map(
          (e: { decision: boolean }) => e.decision,
        );
      expect(await decisions("execute_all")).toEqual([true, false, true]);
      const sealed = async () => {
        let n = 0;
        for (const id of [grant.id, denied.id])
          n += (await s.call<{ records: unknown[] }>("GET", `/grants/${id}/ledger?limit=100`, ADMIN_KEY)).body.records.length;
        return n;
      };
      const before = await sealed();
      expect(await decisions("deny_on_first_deny")).toEqual([true, false]);
      expect(await decisions("permit_on_first_permit")).toEqual([true]);
      // Members after the stop were never decided: 2 + 1 new decisions, not 3 + 3.
      expect((await sealed()) - before).toBe(3);
    });

    it("an unknown evaluations_semantic is a 400 and decides nothing", async () => {
      const grant = await issueGrant(s, agent.id);
      const response = await fetch(`${origin(s)}/access/v1/evaluations`, {
        method: "POST",
        headers: { authorization: `Bearer ${agent.key}`, "content-type": "application/json" },
        body: JSON.stringify({ ...ask(grant.id, "payments.send"), options: { evaluations_semantic: "some" }, evaluations: [{}] }),
      });
      expect(response.status).toBe(400);
    });

    describe("search", () => {
      const subjectOf = (id: string) => ({ type: "agent", id, properties: { attestation: ATTESTATION } });
      const names = (answer: Answer): string[] => answer.body.results.map((r: { name: string }) => r.name);

      it("lists the actions of a grant the agent may take now; one the policy decides on arguments not given is a candidate", async () => {
        const plain = await issueGrant(s, agent.id, { scope: { tool: ["payments.send", "payments.refund", "reports.*"] } });
        const answer = await search(origin(s), agent.key, "action", {
          subject: subjectOf(agent.id),
          resource: { type: "grant", id: plain.id },
        });
        expect(answer.status).toBe(200);
        expect(names(answer)).toEqual(["payments.send", "payments.refund", "reports.*"]);
        expect(answer.body.results[0].properties).toEqual({ candidate: false, pattern: false });
        expect(answer.body.results[2].properties).toMatchObject({ candidate: true, pattern: true });
        expect(answer.body.page).toEqual({ next_token: "", count: 3, total: 3 });

        const guarded = await issueGrant(s, agent.id, { scope: { tool: ["payments.send"] }, policy: 'args.to == "ACME"' });
        const candidate = await search(origin(s), agent.key, "action", {
          subject: subjectOf(agent.id),
          resource: { type: "grant", id: guarded.id },
        });
        expect(candidate.body.results).toEqual([
          { name: "payments.send", properties: { candidate: true, pattern: false, gate: "policy" } },
        ]);
        // Given the arguments in the context, the same search is definite.
        const given = await search(origin(s), agent.key, "action", {
          subject: subjectOf(agent.id),
          resource: { type: "grant", id: guarded.id },
          context: { args: { to: "ACME" } },
        });
        expect(given.body.results[0].properties).toEqual({ candidate: false, pattern: false });
      });

      it("never lists an action the grant's status or budget already refuses, and writes nothing", async () => {
        const used = await issueGrant(s, agent.id, { scope: { tool: ["payments.send"] }, budget_count: 1 });
        const ask1 = await pep(origin(s), agent.key, "/access/v1/evaluation", ask(used.id, "payments.send"));
        expect(permits(ask1)).toBe(true);
        const exhausted = await search(origin(s), agent.key, "action", {
          subject: subjectOf(agent.id),
          resource: { type: "grant", id: used.id },
        });
        expect(exhausted.body.results).toEqual([]);
        const revoked = await issueGrant(s, agent.id, { scope: { tool: ["payments.send"] } });
        expect((await s.call("POST", `/grants/${revoked.id}/revoke`, ADMIN_KEY, { reason: "test" })).status).toBe(200);
        const before = await s.call("GET", `/grants/${revoked.id}/ledger?limit=100`, ADMIN_KEY);
        const none = await search(origin(s), agent.key, "action", {
          subject: subjectOf(agent.id),
          resource: { type: "grant", id: revoked.id },
        });
        expect(none.body.results).toEqual([]);
        expect((await s.call("GET", `/grants/${revoked.id}/ledger?limit=100`, ADMIN_KEY)).body).toEqual(before.body);
      });

      it("pages with the specification's tokens; a token for another request or a limit over 100 is a 400", async () => {
        const grant = await issueGrant(s, agent.id, { scope: { tool: ["payments.a", "payments.b", "payments.c"] } });
        const request = { subject: subjectOf(agent.id), resource: { type: "grant", id: grant.id }, page: { limit: 2 } };
        const first = await search(origin(s), agent.key, "action", request);
        expect(names(first)).toEqual(["payments.a", "payments.b"]);
        expect(first.body.page.next_token).not.toBe("");
        expect(first.body.page).toMatchObject({ count: 2, total: 3 });
        const second = await search(origin(s), agent.key, "action", { ...request, page: { limit: 2, token: first.body.page.next_token } });
        expect(names(second)).toEqual(["payments.c"]);
        expect(second.body.page).toEqual({ next_token: "", count: 1, total: 3 });
        const changed = await search(origin(s), agent.key, "action", { ...request, page: { limit: 1, token: first.body.page.next_token } });
        expect(changed.status).toBe(400);
        expect((await search(origin(s), agent.key, "action", { ...request, page: { token: "not-a-token" } })).status).toBe(400);
        expect((await search(origin(s), agent.key, "action", { ...request, page: { limit: 100 } })).status).toBe(200);
        expect((await search(origin(s), agent.key, "action", { ...request, page: { limit: 101 } })).status).toBe(400);
      });

      it("finds the agents that may take an action among those the key speaks for, and refuses a subject it does not", async () => {
        const pep = await s.call<{ key: string }>("POST", "/keys", ADMIN_KEY, {
          identity: "search-pep",
          kind: "service",
          roles: ["enforcer"],
          agent_ids: [agent.id, other.id],
        });
        const mine = await issueGrant(s, agent.id, { scope: { tool: ["files.read"] } });
        const subjects = await search(origin(s), pep.body.key, "subject", {
          subject: { type: "agent" },
          action: { name: "files.read" },
          resource: { type: "file", id: "/srv/report.txt" },
        });
        expect(subjects.status).toBe(200);
        expect(subjects.body.results).toEqual([{ type: "agent", id: agent.id, properties: { candidate: true, grant_ids: [mine.id] } }]);
        // The agent key sees itself only; the other agent has no grant over `files.read`.
        const asOther = await search(origin(s), other.key, "subject", {
          subject: { type: "agent" },
          action: { name: "files.read" },
          resource: { type: "grant", id: mine.id },
        });
        expect(asOther.body.results).toEqual([]);
        const foreign = await search(origin(s), other.key, "action", {
          subject: subjectOf(agent.id),
          resource: { type: "grant", id: mine.id },
        });
        expect(foreign.status).toBe(401);
      });
    });

    it("answers any body sent to any AuthZEN endpoint with a 200 or a 4xx, never a 5xx, and a search writes nothing", async () => {
      const grant = await issueGrant(s, agent.id, { scope: { tool: ["payments.send", "reports.*"] }, policy: 'args.to == "ACME"' });
      const before = await s.call("GET", `/grants/${grant.id}/ledger?limit=100`, ADMIN_KEY);
      const valid = { subject: { type: "agent", id: agent.id }, resource: { type: "grant", id: grant.id } };
      const hostile = fc.oneof(
        fc.jsonValue({ maxDepth: 4 }),
        fc.record(
          {
            subject: fc.oneof(fc.constant(valid.subject), fc.jsonValue({ maxDepth: 2 })),
            resource: fc.oneof(fc.constant(valid.resource), fc.jsonValue({ maxDepth: 2 })),
            action: fc.oneof(fc.record({ name: fc.string({ maxLength: 40 }) }), fc.jsonValue({ maxDepth: 2 })),
            context: fc.oneof(fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 })), fc.jsonValue({ maxDepth: 1 })),
            page: fc.oneof(
              fc.record(
                { limit: fc.oneof(fc.integer({ min: -5, max: 200 }), fc.double()), token: fc.string({ maxLength: 40 }) },
                { requiredKeys: [] },
              ),
              fc.jsonValue({ maxDepth: 1 }),
            ),
          },
          { requiredKeys: [] },
        ),
      );
      /** Posts `body` to `path` as the agent: a 200 or a 4xx, never a 5xx. */
      const answeredBelow500 = async (path: string, body: unknown): Promise<void> => {
        const response = await fetch(`${origin(s)}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${agent.key}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        expect(response.status, `${path} ${JSON.stringify(body)}`).toBeLessThan(500);
        await response.arrayBuffer();
      };
      const paths = ["/access/v1/search/action", "/access/v1/search/subject", "/access/v1/evaluation", "/access/v1/evaluations"];
      await fc.assert(fc.asyncProperty(fc.constantFrom(...paths.slice(0, 2)), hostile, answeredBelow500), { numRuns: 120 });
      expect((await s.call("GET", `/grants/${grant.id}/ledger?limit=100`, ADMIN_KEY)).body).toEqual(before.body);
      // The deciding endpoints, against a grant of their own: a 200 or a 4xx, never a 5xx.
      await fc.assert(fc.asyncProperty(fc.constantFrom(...paths.slice(2)), hostile, answeredBelow500), { numRuns: 80 });
    });

    it("the metadata names the decision point and each endpoint offered, and no resource search", async () => {
      const response = await fetch(`${origin(s)}/.well-known/authzen-configuration`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as Record<string, string>;
      expect(configurationDocument(body)).toBe(true);
      expect(body["access_evaluation_endpoint"]).toBe(`${body["policy_decision_point"]}/access/v1/evaluation`);
      expect(body["search_resource_endpoint"]).toBeUndefined();
      expect(body["search_subject_endpoint"]).toBe(`${body["policy_decision_point"]}/access/v1/search/subject`);
      expect(body["search_action_endpoint"]).toBe(`${body["policy_decision_point"]}/access/v1/search/action`);
    });

    it("the metadata names the decision point the configuration gives (AUTHORITY_AUTHZEN_PDP), whatever host was asked", async () => {
      const configured = await startDecisionServer(target, { authzenPdp: "https://pdp.example.com" });
      try {
        const body = (await (await fetch(`${origin(configured)}/.well-known/authzen-configuration`)).json()) as Record<string, string>;
        expect(configurationDocument(body)).toBe(true);
        expect(body).toEqual({
          policy_decision_point: "https://pdp.example.com",
          access_evaluation_endpoint: "https://pdp.example.com/access/v1/evaluation",
          access_evaluations_endpoint: "https://pdp.example.com/access/v1/evaluations",
          search_subject_endpoint: "https://pdp.example.com/access/v1/search/subject",
          search_action_endpoint: "https://pdp.example.com/access/v1/search/action",
        });
      } finally {
        await configured.close();
      }
    });
  });
}
