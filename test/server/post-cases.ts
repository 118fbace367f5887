// Every POST endpoint of the API as one table of cases: each case prepares, through the API itself,
// what a fresh request of its endpoint needs, and answers that request (caller key, path and body).
// The idempotency race (in one process and across processes) and the crash-then-retry proofs share it.

import { ADMIN_KEY, CERTIFICATION } from "./http-harness.js";
import { familyBody as versionedFamily } from "./families-http.js";

/** One POST as a test sends it: the caller's key, the path and the body. */
export interface Post {
  readonly key: string;
  readonly path: string;
  readonly body: unknown;
}

/** What the cases need of a running server: a POST that must answer `status`, and the actors made beforehand. */
export interface CaseApi {
  post(key: string, path: string, body: unknown, status: number): Promise<Record<string, unknown>>;
  /** A certified agent and its agent key. */
  readonly agent: () => { readonly id: string; readonly key: string };
  /** A key with the `approver` role, identity `approver@example.com`. */
  readonly approverKey: () => string;
  /** A label not used before in this run. */
  unique(label: string): string;
}

/** The endpoints that create nothing (previews): their answer is stored, but no request of theirs has an effect. */
export const PREVIEW_ENDPOINTS: ReadonlySet<string> = new Set(["POST /v1/grants/preview", "POST /v1/grant-families/{id}/impact"]);

/** The approver every case's approver key is, named in the gated policy. */
export const APPROVER_IDENTITY = "approver@example.com";

export const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

/** A family of its own name, version 1. */
export const familyBody = (name: string, limitMax = 5000) => versionedFamily(1, { name, limitMax });

/** Each POST endpoint but `POST /v1/keys` (whose replay differs, decision 0607), with a fresh request of it. */
export function postCases(api: CaseApi): Record<string, () => Promise<Post>> {
  const { post, unique } = api;
  const agentNamed = async () => (await post(ADMIN_KEY, "/agents", { name: unique("agent") }, 201)).id as string;
  const grantBody = (extra: Record<string, unknown> = {}) => ({
    agent_id: api.agent().id,
    principal_type: "human",
    principal_id: "alice@example.com",
    scope: { tool: ["payments.*"] },
    budget_amount_minor: 10_000,
    budget_currency: "EUR",
    ...extra,
  });
  const issued = async (extra: Record<string, unknown> = {}) => (await post(ADMIN_KEY, "/grants", grantBody(extra), 201)).id as string;
  const pay = (grantId: string, amount: number) => ({
    grant_id: grantId,
    tool: "payments.send",
    amount_minor: amount,
    currency: "EUR",
    attestation: ATTESTATION,
  });
  const decision = async (grantId: string, amount: number) => post(api.agent().key, "/authorize", pay(grantId, amount), 200);
  // Contracts and breakers watch an agent of their own, without decisions: its trip count is 0, and
  // the decisions of the other cases touch no breaker's windows.
  const breaker = async () => {
    const watched = await agentNamed();
    const contract = await post(
      ADMIN_KEY,
      `/agents/${watched}/contracts`,
      { metric: "refusal_rate", ceiling: 0.1, window_decisions: 40 },
      201,
    );
    return post(ADMIN_KEY, `/agents/${watched}/breakers`, { contract_id: contract.id, action: "notify" }, 201);
  };
  const pushed = async (name: string) => (await post(ADMIN_KEY, "/grant-families", familyBody(name), 201)).id as string;
  const arm = { basis: "no trips in 90 days", expecting_trips: 0 };
  return {
    "POST /v1/agents": async () => ({ key: ADMIN_KEY, path: "/agents", body: { name: unique("agent") } }),
    "POST /v1/agents/{id}/certification": async () => ({
      key: ADMIN_KEY,
      path: `/agents/${await agentNamed()}/certification`,
      body: CERTIFICATION,
    }),
    "POST /v1/certificates/{id}/revoke": async () => {
      const certificate = await post(ADMIN_KEY, `/agents/${await agentNamed()}/certification`, CERTIFICATION, 201);
      return { key: ADMIN_KEY, path: `/certificates/${certificate.id}/revoke`, body: { reason: "retired" } };
    },
    "POST /v1/grants": async () => ({ key: ADMIN_KEY, path: "/grants", body: grantBody({ budget_amount_minor: 1000 }) }),
    "POST /v1/grants/preview": async () => ({
      key: ADMIN_KEY,
      path: "/grants/preview",
      body: grantBody({ budget_amount_minor: 1000, action: { tool: "payments.send", amount_minor: 10, currency: "EUR" } }),
    }),
    "POST /v1/grants/{id}/approve": async () => ({
      key: api.approverKey(),
      path: `/grants/${await issued({ require_approval: true })}/approve`,
      body: {},
    }),
    "POST /v1/grants/{id}/delegate": async () => ({
      key: ADMIN_KEY,
      path: `/grants/${await issued({ delegation_policy: "attenuating" })}/delegate`,
      body: { agent_id: api.agent().id },
    }),
    "POST /v1/grants/{id}/enforcement": async () => ({
      key: ADMIN_KEY,
      path: `/grants/${await issued({ enforcement_mode: "observe" })}/enforcement`,
      body: { enforcement_mode: "enforce" },
    }),
    "POST /v1/grants/{id}/revoke": async () => ({ key: ADMIN_KEY, path: `/grants/${await issued()}/revoke`, body: { reason: "done" } }),
    "POST /v1/authorize": async () => ({ key: api.agent().key, path: "/authorize", body: pay(await issued(), 100) }),
    "POST /v1/decisions/{id}/settle": async () => ({
      key: api.agent().key,
      path: `/decisions/${(await decision(await issued(), 100)).ledger_id}/settle`,
      body: { amount_minor: 60 },
    }),
    "POST /v1/decisions/{id}/approve": async () => {
      const gated = await decision(await issued({ policy: `amount_minor <= 500 || approver == "${APPROVER_IDENTITY}"` }), 2_000);
      if (gated.outcome !== "gated") throw new Error(`expected a gated decision: ${JSON.stringify(gated)}`);
      return { key: api.approverKey(), path: `/decisions/${gated.ledger_id}/approve`, body: { note: "once" } };
    },
    "POST /v1/agents/{id}/contracts": async () => ({
      key: ADMIN_KEY,
      path: `/agents/${await agentNamed()}/contracts`,
      body: { metric: "refusal_rate", ceiling: 0.2, window_decisions: 40 },
    }),
    "POST /v1/agents/{id}/breakers": async () => {
      const watched = await agentNamed();
      const contract = await post(
        ADMIN_KEY,
        `/agents/${watched}/contracts`,
        { metric: "refusal_rate", ceiling: 0.1, window_decisions: 40 },
        201,
      );
      return { key: ADMIN_KEY, path: `/agents/${watched}/breakers`, body: { contract_id: contract.id, action: "notify" } };
    },
    "POST /v1/breakers/{id}/arm": async () => ({ key: api.approverKey(), path: `/breakers/${(await breaker()).id}/arm`, body: arm }),
    "POST /v1/breakers/{id}/disarm": async () => {
      const armed = (await breaker()).id as string;
      await post(api.approverKey(), `/breakers/${armed}/arm`, arm, 200);
      return { key: api.approverKey(), path: `/breakers/${armed}/disarm`, body: { reason: "tuning" } };
    },
    "POST /v1/grant-families": async () => ({ key: ADMIN_KEY, path: "/grant-families", body: familyBody(unique("family")) }),
    "POST /v1/grant-families/{id}/instantiate": async () => ({
      key: ADMIN_KEY,
      path: `/grant-families/${await pushed(unique("family"))}/instantiate`,
      body: { parameters: { agent_id: api.agent().id } },
    }),
    "POST /v1/grant-families/{id}/impact": async () => {
      const name = unique("family");
      return { key: ADMIN_KEY, path: `/grant-families/${await pushed(name)}/impact`, body: { family: familyBody(name, 9000) } };
    },
    "POST /v1/keys/{id}/revoke": async () => ({
      key: ADMIN_KEY,
      path: `/keys/${(await post(ADMIN_KEY, "/keys", { identity: unique("key"), kind: "service", roles: ["auditor"] }, 201)).id}/revoke`,
      body: {},
    }),
  };
}
