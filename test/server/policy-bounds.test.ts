// Hostile policy text over HTTP: the residual family that once held the event loop and broke the
// next request, and the approver search refused when a policy is written (issue, delegate, family push).
import { familyContentHash } from "@agent-authority/families";
import { afterAll, beforeAll, expect, it } from "vitest";
import { alternationFamily, negationFamily, twoConjunctions } from "../../packages/language/test-support/hostile-bounds.js";
import { certifiedAgent, issueGrant, startDecisionServer, type DecisionServer } from "./decisions-http.js";
import { familyBody } from "./families-http.js";
import { ADMIN_KEY, CERTIFICATION } from "./http-harness.js";
import { forEachStore, type StoreTarget } from "./targets.js";

const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash, content_hash: CERTIFICATION.content_hash, provenance_version: CERTIFICATION.provenance_version,
};
const FOUR_LISTS = "approver in args.a || approver in args.b || approver in args.c || approver in args.d";

/** A family whose grant carries `policy`, pushed as is: the local compiler would refuse it first. */
function family(policy: string) {
  const valid = familyBody(1);
  const body = { ...valid, grant: { ...valid.grant, policy } };
  return { ...body, content_hash: familyContentHash(body as never) };
}

function suite(target: StoreTarget): void {
  let s: DecisionServer;
  let agent: { id: string; key: string };
  beforeAll(async () => {
    s = await startDecisionServer(target);
    agent = await certifiedAgent(s, "bounded");
  });
  afterAll(async () => {
    await s?.close();
  });

  it("finding 1: an 18-level residual family is gated with a residual no longer than its policy, and the next issue answers 201", async () => {
    for (const policy of [negationFamily(18), alternationFamily(18)]) {
      const grant = await issueGrant(s, agent.id, { policy });
      const reply = await s.call("POST", "/authorize", agent.key, { grant_id: grant.id, tool: "payments.send", amount_minor: 100, currency: "EUR", attestation: ATTESTATION });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ outcome: "gated", decided_by: "policy" });
      expect(Buffer.byteLength(reply.body.residual)).toBeLessThanOrEqual(Buffer.byteLength(policy));
      const next = await s.call("POST", "/grants", ADMIN_KEY, {
        agent_id: agent.id, principal_type: "human", principal_id: "alice@example.com", scope: { tool: ["payments.*"] }, budget_amount_minor: 100, budget_currency: "EUR",
      });
      expect(next.status, next.text).toBe(201);
    }
  });

  it("finding 2: two conjunctions of 13 comparisons are issued (lint within its budget)", async () => {
    await issueGrant(s, agent.id, { policy: twoConjunctions(13) });
  });

  it("a policy whose approver search could exceed its limits is refused when it is written: 422 with the code and the span, on issue, delegate and family push", async () => {
    const before = await s.db.store.countRows();
    const issued = await s.call("POST", "/grants", ADMIN_KEY, {
      agent_id: agent.id, principal_type: "human", principal_id: "alice@example.com", scope: { tool: ["payments.*"] }, budget_amount_minor: 100, budget_currency: "EUR", policy: FOUR_LISTS,
    });
    expect(issued.status).toBe(422);
    expect(issued.body.code).toBe("invalid_policy");
    expect(issued.body.diagnostics).toEqual([expect.objectContaining({ code: "approver-search-too-large", span: { start: 0, end: FOUR_LISTS.length } })]);
    const parent = await issueGrant(s, agent.id);
    const countAfterParent = await s.db.store.countRows();
    const delegated = await s.call("POST", `/grants/${parent.id}/delegate`, ADMIN_KEY, { agent_id: agent.id, policy: FOUR_LISTS });
    expect(delegated.status).toBe(422);
    expect(delegated.body.diagnostics[0].code).toBe("approver-search-too-large");
    const pushed = await s.call("POST", "/grant-families", ADMIN_KEY, family(FOUR_LISTS));
    expect(pushed.status).toBe(422);
    expect(pushed.body.diagnostics.map((d: { code: string }) => d.code)).toContain("policy/approver-search-too-large");
    expect(await s.db.store.countRows()).toEqual(countAfterParent);
    expect(countAfterParent).not.toEqual(before);
  });
}

forEachStore("hostile policy text over HTTP", suite);
