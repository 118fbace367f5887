// The HTTP behaviour of agents, certification, keys and grants, run against a real server.

import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeCursor } from "../../server/src/services/common/index.js";
import { ADMIN_KEY, CERTIFICATION, ENVIRONMENT, expectProblem, startTestServer, type TestServer } from "./http-harness.js";
import type { StoreTarget } from "./targets.js";
import type { Certificate, Grant, Key, Problem } from "@agent-authority/sdk";

/** One axis a delegate request widens. */
type Widening = NonNullable<Problem["widenings"]>[number];

const HOUR = 3_600_000;

export function grantsHttpSuite(target: StoreTarget): void {
  let t: TestServer;
  let issuer: string;
  let approver: string;
  let certifier: string;
  let serviceApprover: string;
  beforeAll(async () => {
    t = await startTestServer(target);
    issuer = await t.key("issuer@example.com", ["issuer"]);
    approver = await t.key("approver@example.com", ["approver"]);
    certifier = await t.key("certifier@example.com", ["certifier"]);
    serviceApprover = await t.key("approval-bot", ["approver"], { kind: "service" });
  });
  afterAll(async () => {
    await t?.close();
  });

  let n = 0;
  async function agent(prefix = "agent"): Promise<string> {
    n += 1;
    const reply = await t.call("POST", "/agents", { key: issuer, body: { name: `${prefix}-${n}` } });
    expect(reply.status).toBe(201);
    return reply.body.id as string;
  }
  async function certify(agentId: string): Promise<Certificate> {
    const reply = await t.call("POST", `/agents/${agentId}/certification`, { key: certifier, body: CERTIFICATION });
    expect(reply.status).toBe(201);
    return reply.body;
  }
  function grantBody(agentId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { agent_id: agentId, principal_type: "human", principal_id: "alice@example.com", scope: { tool: ["payments.*"] }, ...extra };
  }
  async function issue(agentId: string, extra: Record<string, unknown> = {}): Promise<Grant> {
    const reply = await t.call("POST", "/grants", { key: issuer, body: grantBody(agentId, extra) });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    return reply.body;
  }

  describe("service", () => {
    it("answers health and readiness without a key", async () => {
      expect((await t.call("GET", "/health")).body).toMatchObject({ status: "ok", environment: ENVIRONMENT });
      expect((await t.call("GET", "/ready")).status).toBe(200);
    });

    it("serves the OpenAPI 3.1 document built from the request schemas", async () => {
      const { grantIssueBodySchema, ENDPOINTS } = await import("@agent-authority/api");
      const doc = (await t.call("GET", "/openapi.json")).body;
      expect(doc.openapi).toBe("3.1.0");
      for (const e of ENDPOINTS) expect(doc.paths[e.path]?.[e.method], `${e.method} ${e.path}`).toBeDefined();
      const { $id: _id, ...issueSchema } = grantIssueBodySchema;
      expect(doc.components.schemas.GrantIssueBody).toEqual(JSON.parse(JSON.stringify(issueSchema)));
    });

    it("exposes Prometheus metrics by route template, never by id", async () => {
      await t.call("GET", "/grants/grt_0000000000000000000000000c", { key: ADMIN_KEY });
      const reply = await t.call("GET", "/metrics");
      expect(reply.status).toBe(200);
      expect(reply.contentType).toMatch(/^text\/plain/);
      expect(reply.body).toContain("authority_up 1");
      expect(reply.body).toMatch(/authority_http_requests_total\{method="GET",route="\/v1\/grants\/:grant_id",status="404"\} \d+/);
      expect(reply.body).toContain('authority_http_request_duration_seconds_bucket{method="GET",route="/v1/health",le="+Inf"}');
      expect(reply.body).not.toContain("grt_0000000000000000000000000c");
      // The process's own metrics come from prom-client: CPU, memory, GC and event-loop delay.
      for (const name of [
        "process_cpu_user_seconds_total",
        "process_resident_memory_bytes",
        "nodejs_eventloop_lag_seconds",
        "nodejs_gc_duration_seconds",
        "nodejs_heap_size_used_bytes",
      ]) {
        expect(reply.body).toContain(`# TYPE ${name} `);
      }
      // Each metric is described once: the hand-counted and the library's series never share a name.
      const described = [...String(reply.body).matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
      expect(new Set(described).size).toBe(described.length);
    });

    it("answers unknown routes and methods with problems", async () => {
      expectProblem(await t.call("GET", "/nowhere", { key: ADMIN_KEY }), 404, "route_not_found");
      expectProblem(await t.call("DELETE", "/grants", { key: ADMIN_KEY }), 405, "method_not_allowed");
    });
  });

  describe("agents", () => {
    it("registers one agent when the same name races", async () => {
      const replies = await Promise.all(
        Array.from({ length: 10 }, () => t.call("POST", "/agents", { key: issuer, body: { name: "racing-agent" } })),
      );
      expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
      expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
      expect(replies.filter((r) => r.status === 200)).toHaveLength(9);
    });

    it("lists agents a page at a time", async () => {
      for (let i = 0; i < 3; i += 1) await agent("paged");
      const first = (await t.call("GET", "/agents?limit=2", { key: approver })).body;
      expect(first.agents).toHaveLength(2);
      const second = (await t.call("GET", `/agents?limit=2&after=${first.next_after}`, { key: approver })).body;
      expect(second.agents[0].id > first.agents[1].id).toBe(true);
    });

    it("registers idempotently by name", async () => {
      const first = await t.call("POST", "/agents", { key: issuer, body: { name: "idempotent-agent", description: "books travel" } });
      const second = await t.call("POST", "/agents", { key: ADMIN_KEY, body: { name: "idempotent-agent" } });
      expect(first.status).toBe(201);
      expect(second.status).toBe(200);
      expect(second.body.id).toBe(first.body.id);
      expect(first.body.id).toMatch(/^agt_[0-9a-z]{26}$/);
      expect((await t.call("GET", `/agents/${first.body.id}`, { key: approver })).body.name).toBe("idempotent-agent");
    });

    it("shows an agent key only its own agent", async () => {
      const mine = await agent();
      const other = await agent();
      const key = await t.key(`svc-${mine}`, ["agent"], { kind: "service", agent_id: mine });
      expect((await t.call("GET", `/agents/${mine}`, { key })).status).toBe(200);
      expectProblem(await t.call("GET", `/agents/${other}`, { key }), 404, "agent_not_found");
    });
  });

  describe("logs", () => {
    it("are one JSON line per request with its id, and never hold a secret", async () => {
      const logs: import("./http-harness.js").LogLine[] = [];
      const logged = await startTestServer(target, {}, logs);
      try {
        const secret = (
          await logged.call("POST", "/keys", { key: ADMIN_KEY, body: { identity: "log@example.com", kind: "human", roles: ["auditor"] } })
        ).body.key;
        const reply = await logged.call("GET", "/certificates", { key: secret, via: "x-api-key" });
        await logged.call("GET", "/certificates", { key: "aa_wrong-key-0000000000000000000000000000" });
        const requests = logs.filter((l) => l.msg === "request");
        expect(requests.map((l) => l.fields["status"])).toEqual([201, 200, 401]);
        expect(requests[1]!.fields).toMatchObject({
          method: "GET",
          path: "/v1/certificates",
          request_id: reply.headers.get("x-request-id"),
        });
        expect(requests[1]!.fields["key_id"]).toMatch(/^key_/);
        const text = JSON.stringify(logs);
        expect(text).not.toContain(secret);
        expect(text).not.toContain(ADMIN_KEY);
        expect(text).not.toContain("aa_wrong-key");
      } finally {
        await logged.close();
      }
    });
  });

  describe("keys", () => {
    it("accepts the key as a bearer token and as x-api-key, shows the secret once, and revokes", async () => {
      const created = await t.call("POST", "/keys", {
        key: ADMIN_KEY,
        via: "x-api-key",
        body: { identity: "auditor@example.com", kind: "human", roles: ["auditor"] },
      });
      expect(created.status).toBe(201);
      expect(created.body.key).toMatch(/^aa_/);
      const secret = created.body.key as string;
      expect((await t.call("GET", "/certificates", { key: secret })).status).toBe(200);
      expect((await t.call("GET", "/certificates", { key: secret, via: "x-api-key" })).status).toBe(200);
      const listed = (await t.call("GET", "/keys", { key: ADMIN_KEY })).body.keys as Key[];
      expect(listed.find((k) => k.id === created.body.id)).toMatchObject({ identity: "auditor@example.com", status: "active" });
      expect(JSON.stringify(listed)).not.toContain(secret);
      const rows = (await t.db.raw("SELECT hash FROM api_keys WHERE id = ?", [created.body.id])) as { hash: string }[];
      expect(rows[0]!.hash).not.toContain(secret);
      expect((await t.call("POST", `/keys/${created.body.id}/revoke`, { key: ADMIN_KEY, body: { reason: "left" } })).body.status).toBe(
        "revoked",
      );
      expectProblem(await t.call("GET", "/certificates", { key: secret }), 401, "unauthenticated");
      expectProblem(await t.call("POST", `/keys/${created.body.id}/revoke`, { key: ADMIN_KEY }), 409, "key_already_revoked");
    });

    it("refuses to revoke the last admin key and binds agent keys to one agent", async () => {
      const admins = ((await t.call("GET", "/keys?limit=1000", { key: ADMIN_KEY })).body.keys as Key[]).filter(
        (k) => k.roles.includes("admin") && k.status === "active",
      );
      expect(admins).toHaveLength(1);
      expectProblem(await t.call("POST", `/keys/${admins[0].id}/revoke`, { key: ADMIN_KEY }), 409, "last_admin_key");
      expectProblem(
        await t.call("POST", "/keys", { key: ADMIN_KEY, body: { identity: "bot", kind: "service", roles: ["agent"] } }),
        422,
        "invalid_key_request",
      );
      const id = await agent();
      expectProblem(
        await t.call("POST", "/keys", { key: ADMIN_KEY, body: { identity: "bot", kind: "service", roles: ["issuer"], agent_id: id } }),
        422,
        "invalid_key_request",
      );
      expectProblem(
        await t.call("POST", "/keys", {
          key: ADMIN_KEY,
          body: { identity: "bot", kind: "service", roles: ["agent"], agent_id: "agt_0000000000zzzzzzzzzzzzzzzz" },
        }),
        404,
        "agent_not_found",
      );
    });

    it("never revokes the last admin key, even when two admins revoke each other at once", async () => {
      // On a server of its own: whichever admin key survives, the other tests keep theirs.
      const own = await startTestServer(target);
      try {
        const created = await own.call("POST", "/keys", {
          key: ADMIN_KEY,
          body: { identity: "second-admin@example.com", kind: "human", roles: ["admin"] },
        });
        const firstId = ((await own.call("GET", "/keys", { key: ADMIN_KEY })).body.keys as Key[]).find((k) => k.identity === "admin")!.id;
        const replies = await Promise.all([
          own.call("POST", `/keys/${created.body.id}/revoke`, { key: ADMIN_KEY }),
          own.call("POST", `/keys/${firstId}/revoke`, { key: created.body.key }),
        ]);
        // One revocation lands; the other is refused as the last admin key, or finds its own key revoked.
        expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
        expect(replies.filter((r) => r.status === 409 || r.status === 401)).toHaveLength(1);
        const admins = (await own.db.store.listKeys({ limit: 1000 })).filter((k) => k.roles.includes("admin") && k.revoked_at === null);
        expect(admins).toHaveLength(1);
      } finally {
        await own.close();
      }
    });

    it("refuses garbage and revoked keys with 401", async () => {
      expectProblem(await t.call("GET", "/keys", { key: "not-a-key" }), 401, "unauthenticated");
      expectProblem(await t.call("GET", "/keys", { key: "not-a-key", via: "x-api-key" }), 401, "unauthenticated");
    });
  });

  describe("certification", () => {
    it("takes issued_by from the authenticated human and supersedes the previous certificate", async () => {
      const id = await agent();
      expectProblem(
        await t.call("POST", `/agents/${id}/certification`, { key: certifier, body: { ...CERTIFICATION, issued_by: "someone-else" } }),
        400,
        "unknown_field",
      );
      const first = await certify(id);
      expect(first).toMatchObject({
        agent_id: id,
        environment: ENVIRONMENT,
        issued_by: "certifier@example.com",
        issued_by_email: "certifier@example.com",
        status: "valid",
      });
      expect(first.id).toMatch(/^crt_/);
      const second = await certify(id);
      const status = (await t.call("GET", `/agents/${id}/certification`, { key: issuer })).body;
      expect(status).toMatchObject({ certified: true, environment: ENVIRONMENT, certificate: { id: second.id } });
      expect(status.certificates.find((c: Certificate) => c.id === first.id)).toMatchObject({
        status: "revoked",
        superseded_by: second.id,
        revoked_by: "certifier@example.com",
      });
      const listed = (await t.call("GET", `/certificates?agent_id=${id}`, { key: ADMIN_KEY })).body.certificates;
      expect(listed.map((c: Certificate) => c.id)).toEqual([first.id, second.id]);
    });

    it("keeps exactly one valid certificate when certifications race", async () => {
      const id = await agent();
      const replies = await Promise.all(
        Array.from({ length: 8 }, () => t.call("POST", `/agents/${id}/certification`, { key: certifier, body: CERTIFICATION })),
      );
      expect(replies.map((r) => r.status)).toEqual(Array(8).fill(201));
      const all = (await t.call("GET", `/agents/${id}/certification`, { key: issuer })).body.certificates;
      expect(all).toHaveLength(8);
      expect(all.filter((c: Certificate) => c.status === "valid")).toHaveLength(1);
      expect(all.filter((c: Certificate) => c.superseded_by !== null)).toHaveLength(7);
    });

    it("refuses a service key", async () => {
      const bot = await t.key("certification-bot", ["certifier"], { kind: "service" });
      const id = await agent();
      expectProblem(await t.call("POST", `/agents/${id}/certification`, { key: bot, body: CERTIFICATION }), 403, "human_required");
    });

    it("revokes a certificate by field, keeping the record", async () => {
      const id = await agent();
      const cert = await certify(id);
      const revoked = await t.call("POST", `/certificates/${cert.id}/revoke`, { key: certifier, body: { reason: "model changed" } });
      expect(revoked.body).toMatchObject({
        id: cert.id,
        status: "revoked",
        revoked_by: "certifier@example.com",
        revocation_reason: "model changed",
      });
      expect(revoked.body.revoked_at).toEqual(expect.any(String));
      expect((await t.call("GET", `/agents/${id}/certification`, { key: issuer })).body).toMatchObject({
        certified: false,
        certificate: null,
      });
      expectProblem(await t.call("POST", `/certificates/${cert.id}/revoke`, { key: certifier }), 409, "certificate_already_revoked");
    });

    it("certifies for another environment without making the agent valid here", async () => {
      const id = await agent();
      await t.call("POST", `/agents/${id}/certification`, { key: certifier, body: { ...CERTIFICATION, environment: "production" } });
      expect((await t.call("GET", `/agents/${id}/certification`, { key: issuer })).body.certified).toBe(false);
      expectProblem(await t.call("POST", "/grants", { key: issuer, body: grantBody(id) }), 403, "certification_required");
    });
  });

  describe("issue", () => {
    it("applies the defaults of docs/attenuation.md", async () => {
      const id = await agent();
      await certify(id);
      const g = await issue(id);
      expect(g.id).toMatch(/^grt_[0-9a-z]{26}$/);
      expect(g).toMatchObject({
        status: "active",
        enforcement_mode: "enforce",
        ttl_hours: 24,
        delegation_policy: "none",
        budget_amount_minor: 0,
        budget_count: null,
        budget_currency: null,
        conditions: { clean_context: false },
        policy: null,
        parent_id: null,
        root_id: g.id,
        issued_by: "issuer@example.com",
        approved_by: null,
        uses: 0,
        held_minor: 0,
        settled_minor: 0,
      });
      expect(Date.parse(g.expires_at) - Date.parse(g.issued_at)).toBe(24 * HOUR);
      expect((await t.call("GET", `/grants/${g.id}`, { key: approver })).body).toEqual(g);
    });

    it("is born pending when asked or over the auto-approval ceiling, and a human other than the issuer approves", async () => {
      const id = await agent();
      await certify(id);
      const asked = await issue(id, { require_approval: true });
      const over = await issue(id, { budget_amount_minor: 10_001, budget_currency: "EUR" });
      const under = await issue(id, { budget_amount_minor: 10_000, budget_currency: "EUR" });
      expect([asked.status, over.status, under.status]).toEqual(["pending_approval", "pending_approval", "active"]);
      const pending = (await t.call("GET", "/grants/pending", { key: approver })).body.grants.map((g: Grant) => g.id);
      expect(pending).toEqual(expect.arrayContaining([asked.id, over.id]));
      expect(pending).not.toContain(under.id);

      const both = await t.key("both@example.com", ["issuer", "approver"]);
      const own = await t.call("POST", "/grants", { key: both, body: grantBody(id, { require_approval: true }) });
      expectProblem(await t.call("POST", `/grants/${own.body.id}/approve`, { key: both }), 403, "self_approval");
      expectProblem(await t.call("POST", `/grants/${asked.id}/approve`, { key: serviceApprover }), 403, "human_required");

      const approved = await t.call("POST", `/grants/${asked.id}/approve`, { key: approver, body: { note: "checked with finance" } });
      expect(approved.status).toBe(200);
      expect(approved.body).toMatchObject({ status: "active", approved_by: "approver@example.com" });
      expect(approved.body.approved_at).toEqual(expect.any(String));
      expectProblem(await t.call("POST", `/grants/${asked.id}/approve`, { key: approver }), 409, "grant_not_pending");
      expectProblem(await t.call("POST", `/grants/${under.id}/approve`, { key: approver }), 409, "grant_not_pending");
    });
  });

  describe("certification check", () => {
    it("lets an uncertified agent hold observe authority only, on every path", async () => {
      const id = await agent("uncertified");
      const certifiedParentAgent = await agent();
      await certify(certifiedParentAgent);
      const before = await t.db.store.countRows();
      // Issue.
      expectProblem(await t.call("POST", "/grants", { key: issuer, body: grantBody(id) }), 403, "certification_required");
      expectProblem(
        await t.call("POST", "/grants", { key: issuer, body: grantBody(id, { enforcement_mode: "enforce" }) }),
        403,
        "certification_required",
      );
      const observed = await issue(id, { enforcement_mode: "observe", delegation_policy: "attenuating" });
      // Enforcement escalation.
      expectProblem(
        await t.call("POST", `/grants/${observed.id}/enforcement`, { key: issuer, body: { enforcement_mode: "enforce" } }),
        403,
        "certification_required",
      );
      // Delegation to a different agent, and to the same agent in a stricter mode.
      const parent = await issue(certifiedParentAgent, { delegation_policy: "attenuating" });
      expectProblem(
        await t.call("POST", `/grants/${parent.id}/delegate`, { key: issuer, body: { agent_id: id } }),
        403,
        "certification_required",
      );
      expectProblem(
        await t.call("POST", `/grants/${observed.id}/delegate`, { key: issuer, body: { agent_id: id, enforcement_mode: "enforce" } }),
        403,
        "certification_required",
      );
      const observeParent = await issue(certifiedParentAgent, { delegation_policy: "attenuating", enforcement_mode: "observe" });
      const observeChild = await t.call("POST", `/grants/${observeParent.id}/delegate`, { key: issuer, body: { agent_id: id } });
      expect(observeChild.status, JSON.stringify(observeChild.body)).toBe(201);
      // Approval of a pending grant whose agent lost its certificate in the meantime.
      const later = await agent();
      const cert = await certify(later);
      const pending = await issue(later, { require_approval: true });
      await t.call("POST", `/certificates/${cert.id}/revoke`, { key: certifier });
      expectProblem(await t.call("POST", `/grants/${pending.id}/approve`, { key: approver }), 403, "certification_required");
      const after = await t.db.store.countRows();
      // Exactly what succeeded was written: the observe grant, the two parents, the observe child
      // and the later agent's pending grant; every refusal wrote nothing.
      expect(after["grants"]! - before["grants"]!).toBe(5);
      expect(observeChild.body.enforcement_mode).toBe("observe");
      expect((await t.call("GET", `/grants/${observed.id}`, { key: issuer })).body.enforcement_mode).toBe("observe");
    });

    it("lets a certified agent be promoted, escalation only", async () => {
      const id = await agent();
      const g = await issue(id, { enforcement_mode: "observe" });
      await certify(id);
      const promoted = await t.call("POST", `/grants/${g.id}/enforcement`, { key: issuer, body: { enforcement_mode: "enforce" } });
      expect(promoted.status).toBe(200);
      expect(promoted.body.enforcement_mode).toBe("enforce");
      expectProblem(
        await t.call("POST", `/grants/${g.id}/enforcement`, { key: issuer, body: { enforcement_mode: "observe" } }),
        422,
        "not_an_escalation",
      );
      expectProblem(
        await t.call("POST", `/grants/${g.id}/enforcement`, { key: issuer, body: { enforcement_mode: "enforce" } }),
        422,
        "not_an_escalation",
      );
    });

    it("covers every endpoint that issues or escalates authority", async () => {
      const { ENDPOINTS } = await import("@agent-authority/api");
      // Each POST under /grants or /agents is classified; a new one fails here until it is.
      const classified: Record<string, string> = {
        issueGrant: "checked (tested above)",
        delegateGrant: "checked (tested above)",
        escalateEnforcement: "checked (tested above)",
        approveGrant: "checked (tested above)",
        revokeGrant: "takes authority away",
        previewGrant: "creates nothing",
        createAgent: "grants no authority",
        certifyAgent: "is the certification itself",
        declareContract: "grants no authority (a contract only measures)",
        createBreaker: "grants no authority (born in observe; its actions only take authority away)",
        instantiateGrantFamily: "checked: the issue path itself (403 tested in families-http.ts)",
        pushGrantFamily: "grants no authority (defines a template)",
        previewFamilyImpact: "creates nothing",
      };
      const posts = ENDPOINTS.filter((e) => e.method === "post" && /^\/(grants|agents|grant-families)/.test(e.path)).map(
        (e) => e.operationId,
      );
      expect(posts.filter((op) => classified[op] === undefined)).toEqual([]);
    });
  });

  describe("delegate", () => {
    let parentAgent: string;
    let childAgent: string;
    let parent: Grant;
    beforeAll(async () => {
      parentAgent = await agent();
      childAgent = await agent();
      await certify(parentAgent);
      await certify(childAgent);
      parent = await issue(parentAgent, {
        delegation_policy: "attenuating",
        budget_amount_minor: 5_000,
        budget_currency: "EUR",
        budget_count: 10,
        scope: { tool: ["payments.*", "email.send"] },
        policy: undefined,
        conditions: { clean_context: true },
      });
    });

    it("inherits every field left out: the smallest request gives a child equal to the parent", async () => {
      const reply = await t.call("POST", `/grants/${parent.id}/delegate`, { key: issuer, body: { agent_id: childAgent } });
      expect(reply.status, JSON.stringify(reply.body)).toBe(201);
      const child = reply.body;
      expect(child).toMatchObject({
        parent_id: parent.id,
        root_id: parent.id,
        agent_id: childAgent,
        status: "active",
        scope: parent.scope,
        budget_amount_minor: 5_000,
        budget_currency: "EUR",
        budget_count: 10,
        conditions: { clean_context: true },
        enforcement_mode: "enforce",
        delegation_policy: "attenuating",
        expires_at: parent.expires_at,
        principal_id: parent.principal_id,
        audience: parent.audience,
      });
    });

    it("refuses a parent that does not allow delegation", async () => {
      const closed = await issue(parentAgent);
      const reply = await t.call("POST", `/grants/${closed.id}/delegate`, { key: issuer, body: { agent_id: childAgent } });
      expectProblem(reply, 422, "delegation_widens");
      expect(reply.body.widenings.map((w: Widening) => w.axis)).toContain("delegation_policy");
    });

    it("lists every widening axis and creates nothing", async () => {
      const before = await t.db.store.countRows();
      const reply = await t.call("POST", `/grants/${parent.id}/delegate`, {
        key: issuer,
        body: {
          agent_id: childAgent,
          scope: { tool: ["payments.*", "shell.exec"] },
          budget_amount_minor: 9_000,
          budget_count: 11,
          ttl_hours: 48,
          conditions: { clean_context: false },
          enforcement_mode: "observe",
        },
      });
      expectProblem(reply, 422, "delegation_widens");
      const axes = reply.body.widenings.map((w: Widening) => w.axis);
      expect(axes).toEqual(
        expect.arrayContaining([
          "scope.tool",
          "budget_amount_minor",
          "budget_count",
          "window",
          "conditions.clean_context",
          "enforcement_mode",
        ]),
      );
      expect(await t.db.store.countRows()).toEqual(before);
    });

    it("lets an agent key delegate only from its own agent's grants", async () => {
      const agentKey = await t.key(`svc-${parentAgent}`, ["agent"], { kind: "service", agent_id: parentAgent });
      const own = await t.call("POST", `/grants/${parent.id}/delegate`, {
        key: agentKey,
        body: { agent_id: childAgent, budget_amount_minor: 100 },
      });
      expect(own.status).toBe(201);
      expect(own.body.issued_by).toBe(`svc-${parentAgent}`);
      const otherKey = await t.key(`svc-${childAgent}`, ["agent"], { kind: "service", agent_id: childAgent });
      expectProblem(
        await t.call("POST", `/grants/${parent.id}/delegate`, { key: otherKey, body: { agent_id: childAgent } }),
        404,
        "grant_not_found",
      );
      expectProblem(await t.call("GET", `/grants/${parent.id}`, { key: otherKey }), 404, "grant_not_found");
    });

    it("refuses to delegate from a pending parent", async () => {
      const pending = await issue(parentAgent, { delegation_policy: "attenuating", require_approval: true });
      expectProblem(
        await t.call("POST", `/grants/${pending.id}/delegate`, { key: issuer, body: { agent_id: childAgent } }),
        409,
        "grant_not_active",
      );
    });
  });

  describe("revoke", () => {
    it("revokes the whole subtree and answers with exactly the revoked ids", async () => {
      const a = await agent();
      await certify(a);
      const root = await issue(a, { delegation_policy: "attenuating" });
      const d = (id: string) => t.call("POST", `/grants/${id}/delegate`, { key: issuer, body: { agent_id: a } });
      const c1 = (await d(root.id)).body;
      const c2 = (await d(root.id)).body;
      const g1 = (await d(c1.id)).body;
      const unrelated = await issue(a);
      const partial = await t.call("POST", `/grants/${c1.id}/revoke`, { key: issuer, body: { reason: "task done" } });
      expect(partial.status).toBe(200);
      expect(new Set(partial.body.revoked)).toEqual(new Set([c1.id, g1.id]));
      const all = await t.call("POST", `/grants/${root.id}/revoke`, { key: approver });
      expect(new Set(all.body.revoked)).toEqual(new Set([root.id, c2.id]));
      for (const id of [root.id, c1.id, c2.id, g1.id]) {
        expect((await t.call("GET", `/grants/${id}`, { key: issuer })).body.status).toBe("revoked");
      }
      const g1Now = (await t.call("GET", `/grants/${g1.id}`, { key: issuer })).body;
      expect(g1Now).toMatchObject({ revoked_by: "issuer@example.com", revocation_reason: "task done" });
      expect((await t.call("GET", `/grants/${unrelated.id}`, { key: issuer })).body.status).toBe("active");
      expectProblem(await t.call("POST", `/grants/${root.id}/revoke`, { key: issuer }), 409, "grant_already_revoked");
      expectProblem(await t.call("POST", `/grants/${root.id}/delegate`, { key: issuer, body: { agent_id: a } }), 409, "grant_not_active");
    });

    it("never leaves a live grant below a revoked one when delegations race a revocation", async () => {
      const a = await agent();
      await certify(a);
      const root = await issue(a, { delegation_policy: "attenuating" });
      const child = (await t.call("POST", `/grants/${root.id}/delegate`, { key: issuer, body: { agent_id: a } })).body;
      const delegations = Array.from({ length: 12 }, () =>
        t.call("POST", `/grants/${child.id}/delegate`, { key: issuer, body: { agent_id: a } }),
      );
      const revocation = t.call("POST", `/grants/${root.id}/revoke`, { key: issuer });
      const [revoked, ...created] = await Promise.all([revocation, ...delegations]);
      expect(revoked.status).toBe(200);
      for (const reply of created) expect([201, 409]).toContain(reply.status);
      const tree = await t.db.store.subtreeIds(root.id);
      expect(new Set(revoked.body.revoked)).toEqual(new Set(tree));
      for (const id of tree) expect((await t.db.store.getGrant(id))!.status).toBe("revoked");
    });

    it("shows expiry as a computed status", async () => {
      const a = await agent();
      await certify(a);
      const g = await issue(a, { ttl_hours: 1 });
      expect(g.status).toBe("active");
      // The status is computed from expires_at at read time; the store keeps `active`.
      const { grantStatus } = await import("../../server/src/services/common/index.js");
      const stored = (await t.db.store.getGrant(g.id))!;
      expect(stored.status).toBe("active");
      expect(grantStatus(stored, stored.expires_at)).toBe("expired");
      expect(grantStatus(stored, stored.expires_at - 1)).toBe("active");
    });
  });

  describe("GET /v1/grants", () => {
    /** Every grant the filter matches, walking the cursor with the given page size. */
    async function walk(query: string, limit: number, key = issuer): Promise<{ ids: string[]; pages: number; cursors: string[] }> {
      const ids: string[] = [];
      const cursors: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const reply = await t.call(
          "GET",
          `/grants?${query}&limit=${limit}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
          { key },
        );
        expect(reply.status, JSON.stringify(reply.body)).toBe(200);
        ids.push(...reply.body.grants.map((g: { id: string }) => g.id));
        cursor = reply.body.next_cursor;
        if (cursor !== null) cursors.push(cursor);
        pages += 1;
      } while (cursor !== null);
      return { ids, pages, cursors };
    }

    it("filters by agent, status, principal and family, oldest first, with each grant's usage", async () => {
      const a = await agent("list");
      const b = await agent("list");
      await certify(a);
      await certify(b);
      const first = await issue(a);
      const bobs = await issue(a, { principal_id: "bob@example.com" });
      const pending = await issue(a, { require_approval: true });
      const revoked = await issue(a);
      expect((await t.call("POST", `/grants/${revoked.id}/revoke`, { key: issuer, body: { reason: "done" } })).status).toBe(200);
      const expired = await issue(a);
      await t.db.raw("UPDATE grants SET expires_at = ? WHERE id = ?", [Date.now() - HOUR, expired.id]);
      const other = await issue(b);
      const all = [first, bobs, pending, revoked, expired].map((g) => g.id);
      const list = await t.call("GET", `/grants?agent_id=${a}`, { key: issuer });
      expect(list.body.grants.map((g: { id: string }) => g.id)).toEqual(all);
      expect(list.body.grants[0]).toMatchObject({ id: first.id, agent_id: a, status: "active", uses: 0, held_minor: 0, settled_minor: 0 });
      expect(list.body.next_cursor).toBeNull();
      const ids = async (query: string) =>
        (await t.call("GET", `/grants?${query}`, { key: issuer })).body.grants.map((g: { id: string }) => g.id);
      expect(await ids(`agent_id=${a}&status=active`)).toEqual([first.id, bobs.id]);
      expect(await ids(`agent_id=${a}&status=pending_approval`)).toEqual([pending.id]);
      expect(await ids(`agent_id=${a}&status=revoked`)).toEqual([revoked.id]);
      expect(await ids(`agent_id=${a}&status=expired`)).toEqual([expired.id]);
      expect(await ids(`agent_id=${a}&principal_id=bob%40example.com`)).toEqual([bobs.id]);
      expect(await ids(`agent_id=${b}`)).toEqual([other.id]);
      expect(await ids(`agent_id=${a}&family_id=fam_0000000000000000000000000a`)).toEqual([]);
      expect(await ids("agent_id=agt_nobody")).toEqual([]);
      // An agent key lists its own agent's grants only, whatever it asks for.
      const agentKey = await t.key(`list-agent-${a}`, ["agent"], { kind: "service", agent_id: a });
      expect((await t.call("GET", "/grants?limit=1000", { key: agentKey })).body.grants.map((g: { id: string }) => g.id)).toEqual(all);
      expect((await t.call("GET", `/grants?agent_id=${b}`, { key: agentKey })).body.grants).toEqual([]);
    });

    it("pages behind an opaque cursor: every grant once, in order, and a full last page is followed by an empty one", async () => {
      const a = await agent("pages");
      await certify(a);
      const issued: string[] = [];
      for (let i = 0; i < 5; i += 1) issued.push((await issue(a)).id);
      for (const limit of [1, 2, 5, 1000]) {
        const { ids, pages, cursors } = await walk(`agent_id=${a}`, limit);
        expect(ids, `limit ${limit}`).toEqual(issued);
        // A page of exactly `limit` grants cannot know it is the last: one more, empty, page says so.
        expect(pages).toBe(Math.floor(5 / limit) + 1);
        for (const cursor of cursors) expect(cursor).not.toMatch(/grt_/);
      }
    });

    it("refuses a page size past its limit and a cursor it did not make with 400, and writes nothing", async () => {
      const { API_LIMITS } = await import("@agent-authority/api");
      expect((await t.call("GET", `/grants?limit=${API_LIMITS.listLimitMax}`, { key: issuer })).status).toBe(200);
      for (const limit of [API_LIMITS.listLimitMax + 1, 0, -1, 1.5, "x"]) {
        expectProblem(await t.call("GET", `/grants?limit=${limit}`, { key: issuer }), 400, "invalid_query");
      }
      expectProblem(await t.call("GET", "/grants?status=lost", { key: issuer }), 400, "invalid_query");
      const forged = [
        "grt_01jz0000000000000000000000",
        "not a cursor",
        "%00",
        "x".repeat(129),
        Buffer.from("grants:grt_nope").toString("base64url"),
        Buffer.from("agents:grt_01jz0000000000000000000000").toString("base64url"),
      ];
      for (const cursor of forged)
        expectProblem(await t.call("GET", `/grants?cursor=${encodeURIComponent(cursor)}`, { key: issuer }), 400, "invalid_cursor");
    });

    it("refuses a cursor it made once altered anywhere, re-pointed at another id, or made under another server key", async () => {
      const first = await t.call("GET", "/grants?limit=1", { key: issuer });
      const real = first.body.next_cursor as string;
      expect(real).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
      expect((await t.call("GET", `/grants?limit=1&cursor=${real}`, { key: issuer })).status).toBe(200);
      const [body, tag] = real.split(".") as [string, string];
      const id = Buffer.from(body, "base64url").toString("utf8").slice("grants:".length);
      const repointed = `${Buffer.from(`grants:${id.slice(0, -1)}${id.endsWith("0") ? "1" : "0"}`).toString("base64url")}.${tag}`;
      const foreign = encodeCursor(randomBytes(32), "grants", id);
      // A shrunk counterexample: the body's last character respelled with the same decoded bytes.
      const ALIKE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
      const respelled = [...ALIKE]
        .map((c) => `${body.slice(0, -1)}${c}`)
        .filter((b) => b !== body && Buffer.from(b, "base64url").equals(Buffer.from(body, "base64url")));
      for (const cursor of [repointed, foreign, `${body}.`, body, `${body}.${tag}x`, ...respelled.map((b) => `${b}.${tag}`)]) {
        expectProblem(await t.call("GET", `/grants?cursor=${encodeURIComponent(cursor)}`, { key: issuer }), 400, "invalid_cursor");
      }
      const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.";
      await fc.assert(
        fc.asyncProperty(fc.nat({ max: real.length - 1 }), fc.constantFrom(...ALPHABET), async (at, character) => {
          fc.pre(real[at] !== character);
          // Every character counts, those whose low bits base64url decoding drops included (0619).
          const altered = `${real.slice(0, at)}${character}${real.slice(at + 1)}`;
          const reply = await t.call("GET", `/grants?cursor=${encodeURIComponent(altered)}`, { key: issuer });
          expectProblem(reply, 400, "invalid_cursor");
        }),
        { numRuns: 40 },
      );
    });
  });
}
