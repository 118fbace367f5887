// Every endpoint of the api table has an SDK call that sends that method to that path.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENDPOINTS } from "@agent-authority/api";
import { AuthorityClient, type GrantFamilyBody } from "@agent-authority/sdk";
import { sendJson, settlementAnswer, startRecordingServer, type RecordingServer, TEST_SIGNING_KEYS } from "./recording-server.js";

/** A family body of the right shape; the recording server does not judge its content. */
const family: GrantFamilyBody = {
  id: "f",
  version: 1,
  reviewed_by: ["r"],
  parameters: {},
  grant: { agent_id: "${agent_id}", principal_type: "team", principal_id: "p", scope: { tool: ["t"] } },
  content_hash: "sha256:0",
};

/** One SDK call per endpoint, keyed by method and path with parameters written `{}`. */
const calls: Record<string, (client: AuthorityClient) => Promise<unknown>> = {
  "get /health": (c) => c.service.health(),
  "get /ready": (c) => c.service.ready(),
  "get /openapi.json": (c) => c.service.openapi(),
  "post /agents": (c) => c.agents.register({ name: "a" }),
  "get /agents": (c) => c.agents.list(),
  "get /agents/{}": (c) => c.agents.get("p1"),
  "get /agents/{}/certification": (c) => c.agents.certification("p1"),
  "post /agents/{}/certification": (c) =>
    c.agents.certify("p1", { basis: "b", provenance_version: "v", manifest_hash: "m", content_hash: "c", checks: ["x"] }),
  "get /certificates": (c) => c.certificates.list(),
  "post /certificates/{}/revoke": (c) => c.certificates.revoke("p1"),
  "post /grants": (c) => c.grants.issue({ agent_id: "a", principal_type: "human", principal_id: "p", scope: { tool: ["t"] } }),
  "post /grants/preview": (c) =>
    c.grants.preview({ agent_id: "a", principal_type: "human", principal_id: "p", scope: { tool: ["t"] }, action: { tool: "t" } }),
  "get /grants": (c) => c.grants.list({ status: "active", limit: 10 }),
  "get /grants/pending": (c) => c.grants.pending(),
  "get /grants/{}": (c) => c.grants.get("p1"),
  "post /grants/{}/approve": (c) => c.grants.approve("p1"),
  "post /grants/{}/delegate": (c) => c.grants.delegate("p1", { agent_id: "a" }),
  "post /grants/{}/enforcement": (c) => c.grants.enforcement("p1", { enforcement_mode: "enforce" }),
  "post /grants/{}/revoke": (c) => c.grants.revoke("p1"),
  "post /keys": (c) => c.keys.create({ identity: "i", kind: "service", roles: ["auditor"] }),
  "get /keys": (c) => c.keys.list(),
  "post /keys/{}/revoke": (c) => c.keys.revoke("p1"),
  "post /grant-families": (c) => c.families.define(family),
  "get /grant-families": (c) => c.families.list(),
  "post /grant-families/{}/instantiate": (c) => c.families.instantiate("p1", { parameters: {} }),
  "get /grant-families/{}": (c) => c.families.get("p1"),
  "post /grant-families/{}/impact": (c) => c.families.impact("p1", { family, days: 7 }),
  "post /authorize": (c) => c.authorize({ grant_id: "g", tool: "t" }),
  "post /decisions/{}/settle": (c) => c.decisions.settle("p1", { amount_minor: 1 }),
  "post /decisions/{}/approve": (c) => c.decisions.approve("p1"),
  "get /decisions/{}/approval": (c) => c.decisions.approval("p1"),
  "post /agents/{}/contracts": (c) => c.contracts.declare("p1", { metric: "deny_rate", ceiling: 0.1, window_decisions: 100 }),
  "get /agents/{}/contracts": (c) => c.contracts.list("p1"),
  "post /agents/{}/breakers": (c) => c.breakers.create("p1", { contract_id: "c", action: "notify" }),
  "get /breakers/{}": (c) => c.breakers.get("p1"),
  "post /breakers/{}/arm": (c) => c.breakers.arm("p1", { basis: "b", expecting_trips: 0 }),
  "post /breakers/{}/disarm": (c) => c.breakers.disarm("p1"),
  "get /agents/{}/breakers/counterfactual": (c) => c.breakers.counterfactual("p1"),
  "get /findings": (c) => c.findings.list(),
  "get /whoami": (c) => c.keys.whoami(),
  "get /ledger/verify": (c) => c.ledger.verify(),
  "get /ledger/checkpoint": (c) => c.ledger.checkpoint(),
  "get /ledger/consistency": (c) => c.ledger.consistency(1, 2),
  "get /decisions/{}/receipt": (c) => c.decisions.receipt("p1"),
  "get /signing-keys": (c) => c.signingKeys.list(),
  "post /signing-keys/rotate": (c) => c.signingKeys.rotate({ retire_kid: "k".repeat(43) }),
  "get /decisions/pending": (c) => c.decisions.pending({ limit: 10 }),
  "get /grants/{}/ledger": (c) => c.ledger.tree("p1", { after: "2" }),
  "get /": (c) => c.service.index(),
  "post /decisions/{}/abandoned": (c) => c.decisions.abandoned("p1", { reason: "timeout", waited_ms: 1000 }),
  "post /webhooks": (c) => c.webhooks.create({ url: "https://example.com/hook", event_types: ["grant.issued"] }),
  "get /webhooks": (c) => c.webhooks.list(),
  "get /webhooks/{}": (c) => c.webhooks.get("p1"),
  "post /webhooks/{}/pause": (c) => c.webhooks.pause("p1"),
  "post /webhooks/{}/resume": (c) => c.webhooks.resume("p1"),
  "post /webhooks/{}/delete": (c) => c.webhooks.delete("p1"),
  "get /webhooks/{}/deliveries": (c) => c.webhooks.deliveries("p1", { limit: 10 }),
  "post /webhooks/{}/deliveries/{}/redeliver": (c) => c.webhooks.redeliver("p1", "p1"),
};

/** Endpoints the SDK leaves out on purpose, each with its reason. */
const leftOut: Record<string, string> = {
  "get /metrics": "Prometheus text for scrapers, not JSON for agents",
  "get /events": "a server-sent event stream that stays open; any EventSource client reads it (docs/events.md)",
};

const keyOf = (method: string, path: string): string => `${method.toLowerCase()} ${path.replace(/\{[^}]*\}/g, "{}")}`;

let server: RecordingServer;
let client: AuthorityClient;

beforeAll(async () => {
  server = await startRecordingServer((request, response) =>
    sendJson(
      response,
      200,
      request.url.endsWith("/settle") ? settlementAnswer(request) : { outcome: "deny", ledger_id: "led_1", gates: [], reason: "" },
    ),
  );
  client = new AuthorityClient({ baseUrl: server.baseUrl, apiKey: "k", attempts: 1, signingKeys: TEST_SIGNING_KEYS });
});

afterAll(() => server.close());

describe("SDK coverage of the v1 endpoint table", () => {
  it("has a call for every endpoint @agent-authority/api lists", () => {
    const missing = ENDPOINTS.map((endpoint) => keyOf(endpoint.method, endpoint.path)).filter(
      (key) => calls[key] === undefined && leftOut[key] === undefined,
    );
    expect(missing, "add an SDK call (and a line here) for each").toEqual([]);
  });

  it("sends each call's method to its path", async () => {
    for (const [key, call] of Object.entries(calls)) {
      const before = server.received.length;
      await call(client);
      const sent = server.received[before]!;
      const path = sent.url
        .replace(/^\/v1/, "")
        .replace(/\?.*$/, "")
        .replace(/\/p1(?=\/|$)/g, "/{}");
      expect(keyOf(sent.method, path)).toBe(key);
    }
  });
});
