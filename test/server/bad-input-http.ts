// Bad input of every kind: each gets a 4xx problem with a stable code, and nothing changes.

import { API_LIMITS } from "@agent-authority/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN_KEY,
  CERTIFICATION,
  certifiedAgentId,
  expectProblem,
  startTestServer,
  type CallOptions,
  type Reply,
  type TestServer,
} from "./http-harness.js";
import type { StoreTarget } from "./targets.js";
import type { Problem } from "@agent-authority/sdk";

/** One body validation error of a problem. */
type ProblemError = NonNullable<Problem["errors"]>[number];

export function badInputSuite(target: StoreTarget): void {
  let t: TestServer;
  let agentId: string;
  let grantId: string;
  beforeAll(async () => {
    t = await startTestServer(target);
    agentId = await certifiedAgentId(t, "bad-input-agent");
    const grant = await t.call("POST", "/grants", { key: ADMIN_KEY, body: valid({ delegation_policy: "attenuating" }) });
    expect(grant.status).toBe(201);
    grantId = grant.body.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  function valid(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { agent_id: agentId, principal_type: "team", principal_id: "finance", scope: { tool: ["payments.refund"] }, ...extra };
  }

  /** Sends the request and checks the problem, and that no table gained or lost a row. */
  async function refused(method: string, path: string, options: CallOptions, status: number, code: string): Promise<Reply> {
    const before = await t.db.store.countRows();
    const reply = await t.call(method, path, { key: ADMIN_KEY, ...options });
    expectProblem(reply, status, code);
    expect(await t.db.store.countRows()).toEqual(before);
    return reply;
  }

  describe("malformed bodies", () => {
    it("refuses text that is not JSON", async () => {
      await refused("POST", "/grants", { raw: '{"agent_id": ' }, 400, "malformed_json");
      await refused("POST", "/agents", { raw: "name=x" }, 400, "malformed_json");
    });

    it("refuses a body not declared as JSON", async () => {
      await refused("POST", "/agents", { raw: '{"name":"x"}', contentType: "text/plain" }, 415, "unsupported_media_type");
    });

    it("refuses a missing body where one is required", async () => {
      await refused("POST", "/grants", {}, 400, "invalid_body");
    });

    it("refuses wrong types and says where", async () => {
      const reply = await refused(
        "POST",
        "/grants",
        { body: valid({ budget_amount_minor: "100", budget_currency: "EUR", ttl_hours: 1.5 }) },
        400,
        "invalid_body",
      );
      expect(reply.body.errors.map((e: ProblemError) => e.pointer)).toEqual(expect.arrayContaining(["/budget_amount_minor", "/ttl_hours"]));
      await refused("POST", "/grants", { body: [valid()] }, 400, "invalid_body");
      await refused("POST", "/grants", { body: valid({ scope: { tool: "payments.refund" } }) }, 400, "invalid_body");
      await refused("POST", "/grants", { body: valid({ principal_type: "robot" }) }, 400, "invalid_body");
      await refused("POST", "/grants", { body: valid({ budget_amount_minor: -1, budget_currency: "EUR" }) }, 400, "invalid_body");
      await refused("POST", "/grants", { body: valid({ budget_amount_minor: 2 ** 53, budget_currency: "EUR" }) }, 400, "invalid_body");
    });

    it("refuses missing fields and names each one", async () => {
      const reply = await refused("POST", "/grants", { body: { agent_id: agentId } }, 400, "invalid_body");
      expect(reply.body.errors.map((e: ProblemError) => e.pointer)).toEqual(
        expect.arrayContaining(["/principal_type", "/principal_id", "/scope"]),
      );
      await refused("POST", "/grants", { body: valid({ budget_amount_minor: 100 }) }, 400, "invalid_body");
    });

    it("refuses unknown fields with a clear error, at any depth", async () => {
      const top = await refused("POST", "/grants", { body: valid({ budget: 5 }) }, 400, "unknown_field");
      expect(top.body.detail).toContain("/budget");
      const nested = await refused(
        "POST",
        "/grants",
        { body: valid({ conditions: { clean_context: true, sober: true } }) },
        400,
        "unknown_field",
      );
      expect(nested.body.errors[0].pointer).toBe("/conditions/sober");
      await refused("POST", `/grants/${grantId}/enforcement`, { body: { enforcement_mode: "enforce", force: true } }, 400, "unknown_field");
    });

    it("refuses bodies nested deeper than the limit", async () => {
      let deep: unknown = 1;
      for (let i = 0; i < API_LIMITS.requestJsonDepthMax + 1; i += 1) deep = { a: deep };
      await refused("POST", "/grants/preview", { body: valid({ action: { tool: "payments.refund", args: deep } }) }, 400, "body_too_deep");
      await refused("POST", "/agents", { raw: "[".repeat(50_000) + "]".repeat(50_000) }, 413, "body_too_large");
      await refused("POST", "/agents", { raw: "[".repeat(10_000) + "]".repeat(10_000) }, 400, "body_too_deep");
    });
  });

  describe("the body size limit", () => {
    /** A valid agent body padded with spaces to exactly `size` bytes. */
    function bodyOfSize(size: number, name: string): string {
      const text = JSON.stringify({ name });
      return text + " ".repeat(size - Buffer.byteLength(text));
    }

    it("accepts a body of exactly the limit", async () => {
      const reply = await t.call("POST", "/agents", { key: ADMIN_KEY, raw: bodyOfSize(API_LIMITS.requestBodyBytesMax, "edge-agent") });
      expect(reply.status).toBe(201);
    });

    it("refuses one byte more", async () => {
      await refused("POST", "/agents", { raw: bodyOfSize(API_LIMITS.requestBodyBytesMax + 1, "over-agent") }, 413, "body_too_large");
      await refused("POST", "/agents", { raw: bodyOfSize(10 * API_LIMITS.requestBodyBytesMax, "huge-agent") }, 413, "body_too_large");
    });

    it("refuses a policy over the language's limit", async () => {
      const policy = `amount_minor <= ${"1".repeat(10)} || ${Array.from({ length: 600 }, (_, i) => `tool == "t${i}"`).join(" || ")}`;
      expect(policy.length).toBeGreaterThan(API_LIMITS.policyCharsMax);
      const reply = await refused("POST", "/grants", { body: valid({ policy }) }, 400, "invalid_body");
      expect(reply.body.errors[0].pointer).toBe("/policy");
      // Within the character limit but over 4 KiB of UTF-8: the language's own limit answers.
      const wide = `tool == "${"é".repeat(2_100)}"`;
      expect(wide.length).toBeLessThanOrEqual(API_LIMITS.policyCharsMax);
      await refused("POST", "/grants", { body: valid({ policy: wide }) }, 422, "invalid_policy");
    });
  });

  describe("ids", () => {
    it("refuses wrong prefixes and shapes in the path", async () => {
      await refused("GET", `/grants/${agentId}`, {}, 400, "invalid_id");
      await refused("GET", "/grants/grt_123", {}, 400, "invalid_id");
      await refused("POST", `/grants/${grantId.replace("grt_", "agt_")}/revoke`, {}, 400, "invalid_id");
      await refused("GET", `/agents/${grantId}/certification`, {}, 400, "invalid_id");
      await refused("POST", "/certificates/cert_1/revoke", {}, 400, "invalid_id");
      await refused("POST", "/keys/nope/revoke", {}, 400, "invalid_id");
    });

    it("refuses wrong prefixes in the body", async () => {
      await refused("POST", "/grants", { body: valid({ agent_id: grantId }) }, 400, "invalid_body");
      await refused("POST", `/grants/${grantId}/delegate`, { body: { agent_id: "agt_short" } }, 400, "invalid_body");
    });

    it("answers 404 for well-formed ids that name nothing", async () => {
      const missingGrant = "grt_0000000000000000000000000b";
      const missingAgent = "agt_0000000000000000000000000b";
      await refused("GET", `/grants/${missingGrant}`, {}, 404, "grant_not_found");
      await refused("POST", `/grants/${missingGrant}/approve`, {}, 404, "grant_not_found");
      await refused("POST", `/grants/${missingGrant}/delegate`, { body: { agent_id: agentId } }, 404, "grant_not_found");
      await refused("POST", `/grants/${missingGrant}/enforcement`, { body: { enforcement_mode: "enforce" } }, 404, "grant_not_found");
      await refused("POST", `/grants/${missingGrant}/revoke`, {}, 404, "grant_not_found");
      await refused("POST", "/grants", { body: valid({ agent_id: missingAgent }) }, 404, "agent_not_found");
      await refused("POST", `/grants/${grantId}/delegate`, { body: { agent_id: missingAgent } }, 404, "agent_not_found");
      await refused("GET", `/agents/${missingAgent}/certification`, {}, 404, "agent_not_found");
      await refused("POST", `/agents/${missingAgent}/certification`, { body: CERTIFICATION }, 404, "agent_not_found");
      await refused("POST", "/certificates/crt_0000000000000000000000000b/revoke", {}, 404, "certificate_not_found");
      await refused("POST", "/keys/key_0000000000000000000000000b/revoke", {}, 404, "key_not_found");
    });

    it("refuses malformed list queries", async () => {
      await refused("GET", "/keys?limit=0", {}, 400, "invalid_query");
      await refused("GET", "/keys?limit=abc", {}, 400, "invalid_query");
      await refused("GET", `/keys?limit=${API_LIMITS.listLimitMax + 1}`, {}, 400, "invalid_query");
    });
  });

  describe("invalid policies", () => {
    it("are refused with diagnostics and spans on issue, delegate and preview", async () => {
      const issue = await refused("POST", "/grants", { body: valid({ policy: "amount_minor <= " }) }, 422, "invalid_policy");
      expect(issue.body.diagnostics[0]).toMatchObject({ severity: "error", span: { start: expect.any(Number), end: expect.any(Number) } });
      const typo = await refused("POST", "/grants", { body: valid({ policy: "amount_minr <= 100" }) }, 422, "invalid_policy");
      expect(typo.body.diagnostics[0].span).toEqual({ start: 0, end: 11 });
      const typed = await refused("POST", "/grants", { body: valid({ policy: 'amount_minor <= "100"' }) }, 422, "invalid_policy");
      expect(typed.body.diagnostics.length).toBeGreaterThan(0);
      await refused("POST", `/grants/${grantId}/delegate`, { body: { agent_id: agentId, policy: "tool ==" } }, 422, "invalid_policy");
      await refused(
        "POST",
        "/grants/preview",
        { body: valid({ policy: "(((", action: { tool: "payments.refund" } }) },
        422,
        "invalid_policy",
      );
    });
  });

  describe("authentication before validation", () => {
    it("answers 401 to a bad body without a key, and 403 to one without the role", async () => {
      const before = await t.db.store.countRows();
      expectProblem(await t.call("POST", "/grants", { raw: "{{{" }), 401, "unauthenticated");
      const auditor = await t.key("bad-input-auditor@example.com", ["auditor"]);
      const mid = await t.db.store.countRows();
      expectProblem(await t.call("POST", "/grants", { key: auditor, raw: "{{{" }), 403, "forbidden");
      expect(await t.db.store.countRows()).toEqual(mid);
      expect(mid["api_keys"]).toBe(before["api_keys"]! + 1);
    });
  });
}
