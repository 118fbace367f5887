// Hostile text in every string field of every POST endpoint, on a real server: NUL and lone
// surrogates are refused with 400 `invalid_text` naming the field, everything else (non-canonical
// forms, right-to-left marks, emoji, long text) is answered without a 5xx and stored faithfully,
// and the sealed ledger still verifies afterwards.

import { API_LIMITS, ENDPOINTS, unstorableCharacter } from "@agent-authority/api";
import { verifyLedger } from "@agent-authority/server";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { familyBody } from "./families-http.js";
import { ADMIN_KEY, CERTIFICATION, startTestServer, type TestServer } from "./http-harness.js";
import type { StoreTarget } from "./targets.js";

const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

/** Pieces that have broken text handling somewhere: NUL, lone surrogates, combining marks, bidi controls, emoji. */
const PIECES = [
  "\u0000",
  "\ud800",
  "\udfff",
  "a\ud83d",
  "\ude00b",
  "e\u0301",
  "\u00e9",
  "\u212b",
  "\u202e",
  "\u200f",
  "\u2066",
  "שלום",
  "مرحبا",
  "👩‍👩‍👧",
  "🔑",
  "\ufeff",
  "\uffff",
  "\ufffd",
  "\u2028",
  "\\",
  '"',
  "'",
  "${x}",
  "%00",
  " ",
  "\t",
  "\n",
  "a",
];
const piece = fc.constantFrom(...PIECES);
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));

/** Arbitrary UTF-16 text: well-formed or not, short or as long as the text limit allows. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.array(fc.oneof(piece, fc.string({ unit: "binary", maxLength: 3 })), { minLength: 1, maxLength: 8 }).map((parts) => parts.join("")),
  fc.string({ unit: anyUnit, minLength: 1, maxLength: 12 }),
  fc.tuple(piece, fc.integer({ min: 1, max: API_LIMITS.textCharsMax })).map(([p, n]) => p.repeat(n).slice(0, API_LIMITS.textCharsMax)),
);

/** A path segment carrying any text: UTF-8 bytes percent-encoded (a lone surrogate becomes U+FFFD). */
function pathSegment(text: string): string {
  return [...Buffer.from(text, "utf8")].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Pointers (RFC 6901) to every string leaf of a body. */
function stringLeaves(value: Json, pointer = ""): string[] {
  if (typeof value === "string") return [pointer];
  if (value === null || typeof value !== "object") return [];
  const entries: [string, Json][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
  return entries.flatMap(([name, member]) => stringLeaves(member, `${pointer}/${name.replace(/~/g, "~0").replace(/\//g, "~1")}`));
}

function withLeaf(value: Json, pointer: string, text: string): Json {
  const copy = structuredClone(value) as { [key: string]: Json };
  const names = pointer
    .slice(1)
    .split("/")
    .map((n) => n.replace(/~1/g, "/").replace(/~0/g, "~"));
  let node: { [key: string]: Json } = copy;
  for (const name of names.slice(0, -1)) node = node[name] as { [key: string]: Json };
  node[names.at(-1)!] = text;
  return copy;
}

/** One POST endpoint: a fresh target (the path, its id, the key to call with) and a valid body. */
interface PostCase {
  readonly operationId: string;
  target(): Promise<{ path: string; id?: string; key: string }>;
  body(): Json;
}

export function textHttpSuite(target: StoreTarget): void {
  let t: TestServer;
  let agentId: string;
  let agentKey: string;
  let approverKey: string;
  let rootGrantId: string;
  let contractId: string;
  let familyId: string;
  let hookId: string;
  let deliveryId: string;
  let n = 0;
  let activeKid = "";
  const post = async (path: string, body: unknown, key = ADMIN_KEY): Promise<Record<string, unknown>> => {
    const reply = await t.call("POST", path, { key, body });
    if (reply.status >= 300) throw new Error(`${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  };
  /** The id a POST answered (its `field`), checked to be a string. */
  const idOf = (body: Record<string, unknown>, field = "id"): string => {
    const id = body[field];
    if (typeof id !== "string") throw new Error(`no ${field} in ${JSON.stringify(body)}`);
    return id;
  };
  const grantBody = (extra: Record<string, Json> = {}): Json => ({
    agent_id: agentId,
    principal_type: "team",
    principal_id: "payments",
    scope: { tool: ["payments.*"] },
    budget_amount_minor: 5_000,
    budget_currency: "EUR",
    audience: "shop",
    policy: "amount_minor <= 4000",
    ...extra,
  });
  const freshAgent = async (): Promise<string> => idOf(await post("/agents", { name: `text-agent-${(n += 1)}` }));
  const payment = (grantId: string, amount = 100): Json => ({
    grant_id: grantId,
    tool: "payments.send",
    amount_minor: amount,
    currency: "EUR",
    audience: "shop",
    args: { memo: "coffee", to: "alice" },
    context: { clean: true },
    attestation: ATTESTATION,
  });

  beforeAll(async () => {
    t = await startTestServer(target);
    agentId = await freshAgent();
    await post(`/agents/${agentId}/certification`, CERTIFICATION);
    agentKey = await t.key("text-agent-key", ["agent"], { kind: "service", agent_id: agentId });
    approverKey = await t.key("cfo@example.com", ["approver"]);
    rootGrantId = idOf(await post("/grants", grantBody({ delegation_policy: "attenuating" })));
    contractId = idOf(
      await post(`/agents/${agentId}/contracts`, {
        metric: "deny_rate",
        ceiling: 1,
        window_decisions: 20,
        description: "a ceiling no window can break, so arming expects no trips",
      }),
    );
    familyId = idOf(await post("/grant-families", familyBody(1)));
    // A webhook with one delivery, for the webhook endpoints' cases.
    hookId = idOf(await post("/webhooks", { url: "https://hooks.example.com/in", event_types: ["grant.issued"] }));
    await post("/grants", grantBody());
    for (let i = 0; i < 400 && deliveryId === undefined; i += 1) {
      await new Promise((r) => setTimeout(r, 25));
      deliveryId = (await t.call("GET", `/webhooks/${hookId}/deliveries`, { key: ADMIN_KEY })).body.deliveries[0]?.id;
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  const cases: PostCase[] = [
    {
      operationId: "createAgent",
      target: async () => ({ path: "/agents", key: ADMIN_KEY }),
      body: () => ({ name: `text-agent-${(n += 1)}`, description: "an agent" }),
    },
    {
      operationId: "certifyAgent",
      target: async () => {
        const id = await freshAgent();
        return { path: `/agents/${id}/certification`, id, key: ADMIN_KEY };
      },
      body: () => ({ ...CERTIFICATION, environment: "test-env" }),
    },
    {
      operationId: "revokeCertificate",
      target: async () => {
        const id = idOf(await post(`/agents/${await freshAgent()}/certification`, CERTIFICATION));
        return { path: `/certificates/${id}/revoke`, id, key: ADMIN_KEY };
      },
      body: () => ({ reason: "rotated" }),
    },
    { operationId: "issueGrant", target: async () => ({ path: "/grants", key: ADMIN_KEY }), body: () => grantBody() },
    {
      operationId: "previewGrant",
      target: async () => ({ path: "/grants/preview", key: ADMIN_KEY }),
      body: () => ({
        ...(grantBody() as object),
        action: {
          tool: "payments.send",
          amount_minor: 10,
          currency: "EUR",
          audience: "shop",
          approver: "cfo@example.com",
          args: { memo: "tea" },
        },
      }),
    },
    {
      operationId: "approveGrant",
      target: async () => {
        const id = idOf(await post("/grants", grantBody({ require_approval: true })));
        return { path: `/grants/${id}/approve`, id, key: approverKey };
      },
      body: () => ({ note: "looks right" }),
    },
    {
      operationId: "delegateGrant",
      target: async () => ({ path: `/grants/${rootGrantId}/delegate`, id: rootGrantId, key: ADMIN_KEY }),
      body: () => ({
        agent_id: agentId,
        principal_type: "team",
        principal_id: "payments",
        audience: "shop",
        budget_amount_minor: 10,
        budget_currency: "EUR",
        scope: { tool: ["payments.send"] },
        policy: "amount_minor <= 5",
      }),
    },
    {
      operationId: "escalateEnforcement",
      target: async () => {
        const id = idOf(await post("/grants", grantBody({ enforcement_mode: "observe" })));
        return { path: `/grants/${id}/enforcement`, id, key: ADMIN_KEY };
      },
      body: () => ({ enforcement_mode: "enforce" }),
    },
    {
      operationId: "revokeGrant",
      target: async () => {
        const id = idOf(await post("/grants", grantBody()));
        return { path: `/grants/${id}/revoke`, id, key: ADMIN_KEY };
      },
      body: () => ({ reason: "no longer needed" }),
    },
    { operationId: "authorize", target: async () => ({ path: "/authorize", key: agentKey }), body: () => payment(rootGrantId) },
    {
      operationId: "settleDecision",
      target: async () => {
        const grantId = idOf(await post("/grants", grantBody()));
        const id = idOf(await post("/authorize", payment(grantId, 10), agentKey), "ledger_id");
        return { path: `/decisions/${id}/settle`, id, key: agentKey };
      },
      body: () => ({ amount_minor: 5 }),
    },
    {
      operationId: "approveDecision",
      target: async () => {
        const grantId = idOf(await post("/grants", grantBody({ policy: 'approver == "cfo@example.com"' })));
        const id = idOf(await post("/authorize", payment(grantId), agentKey), "ledger_id");
        return { path: `/decisions/${id}/approve`, id, key: approverKey };
      },
      body: () => ({ amount_minor_max: 100, expires_in_minutes: 5, note: "one coffee" }),
    },
    {
      operationId: "abandonDecisionWait",
      target: async () => {
        const grantId = idOf(await post("/grants", grantBody({ policy: 'approver == "cfo@example.com"' })));
        const id = idOf(await post("/authorize", payment(grantId), agentKey), "ledger_id");
        return { path: `/decisions/${id}/abandoned`, id, key: agentKey };
      },
      body: () => ({ reason: "timeout", waited_ms: 55_000 }),
    },
    {
      operationId: "declareContract",
      target: async () => ({ path: `/agents/${agentId}/contracts`, id: agentId, key: ADMIN_KEY }),
      body: () => ({ metric: "refusal_rate", ceiling: 0.25, window_hours: 24, description: "rarely refused" }),
    },
    {
      operationId: "createBreaker",
      target: async () => ({ path: `/agents/${agentId}/breakers`, id: agentId, key: ADMIN_KEY }),
      body: () => ({ contract_id: contractId, action: "notify" }),
    },
    {
      operationId: "armBreaker",
      target: async () => {
        const id = idOf(await post(`/agents/${agentId}/breakers`, { contract_id: contractId, action: "notify" }));
        return { path: `/breakers/${id}/arm`, id, key: ADMIN_KEY };
      },
      body: () => ({ basis: "no trips in 90 days", expecting_trips: 0 }),
    },
    {
      operationId: "disarmBreaker",
      target: async () => {
        const id = idOf(await post(`/agents/${agentId}/breakers`, { contract_id: contractId, action: "notify" }));
        await post(`/breakers/${id}/arm`, { basis: "reviewed", expecting_trips: 0 });
        return { path: `/breakers/${id}/disarm`, id, key: ADMIN_KEY };
      },
      body: () => ({ reason: "maintenance" }),
    },
    {
      operationId: "pushGrantFamily",
      target: async () => ({ path: "/grant-families", key: ADMIN_KEY }),
      body: () => familyBody((n += 1) + 1) as unknown as Json,
    },
    {
      operationId: "instantiateGrantFamily",
      target: async () => ({ path: `/grant-families/${familyId}/instantiate`, id: familyId, key: ADMIN_KEY }),
      body: () => ({ version: 1, parameters: { agent_id: agentId, limit_minor: 100 } }),
    },
    {
      operationId: "previewFamilyImpact",
      target: async () => ({ path: `/grant-families/${familyId}/impact`, id: familyId, key: ADMIN_KEY }),
      body: () => ({ family: familyBody(9_000) as unknown as Json, days: 7 }),
    },
    {
      operationId: "createKey",
      target: async () => ({ path: "/keys", key: ADMIN_KEY }),
      body: () => ({ identity: `person-${(n += 1)}@example.com`, kind: "human", roles: ["auditor"], email: "person@example.com" }),
    },
    {
      operationId: "createWebhook",
      target: async () => ({ path: "/webhooks", key: ADMIN_KEY }),
      body: () => ({ url: "https://hooks.example.com/in", event_types: ["grant.issued"], description: "a hook" }),
    },
    {
      operationId: "pauseWebhook",
      target: async () => {
        const id = idOf(await post("/webhooks", { url: "https://hooks.example.com/p", event_types: ["grant.issued"] }));
        return { path: `/webhooks/${id}/pause`, id, key: ADMIN_KEY };
      },
      body: () => ({ reason: "maintenance" }),
    },
    {
      operationId: "resumeWebhook",
      target: async () => {
        const id = idOf(await post("/webhooks", { url: "https://hooks.example.com/r", event_types: ["grant.issued"] }));
        await post(`/webhooks/${id}/pause`, {});
        return { path: `/webhooks/${id}/resume`, id, key: ADMIN_KEY };
      },
      body: () => ({ reason: "back" }),
    },
    {
      operationId: "deleteWebhook",
      target: async () => {
        const id = idOf(await post("/webhooks", { url: "https://hooks.example.com/d", event_types: ["grant.issued"] }));
        return { path: `/webhooks/${id}/delete`, id, key: ADMIN_KEY };
      },
      body: () => ({ reason: "gone" }),
    },
    {
      operationId: "redeliverWebhookDelivery",
      target: async () => ({ path: `/webhooks/${hookId}/deliveries/${deliveryId}/redeliver`, id: deliveryId, key: ADMIN_KEY }),
      body: () => ({ reason: "again" }),
    },
    {
      operationId: "revokeKey",
      target: async () => {
        const id = idOf(await post("/keys", { identity: `revoked-${(n += 1)}`, kind: "service", roles: ["auditor"] }));
        return { path: `/keys/${id}/revoke`, id, key: ADMIN_KEY };
      },
      body: () => ({ reason: "leaked" }),
    },
    {
      operationId: "rotateSigningKey",
      target: async () => {
        const keys = (await (await fetch(`${t.baseUrl}/signing-keys`)).json()) as { keys: { kid: string; status: string }[] };
        activeKid = keys.keys.find((key) => key.status === "active")!.kid;
        return { path: "/signing-keys/rotate", key: ADMIN_KEY };
      },
      body: () => ({ retire_kid: activeKid, reason: "rotation drill" }),
    },
  ];

  /** One hostile request: a string leaf of the body, a new member name, or the path's id replaced by the text. */
  const mutation = fc.record({
    index: fc.nat({ max: cases.length - 1 }),
    leaf: fc.nat(),
    where: fc.constantFrom("leaf", "leaf", "leaf", "member", "path", "escape"),
    text: hostileText,
    // Percent-encodings that are not UTF-8: cut short, not hex, overlong, an encoded surrogate.
    escape: fc.constantFrom("%", "%ZZ", "%E0%A4%A", "%C0%80", "%ED%A0%80", "%FF"),
  });

  describe("hostile text", () => {
    it("reaches every POST endpoint", () => {
      const posts = ENDPOINTS.filter((e) => e.method === "post")
        .map((e) => e.operationId)
        .sort();
      expect(cases.map((c) => c.operationId).sort()).toEqual(posts);
    });

    it("refuses NUL in each field that once answered 500 on PostgreSQL, naming it, and changes nothing", async () => {
      const byOperation = new Map(cases.map((c) => [c.operationId, c]));
      const audited: [string, string][] = [
        ["createAgent", "/description"],
        ["declareContract", "/description"],
        ["certifyAgent", "/basis"],
        ["certifyAgent", "/provenance_version"],
        ["certifyAgent", "/manifest_hash"],
        ["certifyAgent", "/content_hash"],
        ["certifyAgent", "/market_profile"],
        ["issueGrant", "/principal_id"],
        ["issueGrant", "/audience"],
        ["createKey", "/identity"],
      ];
      for (const [operationId, pointer] of audited) {
        const c = byOperation.get(operationId)!;
        const { path, key } = await c.target();
        const before = await t.db.store.countRows();
        const reply = await t.call("POST", path, { key, body: withLeaf(c.body(), pointer, "a\u0000b") });
        expect(reply.status, `${operationId} ${pointer}`).toBe(400);
        expect(reply.body).toMatchObject({ code: "invalid_text", errors: [{ pointer, code: "invalid_text" }] });
        expect(await t.db.store.countRows()).toEqual(before);
      }
    });

    it("refuses NUL in every query parameter of every GET endpoint, and answers odd text without a 5xx", async () => {
      const ids: Record<string, string> = { agent_id: agentId, grant_id: rootGrantId, family_id: familyId, webhook_id: hookId };
      for (const e of ENDPOINTS.filter((each) => each.method === "get" && each.query.length > 0)) {
        const path = e.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => ids[name]!);
        for (const name of e.query) {
          expect((await t.call("GET", `${path}?${name}=a%00b`, { key: ADMIN_KEY })).body.code, `${e.operationId} ${name}`).toBe(
            "invalid_query",
          );
          for (const value of ["%ED%A0%80", "%F0%9F%94%91", "e%CC%81", "%E2%80%AE", "%ZZ", "%"]) {
            const reply = await t.call("GET", `${path}?${name}=${value}`, { key: ADMIN_KEY });
            expect(reply.status, `${e.operationId} ${name}=${value}`).toBeLessThan(500);
          }
        }
      }
    });

    it("is never a 5xx: NUL and lone surrogates are 400 `invalid_text` naming the field, anything else is answered", async () => {
      await fc.assert(
        fc.asyncProperty(mutation, async ({ index, leaf, where, text, escape: badEscape }) => {
          const c = cases[index]!;
          const { path, id, key } = await c.target();
          const body = c.body();
          const leaves = stringLeaves(body);
          let pointer: string | undefined;
          let sent: Json = body;
          let sentPath = path;
          // A path segment is kept short: a URL over the server's header limit is refused by the transport (431) first.
          if (where === "path" && id !== undefined) sentPath = path.replace(id, pathSegment(text.slice(0, 100)));
          else if (where === "escape" && id !== undefined) sentPath = path.replace(id, `${id.slice(0, 8)}${badEscape}`);
          else if (where === "member" || leaves.length === 0) {
            sent = { ...(body as object), [text]: "x" };
            pointer = `/${text.replace(/~/g, "~0").replace(/\//g, "~1")}`;
          } else {
            pointer = leaves[leaf % leaves.length]!;
            sent = withLeaf(body, pointer, text);
          }
          const reply = await t.call("POST", sentPath, { key, body: sent });
          expect(reply.status, `${c.operationId} ${sentPath} ${JSON.stringify(reply.body)}`).toBeLessThan(500);
          if (reply.status >= 400)
            expect(reply.contentType ?? "", `${c.operationId} ${reply.status}`).toMatch(/^application\/problem\+json/);
          if (pointer !== undefined && unstorableCharacter(text) !== undefined) {
            expect(reply.status, c.operationId).toBe(400);
            expect(reply.body.code).toBe("invalid_text");
            expect(reply.body.errors[0].pointer).toBe(pointer);
          }
        }),
        { numRuns: 250 },
      );
      expect(await verifyLedger(t.db.store)).toMatchObject({ ok: true });
      expect((await t.call("GET", "/ledger/verify", { key: ADMIN_KEY })).body.ok).toBe(true);
    });

    it("stores any text but NUL and lone surrogates faithfully, and seals it in records that verify", async () => {
      const storable = hostileText.filter((text) => text.length > 0 && unstorableCharacter(text) === undefined);
      await fc.assert(
        fc.asyncProperty(storable, storable, async (description, memo) => {
          const agent = await post("/agents", { name: `faithful-${(n += 1)}`, description });
          expect((await t.call("GET", `/agents/${agent.id}`, { key: ADMIN_KEY })).body.description).toBe(description);
          // The schema counts code points, so the profile is cut at a code point, never inside a pair.
          const profile = Array.from(memo).slice(0, 200).join("");
          const certificate = await post(`/agents/${agent.id}/certification`, {
            ...CERTIFICATION,
            basis: description,
            market_profile: profile,
          });
          const status = (await t.call("GET", `/agents/${agent.id}/certification`, { key: ADMIN_KEY })).body;
          expect(status.certificate).toMatchObject({ id: certificate.id, basis: description, market_profile: profile });
          const grantId = idOf(await post("/grants", grantBody()));
          const decision = await post("/authorize", { ...(payment(grantId, 1) as object), args: { memo, [memo]: description } }, agentKey);
          expect(decision.outcome).toBe("allow");
        }),
        { numRuns: 40 },
      );
      expect(await verifyLedger(t.db.store)).toMatchObject({ ok: true });
    });
  });
}
