// Hostile policy text over HTTP: the residual family that once held the event loop and broke the
// next request, and the approver search refused when a policy is written (issue, delegate, family push).
import { familyContentHash } from "@agent-authority/families";
import { afterAll, beforeAll, expect, it } from "vitest";
import { alternationFamily, negationFamily, twoConjunctions } from "../../packages/language/test-support/hostile-bounds.js";
import { certifiedAgent, issueGrant, startDecisionServer, type DecisionServer } from "./decisions-http.js";
import { familyBody } from "./families-http.js";
import { ADMIN_KEY, CERTIFICATION } from "./http-harness.js";
import { forEachStore, type StoreTarget } from "./targets.js";
import type { Decision, Problem } from "@agent-authority/sdk";

const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
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
      const reply = await s.call<Decision>("POST", "/authorize", agent.key, {
        grant_id: grant.id,
        tool: "payments.send",
        amount_minor: 100,
        currency: "EUR",
        attestation: ATTESTATION,
      });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ outcome: "gated", decided_by: "policy" });
      expect(Buffer.byteLength(reply.body.residual!)).toBeLessThanOrEqual(Buffer.byteLength(policy));
      const next = await s.call("POST", "/grants", ADMIN_KEY, {
        agent_id: agent.id,
        principal_type: "human",
        principal_id: "alice@example.com",
        scope: { tool: ["payments.*"] },
        budget_amount_minor: 100,
        budget_currency: "EUR",
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
      agent_id: agent.id,
      principal_type: "human",
      principal_id: "alice@example.com",
      scope: { tool: ["payments.*"] },
      budget_amount_minor: 100,
      budget_currency: "EUR",
      policy: FOUR_LISTS,
    });
    expect(issued.status).toBe(422);
    expect(issued.body.code).toBe("invalid_policy");
    expect(issued.body.diagnostics).toEqual([
      expect.objectContaining({ code: "approver-search-too-large", span: { start: 0, end: FOUR_LISTS.length } }),
    ]);
    const parent = await issueGrant(s, agent.id);
    const countAfterParent = await s.db.store.countRows();
    const delegated = await s.call<Problem>("POST", `/grants/${parent.id}/delegate`, ADMIN_KEY, { agent_id: agent.id, policy: FOUR_LISTS });
    expect(delegated.status).toBe(422);
    expect(delegated.body.diagnostics?.[0]?.code).toBe("approver-search-too-large");
    const pushed = await s.call<Problem>("POST", "/grant-families", ADMIN_KEY, family(FOUR_LISTS));
    expect(pushed.status).toBe(422);
    expect(pushed.body.diagnostics?.map((d) => d.code)).toContain("policy/approver-search-too-large");
    expect(await s.db.store.countRows()).toEqual(countAfterParent);
    expect(countAfterParent).not.toEqual(before);
  });

  it("a policy whose worst case exceeds the evaluation budget is refused when it is written: 422 `policy-too-costly` on issue, delegate, preview and family push", async () => {
    const costly = "args.a == args.b && args.c == args.d";
    const before = await s.db.store.countRows();
    const issued = await s.call("POST", "/grants", ADMIN_KEY, {
      agent_id: agent.id,
      principal_type: "human",
      principal_id: "alice@example.com",
      scope: { tool: ["payments.*"] },
      budget_amount_minor: 100,
      budget_currency: "EUR",
      policy: costly,
    });
    expect([issued.status, issued.body.code], issued.text).toEqual([422, "invalid_policy"]);
    expect(issued.body.diagnostics).toEqual([
      expect.objectContaining({ code: "policy-too-costly", span: { start: 0, end: costly.length } }),
    ]);
    const preview = await s.call("POST", "/grants/preview", ADMIN_KEY, {
      agent_id: agent.id,
      principal_type: "human",
      principal_id: "alice@example.com",
      scope: { tool: ["payments.*"] },
      policy: costly,
      action: { tool: "payments.send", amount_minor: 1, currency: "EUR" },
    });
    expect(preview.status, preview.text).toBe(422);
    const parent = await issueGrant(s, agent.id);
    const countAfterParent = await s.db.store.countRows();
    const delegated = await s.call<Problem>("POST", `/grants/${parent.id}/delegate`, ADMIN_KEY, { agent_id: agent.id, policy: costly });
    expect(delegated.status).toBe(422);
    expect(delegated.body.diagnostics?.[0]?.code).toBe("policy-too-costly");
    const pushed = await s.call<Problem>("POST", "/grant-families", ADMIN_KEY, family(costly));
    expect(pushed.status).toBe(422);
    expect(pushed.body.diagnostics?.map((d) => d.code)).toContain("policy/policy-too-costly");
    expect(await s.db.store.countRows()).toEqual(countAfterParent);
    expect(countAfterParent).not.toEqual(before);
    // One comparison of two values from `args` is within the budget.
    await issueGrant(s, agent.id, { policy: "args.a == args.b" });
  });

  /** Gates `args` under `policy`, approves as `member` (201) after `outsider` is refused (422), and retries. */
  async function approveLarge(policy: string, args: Record<string, unknown>, member: string, outsider: string): Promise<string> {
    const keyOf = async (identity: string) =>
      (await s.call("POST", "/keys", ADMIN_KEY, { identity, kind: "human", roles: ["approver"] })).body.key as string;
    const [memberKey, outsiderKey] = [await keyOf(member), await keyOf(outsider)];
    const grant = await issueGrant(s, agent.id, { policy });
    const action = { grant_id: grant.id, tool: "payments.send", amount_minor: 100, currency: "EUR", attestation: ATTESTATION, args };
    const gated = await s.call<Decision>("POST", "/authorize", agent.key, action);
    expect(gated.body, gated.text.slice(0, 300)).toMatchObject({ outcome: "gated" });
    expect(Buffer.byteLength(gated.body.residual!)).toBeLessThanOrEqual(Buffer.byteLength(policy.replaceAll(",", ", ")));
    const path = `/decisions/${gated.body.ledger_id}/approve`;
    const refused = await s.call("POST", path, outsiderKey, {});
    expect([refused.status, refused.body.code]).toEqual([422, "approver_not_admitted"]);
    const approval = await s.call("POST", path, memberKey, {});
    expect(approval.status, approval.text.slice(0, 300)).toBe(201);
    const retry = await s.call("POST", "/authorize", agent.key, { ...action, approval_id: approval.body.approval_id });
    expect(retry.body).toMatchObject({ outcome: "allow", approver: member });
    return gated.body.residual as string;
  }

  it("issue 33: `approver in [810 addresses]` gives a residual over 4 KiB (its canonical text) that admits its members", async () => {
    const letters = "abcdefghijklmnopqrstuvwxyz0123456789";
    const list = Array.from({ length: 810 }, (_, i) => `${letters[Math.floor(i / 36)]}${letters[i % 36]}`);
    const policy = `approver in [${list.map((a) => `"${a}"`).join(",")}]`;
    expect(Buffer.byteLength(policy)).toBeLessThanOrEqual(4096);
    const residual = await approveLarge(policy, {}, list[809]!, "zz");
    expect(Buffer.byteLength(residual)).toBeGreaterThan(4096);
  });

  it("issue 33: `approver in args.l` with 1,024 addresses keeps the reference and admits exactly the listed approvers", async () => {
    const l = Array.from({ length: 1024 }, (_, i) => `person${i}@example.com`);
    expect(await approveLarge("approver in args.l", { l }, "person1023@example.com", "person1024@example.com")).toBe("approver in args.l");
  });
}

forEachStore("hostile policy text over HTTP", suite);
