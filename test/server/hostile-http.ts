// Issue 23 over HTTP: a policy that names Object.prototype is a 422 at issue, delegate, preview and
// family push (never 201 or 500), and every POST refuses a body nested one level past the limit
// with 400 `body_too_deep` while accepting one at the limit, /v1/authorize included.

import { API_LIMITS, ENDPOINTS, ID_PREFIXES } from "@agent-authority/api";
import { familyContentHash } from "@agent-authority/families";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, CERTIFICATION, certifiedAgentId, expectProblem, startTestServer, type TestServer } from "./http-harness.js";
import type { StoreTarget } from "./targets.js";

/** An object `levels` deep: `{"a": {"a": … 1}}`, each object one level. */
export function nestedObject(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i += 1) value = { a: value };
  return value;
}

/** A list `levels` deep: `[[… 1]]`. */
export function nestedList(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i += 1) value = [value];
  return value;
}

const PROTOTYPE_POLICIES = [
  "__proto__ != null",
  "constructor != null",
  "hasOwnProperty != null",
  "valueOf != null",
  "constructor == 1",
  'toString == "x"',
];

/** A well-formed id for a path parameter `<kind>_id` that names nothing. */
function unknownId(parameter: string): string {
  const prefix = (ID_PREFIXES as Readonly<Record<string, string>>)[parameter.slice(0, -"_id".length)];
  return `${prefix ?? "x"}_0000000000000000000000000b`;
}

export function hostileHttpSuite(target: StoreTarget): void {
  let t: TestServer;
  let agentId: string;
  let agentKey: string;
  let grantId: string;
  beforeAll(async () => {
    t = await startTestServer(target);
    agentId = await certifiedAgentId(t, "hostile-agent");
    agentKey = await t.key("hostile-agent-key", ["agent"], { kind: "service", agent_id: agentId });
    const grant = await t.call("POST", "/grants", {
      key: ADMIN_KEY,
      body: issue({ delegation_policy: "attenuating", policy: "args.a == args.b" }),
    });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    grantId = grant.body.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A decision of the agent's own, for the endpoints only its owner may call. */
  async function agentDecision(): Promise<string> {
    const decided = await t.call("POST", "/authorize", {
      key: agentKey,
      body: { grant_id: grantId, tool: "payments.refund", args: { a: 1, b: 1 } },
    });
    expect(typeof decided.body?.ledger_id, JSON.stringify(decided.body)).toBe("string");
    return decided.body.ledger_id as string;
  }

  function issue(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { agent_id: agentId, principal_type: "team", principal_id: "finance", scope: { tool: ["payments.refund"] }, ...extra };
  }

  describe("policies naming Object.prototype", () => {
    it.each(PROTOTYPE_POLICIES)("`%s` is refused with 422 everywhere a policy is written, and nothing is created", async (policy) => {
      const before = await t.db.store.countRows();
      const issued = await t.call("POST", "/grants", { key: ADMIN_KEY, body: issue({ policy }) });
      expectProblem(issued, 422, "invalid_policy");
      expect(issued.body.diagnostics[0].code).toBe("unknown-name");
      expect(issued.body.diagnostics[0].span).toEqual({ start: 0, end: policy.indexOf(" ") });
      expectProblem(
        await t.call("POST", `/grants/${grantId}/delegate`, { key: ADMIN_KEY, body: { agent_id: agentId, policy } }),
        422,
        "invalid_policy",
      );
      expectProblem(
        await t.call("POST", "/grants/preview", { key: ADMIN_KEY, body: issue({ policy, action: { tool: "payments.refund" } }) }),
        422,
        "invalid_policy",
      );
      const family = {
        id: "prototype-family",
        version: 1,
        reviewed_by: ["alice@example.com"],
        parameters: {},
        grant: { agent_id: agentId, principal_type: "team", principal_id: "finance", scope: { tool: ["payments.refund"] }, policy },
      };
      const pushed = await t.call("POST", "/grant-families", {
        key: ADMIN_KEY,
        body: { ...family, content_hash: familyContentHash(family as never) },
      });
      expect(pushed.status, JSON.stringify(pushed.body)).toBe(422);
      expect(await t.db.store.countRows()).toEqual(before);
    });
  });

  describe("the JSON depth limit", () => {
    it("is 32 levels", () => {
      expect(API_LIMITS.requestJsonDepthMax).toBe(32);
    });

    it("on /v1/authorize: args at the limit are decided, one level more is 400 and leaves no record", async () => {
      const attestation = {
        manifest_hash: CERTIFICATION.manifest_hash,
        content_hash: CERTIFICATION.content_hash,
        provenance_version: CERTIFICATION.provenance_version,
      };
      const atLimit = {
        grant_id: grantId,
        tool: "payments.refund",
        attestation,
        args: { a: nestedList(API_LIMITS.requestJsonDepthMax - 2), b: nestedList(API_LIMITS.requestJsonDepthMax - 2) },
      };
      const decided = await t.call("POST", "/authorize", { key: agentKey, body: atLimit });
      expect(decided.status, JSON.stringify(decided.body)).toBe(200);
      expect(decided.body.outcome, JSON.stringify(decided.body)).toBe("allow");
      const before = await t.db.store.countRows();
      const over = { ...atLimit, args: { a: nestedList(API_LIMITS.requestJsonDepthMax - 1), b: 1 } };
      expectProblem(await t.call("POST", "/authorize", { key: agentKey, body: over }), 400, "body_too_deep");
      expectProblem(
        await t.call("POST", "/authorize", {
          key: agentKey,
          raw: `{"args":${"[".repeat(100_000)}${"]".repeat(100_000)}}`.slice(0, API_LIMITS.requestBodyBytesMax),
        }),
        400,
        "malformed_json",
      );
      expectProblem(
        await t.call("POST", "/authorize", { key: agentKey, raw: `{"args":{"a":${"[".repeat(30_000)}${"]".repeat(30_000)}}}` }),
        400,
        "body_too_deep",
      );
      expect(await t.db.store.countRows()).toEqual(before);
    });

    const posts = ENDPOINTS.filter((e) => e.method === "post" && e.body !== null);
    it.each(posts.map((e) => [e.operationId, e.path]))(
      "%s (%s) refuses one level past the limit and accepts the limit",
      async (operationId, path) => {
        // The agent's own reports on a decision answer 404 for a decision it does not own before
        // the body is read (docs/security.md), so they are sent on a decision of the agent's.
        const owned = operationId === "settleDecision" || operationId === "abandonDecisionWait";
        const ledgerId = owned ? await agentDecision() : undefined;
        const url = (path as string).replace(/\{([a-z_]+)\}/g, (_m, name: string) =>
          name === "ledger_id" && ledgerId !== undefined ? ledgerId : unknownId(name),
        );
        const key = operationId === "authorize" || owned ? agentKey : ADMIN_KEY;
        const before = await t.db.store.countRows();
        expectProblem(await t.call("POST", url, { key, body: nestedObject(API_LIMITS.requestJsonDepthMax + 1) }), 400, "body_too_deep");
        const edge = await t.call("POST", url, { key, body: nestedObject(API_LIMITS.requestJsonDepthMax) });
        expect(edge.body?.code).not.toBe("body_too_deep");
        expect(edge.status).toBeLessThan(500);
        expect(await t.db.store.countRows()).toEqual(before);
      },
    );
  });
}
