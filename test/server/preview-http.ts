// Preview decides a sample action with the engine and creates nothing; a 5xx carries no internals.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, CERTIFICATION, expectProblem, startTestServer, type TestServer } from "./http-harness.js";
import type { StoreTarget } from "./targets.js";
import type { GateResult, GrantPreview } from "@agent-authority/sdk";

export function previewSuite(target: StoreTarget): void {
  let t: TestServer;
  let certified: string;
  let uncertified: string;
  beforeAll(async () => {
    t = await startTestServer(target);
    certified = (await t.call("POST", "/agents", { key: ADMIN_KEY, body: { name: "preview-certified" } })).body.id;
    uncertified = (await t.call("POST", "/agents", { key: ADMIN_KEY, body: { name: "preview-uncertified" } })).body.id;
    await t.call("POST", `/agents/${certified}/certification`, { key: ADMIN_KEY, body: CERTIFICATION });
  });
  afterAll(async () => {
    await t?.close();
  });

  function body(agentId: string, action: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      agent_id: agentId,
      principal_type: "human",
      principal_id: "alice@example.com",
      scope: { tool: ["payments.*"] },
      budget_amount_minor: 50_000,
      budget_currency: "EUR",
      policy: 'amount_minor <= 1000 || approver in ["cfo@example.com"]',
      action,
      ...extra,
    };
  }

  async function preview(payload: Record<string, unknown>): Promise<GrantPreview> {
    const before = await t.db.store.countRows();
    const reply = await t.call("POST", "/grants/preview", { key: ADMIN_KEY, body: payload });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.created).toBe(false);
    // The point of a preview: not one row anywhere.
    expect(await t.db.store.countRows()).toEqual(before);
    return reply.body;
  }

  it("allows an action the grant covers", async () => {
    const decision = await preview(body(certified, { tool: "payments.refund", amount_minor: 500, currency: "EUR" }));
    expect(decision).toMatchObject({ outcome: "allow", enforcement_mode: "enforce", decided_by: null, approval_required: true });
    expect(decision.gates.map((g: GateResult) => g.gate)).toEqual([
      "grant",
      "status",
      "window",
      "audience",
      "certification",
      "scope",
      "conditions",
      "policy",
      "budget",
    ]);
  });

  it("denies a tool out of scope", async () => {
    const decision = await preview(body(certified, { tool: "shell.exec" }));
    expect(decision).toMatchObject({ outcome: "deny", decided_by: "scope" });
  });

  it("gates on the policy's residual, and allows with that approver", async () => {
    const gated = await preview(body(certified, { tool: "payments.refund", amount_minor: 5_000, currency: "EUR" }));
    expect(gated.outcome).toBe("gated");
    expect(gated.residual).toContain("cfo@example.com");
    const approved = await preview(
      body(certified, { tool: "payments.refund", amount_minor: 5_000, currency: "EUR", approver: "cfo@example.com" }),
    );
    expect(approved.outcome).toBe("allow");
  });

  it("shows what observe would have said", async () => {
    const decision = await preview(body(uncertified, { tool: "shell.exec" }, { enforcement_mode: "observe" }));
    expect(decision).toMatchObject({ outcome: "allow", would_outcome: "deny", enforcement_mode: "observe" });
  });

  it("refuses an uncertified agent in enforce at the certification gate", async () => {
    const decision = await preview(body(uncertified, { tool: "payments.refund", amount_minor: 1, currency: "EUR" }));
    expect(decision).toMatchObject({ outcome: "deny", decided_by: "certification" });
  });

  it("refuses a body without its sample action", async () => {
    const { action: _action, ...rest } = body(certified, {});
    expectProblem(await t.call("POST", "/grants/preview", { key: ADMIN_KEY, body: rest }), 400, "invalid_body");
  });
}

export function failureSuite(target: StoreTarget): void {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(target);
  });
  afterAll(async () => {
    await t?.server.close();
  });

  describe("when the database fails", () => {
    it("answers 5xx problems that carry no internals", async () => {
      await t.db.close();
      const ready = await t.call("GET", "/ready");
      expectProblem(ready, 503, "not_ready");
      const reply = await t.call("GET", "/keys", { key: ADMIN_KEY });
      expectProblem(reply, 500, "internal_error");
      expect(Object.keys(reply.body).sort()).toEqual(["code", "instance", "status", "title", "type"]);
      expect(JSON.stringify(reply.body)).not.toMatch(/sqlite|postgres|pool|closed|connection|stack|\bat\s/i);
    });
  });
}
