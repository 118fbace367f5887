// The served OpenAPI document describes exactly what the server answers. Each kind of answer it
// once left out is provoked here on a real server and checked by the harness's recorder (Ajv 2020
// over the document's own schemas); the checker itself is shown to catch what does not fit.

import { familyContentHash } from "@agent-authority/families";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { familyBody } from "./families-http.js";
import { ADMIN_KEY, CERTIFICATION, startTestServer, type TestServer } from "./http-harness.js";
import { OpenApiConformance } from "./openapi-conformance.js";
import { forEachStore } from "./targets.js";

const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

forEachStore("the OpenAPI document", (target) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(target);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The violations of the served document among the answers recorded so far. */
  const violations = () => t.recorder.violations(t.baseUrl);

  it("describes a settlement record in a tree's ledger, whose `request` is null", async () => {
    const agent = (await t.call("POST", "/agents", { key: ADMIN_KEY, body: { name: "ledger-agent" } })).body.id;
    await t.call("POST", `/agents/${agent}/certification`, { key: ADMIN_KEY, body: CERTIFICATION });
    const agentKey = await t.key("ledger-agent-key", ["agent"], { kind: "service", agent_id: agent });
    const grant = (
      await t.call("POST", "/grants", {
        key: ADMIN_KEY,
        body: {
          agent_id: agent,
          principal_type: "team",
          principal_id: "ops",
          scope: { tool: ["pay"] },
          budget_amount_minor: 100,
          budget_currency: "EUR",
        },
      })
    ).body.id;
    const decision = await t.call("POST", "/authorize", {
      key: agentKey,
      body: { grant_id: grant, tool: "pay", amount_minor: 10, currency: "EUR", attestation: ATTESTATION },
    });
    expect(decision.body.outcome).toBe("allow");
    expect(
      (await t.call("POST", `/decisions/${decision.body.ledger_id}/settle`, { key: agentKey, body: { amount_minor: 5 } })).status,
    ).toBe(200);
    const ledger = await t.call("GET", `/grants/${grant}/ledger`, { key: ADMIN_KEY });
    expect(ledger.body.records.map((r: { kind: string; request: unknown }) => [r.kind, r.request === null])).toEqual([
      ["decision", false],
      ["settlement", true],
    ]);
    expect(await violations()).toEqual([]);
  });

  it("describes a grant family's errors with their severity, line and column", async () => {
    const broken = { ...familyBody(1), grant: { ...familyBody(1).grant, principal_id: "${nobody}" } };
    const refused = await t.call("POST", "/grant-families", {
      key: ADMIN_KEY,
      body: { ...broken, content_hash: familyContentHash(broken as never) },
    });
    expect(refused.body.code).toBe("invalid_family");
    expect(refused.body.diagnostics[0]).toMatchObject({ severity: "error", line: expect.any(Number), column: expect.any(Number) });
    expect(await violations()).toEqual([]);
  });

  it("describes 200 for an agent registered again and a family pushed again", async () => {
    expect((await t.call("POST", "/agents", { key: ADMIN_KEY, body: { name: "twice" } })).status).toBe(201);
    expect((await t.call("POST", "/agents", { key: ADMIN_KEY, body: { name: "twice" } })).status).toBe(200);
    expect((await t.call("POST", "/grant-families", { key: ADMIN_KEY, body: familyBody(1) })).status).toBe(201);
    expect((await t.call("POST", "/grant-families", { key: ADMIN_KEY, body: familyBody(1) })).status).toBe(200);
    expect(await violations()).toEqual([]);
  });

  it("describes 400 for a malformed id or query, 415 for a body not declared as JSON, 405 and unknown routes", async () => {
    expect((await t.call("GET", "/grants/grt_nope", { key: ADMIN_KEY })).body.code).toBe("invalid_id");
    expect((await t.call("GET", "/breakers/brk_nope", { key: ADMIN_KEY })).body.code).toBe("invalid_id");
    expect((await t.call("GET", "/grants/%E0%A4%A", { key: ADMIN_KEY })).body.code).toBe("invalid_id");
    expect((await t.call("GET", "/agents?limit=0", { key: ADMIN_KEY })).body.code).toBe("invalid_query");
    expect((await t.call("GET", "/certificates?agent_id=%00", { key: ADMIN_KEY })).body.code).toBe("invalid_query");
    expect((await t.call("POST", "/agents", { key: ADMIN_KEY, raw: '{"name":"x"}', contentType: "text/plain" })).status).toBe(415);
    expect((await t.call("POST", "/agents", { key: ADMIN_KEY, body: { name: "nul\u0000" } })).body.code).toBe("invalid_text");
    const wrongMethod = await t.call("DELETE", "/agents", { key: ADMIN_KEY });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("POST, GET");
    expect((await t.call("GET", "/nowhere", { key: ADMIN_KEY })).status).toBe(404);
    expect(await violations()).toEqual([]);
  });

  it("answers GET /v1 with no key: the API version and links that each answer, as the document describes", async () => {
    for (const path of ["", "/"]) {
      const index = await t.call("GET", path);
      expect(index.status, path).toBe(200);
      expect(index.body).toMatchObject({ api_version: "v1", server_version: expect.any(String), docs: { api: "docs/api.md" } });
      expect(index.body.links).toEqual({
        openapi: "/v1/openapi.json",
        health: "/v1/health",
        ready: "/v1/ready",
        metrics: "/v1/metrics",
        console: "/console/",
      });
    }
    const index = (await t.call("GET", "")).body as { links: Record<string, string> };
    const origin = new URL(t.baseUrl).origin;
    for (const link of Object.values(index.links)) expect((await fetch(`${origin}${link}`)).status, link).toBe(200);
    const post = await t.call("POST", "", { key: ADMIN_KEY, body: {} });
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET"]);
    expect(await violations()).toEqual([]);
  });

  it("describes /ready answering 503 when the database does not answer", async () => {
    const doomed = await startTestServer(target);
    try {
      expect((await doomed.call("GET", "/ready")).status).toBe(200);
      // The database goes away under the running server: closed, and its file or schema removed.
      await doomed.db.close();
      const ready = await doomed.call("GET", "/ready");
      expect(ready.status).toBe(503);
      expect(ready.body.code).toBe("not_ready");
      expect(await doomed.recorder.violations(doomed.baseUrl)).toEqual([]);
    } finally {
      await doomed.server.close();
    }
  });

  describe("the checker", () => {
    it("finds an undocumented status, media type or body, and a 405 without its `allow`", async () => {
      const conformance = new OpenApiConformance((await t.call("GET", "/openapi.json")).body);
      const answer = { method: "GET", path: "/agents", status: 200, contentType: "application/json", body: { agents: [] }, allow: null };
      expect(conformance.violations(answer)).toEqual([]);
      expect(conformance.violations({ ...answer, status: 418 })).toEqual([expect.stringContaining("status 418 is not documented")]);
      expect(conformance.violations({ ...answer, contentType: "text/html" })).toEqual([expect.stringContaining("media type `text/html`")]);
      expect(conformance.violations({ ...answer, body: { agents: [{ id: 1 }] } })).toEqual([
        expect.stringContaining("does not match #/components/schemas/AgentList"),
      ]);
      expect(
        conformance.violations({
          ...answer,
          method: "DELETE",
          status: 405,
          contentType: "application/problem+json",
          body: { type: "t", title: "t", status: 405, code: "method_not_allowed" },
        }),
      ).toEqual([expect.stringContaining("405 must list")]);
      expect(conformance.violations({ ...answer, path: "/nowhere", status: 500 })).toEqual([
        expect.stringContaining("no path of the document matches"),
      ]);
    });
  });
});
