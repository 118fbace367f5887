// Hidden characters over HTTP: the residual a gated decision answers, which an approver reads,
// shows a bidi override and a zero-width space as escapes; the grant's warnings name them.
import { afterAll, beforeAll, expect, it } from "vitest";
import { ADMIN_KEY, CERTIFICATION, certifiedAgentId, startTestServer, type TestServer } from "./http-harness.js";
import { forEachStore, type StoreTarget } from "./targets.js";

const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};
const RAW = /[\u202e\u200b\u2028]/;

function suite(target: StoreTarget): void {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(target);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("a gated decision's residual escapes hidden characters, and issuing warns about them", async () => {
    const agentId = await certifiedAgentId(t, "hidden-bot");
    const agentKey = await t.key("hidden-bot-key", ["agent"], { kind: "service", agent_id: agentId });
    const grant = await t.call("POST", "/grants", {
      key: ADMIN_KEY,
      body: {
        agent_id: agentId,
        principal_type: "team",
        principal_id: "ops",
        scope: { tool: ["payments.send"] },
        budget_amount_minor: 5_000,
        budget_currency: "EUR",
        policy: 'amount_minor <= 1000 || approver == "cfo@example.com\u202e\u200b"',
      },
    });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    expect(grant.body.warnings.map((w: { code: string }) => w.code)).toContain("hidden-character");
    const decision = await t.call("POST", "/authorize", {
      key: agentKey,
      body: { grant_id: grant.body.id, tool: "payments.send", amount_minor: 2500, currency: "EUR", attestation: ATTESTATION },
    });
    expect(decision.body.outcome).toBe("gated");
    expect(decision.body.residual).toBe('approver == "cfo@example.com\\u202e\\u200b"');
    expect(JSON.stringify(decision.body)).not.toMatch(RAW);
  });
}

forEachStore("hidden characters over HTTP", suite);
