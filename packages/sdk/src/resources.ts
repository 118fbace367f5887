// The calls of every v1 resource, one group per resource, each a thin typed wrapper over GET or POST.
import type { CallOptions } from "./transport.js";
import type * as wire from "./generated/types.js";

/** Query parameters of the list endpoints. */
export interface ListQuery {
  readonly limit?: number;
  readonly after?: string;
}

/** Filters and page of `grants.list`: pass `cursor` back as the last page's `next_cursor`, unchanged. */
export interface GrantListQuery {
  readonly agent_id?: string;
  readonly status?: wire.GrantStatus;
  readonly family_id?: string;
  readonly principal_id?: string;
  readonly limit?: number;
  readonly cursor?: string;
}

/** The two verbs every group is built on; both throw typed errors for anything but a 2xx. */
export interface Verbs {
  get<T>(path: string, query?: object, call?: CallOptions): Promise<T>;
  post<T>(path: string, body: unknown, call?: CallOptions): Promise<T>;
}

/** Encodes one path segment, so an id can never change which endpoint is called. */
function id(value: string): string {
  return encodeURIComponent(value);
}

/** Agents and their certification. */
export function agentsCalls({ get, post }: Verbs) {
  return {
    /** Registers an agent; idempotent by name. */
    register: (body: wire.AgentCreateBody, call?: CallOptions) => post<wire.Agent>("/agents", body, call),
    list: (query?: ListQuery, call?: CallOptions) => get<wire.AgentList>("/agents", query, call),
    get: (agentId: string, call?: CallOptions) => get<wire.Agent>(`/agents/${id(agentId)}`, undefined, call),
    certification: (agentId: string, call?: CallOptions) =>
      get<wire.CertificationStatus>(`/agents/${id(agentId)}/certification`, undefined, call),
    /** Certifies the agent with a human key; `issued_by` comes from that key, never from the body. */
    certify: (agentId: string, body: wire.CertificationBody, call?: CallOptions) =>
      post<wire.Certificate>(`/agents/${id(agentId)}/certification`, body, call),
  };
}

/** Grants: issue, preview, approval, delegation, enforcement, revocation. */
export function grantsCalls({ get, post }: Verbs) {
  return {
    issue: (body: wire.GrantIssueBody, call?: CallOptions) => post<wire.Grant>("/grants", body, call),
    /** What the grant would decide for a sample action; nothing is created. */
    preview: (body: wire.GrantPreviewBody, call?: CallOptions) => post<wire.GrantPreview>("/grants/preview", body, call),
    get: (grantId: string, call?: CallOptions) => get<wire.Grant>(`/grants/${id(grantId)}`, undefined, call),
    /** One page of grants, oldest first; filter by agent, status, family or principal. */
    list: (query?: GrantListQuery, call?: CallOptions) => get<wire.GrantPage>("/grants", query, call),
    /** Every grant the filters match, page after page, following `next_cursor`. */
    all: async function* (query: Omit<GrantListQuery, "cursor"> = {}, call?: CallOptions): AsyncGenerator<wire.Grant> {
      for (let cursor: string | undefined; ; ) {
        const page: wire.GrantPage = await get<wire.GrantPage>("/grants", cursor === undefined ? query : { ...query, cursor }, call);
        yield* page.grants;
        if (page.next_cursor === null) return;
        cursor = page.next_cursor;
      }
    },
    pending: (query?: ListQuery, call?: CallOptions) => get<wire.GrantList>("/grants/pending", query, call),
    approve: (grantId: string, body: wire.GrantApproveBody = {}, call?: CallOptions) =>
      post<wire.Grant>(`/grants/${id(grantId)}/approve`, body, call),
    delegate: (grantId: string, body: wire.GrantDelegateBody, call?: CallOptions) =>
      post<wire.Grant>(`/grants/${id(grantId)}/delegate`, body, call),
    /** Makes enforcement stricter; the certification check runs. */
    enforcement: (grantId: string, body: wire.GrantEnforcementBody, call?: CallOptions) =>
      post<wire.Grant>(`/grants/${id(grantId)}/enforcement`, body, call),
    /** Revokes the grant and its whole delegation subtree; answers the exact ids revoked. */
    revoke: (grantId: string, body: wire.GrantRevokeBody = {}, call?: CallOptions) =>
      post<wire.GrantRevocation>(`/grants/${id(grantId)}/revoke`, body, call),
  };
}

/** Grant families: reviewed templates instantiated many times. */
export function familiesCalls({ get, post }: Verbs) {
  return {
    define: (body: wire.GrantFamilyBody, call?: CallOptions) => post<wire.GrantFamily>("/grant-families", body, call),
    list: (query?: ListQuery & { readonly name?: string }, call?: CallOptions) => get<wire.GrantFamilyList>("/grant-families", query, call),
    /** One family: its latest version, or the version given. */
    get: (familyId: string, query?: { readonly version?: number }, call?: CallOptions) =>
      get<wire.GrantFamily>(`/grant-families/${id(familyId)}`, query, call),
    /** Replays the family's sealed decisions of the last `days` under a candidate version; creates nothing. */
    impact: (familyId: string, body: wire.FamilyImpactBody, call?: CallOptions) =>
      post<wire.FamilyImpact>(`/grant-families/${id(familyId)}/impact`, body, call),
    /** Issues a grant from the family's reviewed version; the certification check runs. */
    instantiate: (familyId: string, body: wire.FamilyInstantiateBody, call?: CallOptions) =>
      post<wire.Grant>(`/grant-families/${id(familyId)}/instantiate`, body, call),
  };
}

/** Decisions after authorize: settlement and human approval (decision path). */
export function decisionsCalls({ get, post }: Verbs) {
  return {
    /** Gated decisions waiting for a human, newest first, each with its residual (who can approve). */
    pending: (query?: ListQuery, call?: CallOptions) => get<wire.PendingDecisionList>("/decisions/pending", query, call),
    /** Captures at most the amount held by an `allow` and releases the rest; the same body replays. */
    settle: (ledgerId: string, body: wire.SettleBody, call?: CallOptions) =>
      post<wire.Settlement>(`/decisions/${id(ledgerId)}/settle`, body, call),
    /** The approval a human gave a gated decision; 404 `approval_not_found` while it waits. */
    approval: (ledgerId: string, call?: CallOptions) => get<wire.DecisionApproval>(`/decisions/${id(ledgerId)}/approval`, undefined, call),
    /** A self-contained receipt of the decision and its settlements, verifiable offline with `verifyReceipt` and the JWKS. */
    receipt: (ledgerId: string, call?: CallOptions) => get<wire.DecisionReceipt>(`/decisions/${id(ledgerId)}/receipt`, undefined, call),
    /** A human approves one gated action; the agent retries authorize with the `approval_id`. */
    approve: (ledgerId: string, body: wire.DecisionApproveBody = {}, call?: CallOptions) =>
      post<wire.DecisionApproval>(`/decisions/${id(ledgerId)}/approve`, body, call),
    /** The agent stopped waiting for the approval of its gated decision: the console tells the approver. */
    abandoned: (ledgerId: string, body: wire.DecisionAbandonBody, call?: CallOptions) =>
      post<wire.DecisionAbandonment>(`/decisions/${id(ledgerId)}/abandoned`, body, call),
  };
}

/** Certificates across agents. */
export function certificatesCalls({ get, post }: Verbs) {
  return {
    list: (query?: ListQuery & { readonly agent_id?: string; readonly environment?: string }, call?: CallOptions) =>
      get<wire.CertificateList>("/certificates", query, call),
    revoke: (certificateId: string, body: wire.CertificateRevokeBody = {}, call?: CallOptions) =>
      post<wire.Certificate>(`/certificates/${id(certificateId)}/revoke`, body, call),
  };
}

/** API keys (admin only). */
export function keysCalls({ get, post }: Verbs) {
  return {
    /** Creates a key; the secret is in this answer only. */
    create: (body: wire.KeyCreateBody, call?: CallOptions) => post<wire.KeyCreated>("/keys", body, call),
    list: (query?: ListQuery, call?: CallOptions) => get<wire.KeyList>("/keys", query, call),
    revoke: (keyId: string, body: wire.KeyRevokeBody = {}, call?: CallOptions) => post<wire.Key>(`/keys/${id(keyId)}/revoke`, body, call),
    /** The calling key's own record: identity, kind and roles (any role). */
    whoami: (call?: CallOptions) => get<wire.Key>("/whoami", undefined, call),
  };
}

/** The server's public signing keys (no key needed) and their rotation (admin). */
export function signingKeysCalls({ get, post }: Verbs) {
  return {
    /** The JWKS every decision and settlement is signed under: the active key and every retired one. */
    list: (call?: CallOptions) => get<wire.SigningKeySet>("/signing-keys", undefined, call),
    /** Retires the active key, named by its kid (409 when another is active), and signs with a new one. */
    rotate: (body: wire.SigningKeyRotateBody, call?: CallOptions) => post<wire.SigningKeySet>("/signing-keys/rotate", body, call),
  };
}

/** Behavioural contracts of an agent; the calling human is the declarer named on every trip. */
export function contractsCalls({ get, post }: Verbs) {
  return {
    declare: (agentId: string, body: wire.ContractCreateBody, call?: CallOptions) =>
      post<wire.Contract>(`/agents/${id(agentId)}/contracts`, body, call),
    /** The agent's contracts with their live status, rate, n and 95% Wilson interval. */
    list: (agentId: string, call?: CallOptions) => get<wire.ContractList>(`/agents/${id(agentId)}/contracts`, undefined, call),
  };
}

/** Circuit breakers: created in `observe`, armed only against the counterfactual count. */
export function breakersCalls({ get, post }: Verbs) {
  return {
    /** Creates a breaker on one of the agent's contracts; it is born in `observe`. */
    create: (agentId: string, body: wire.BreakerCreateBody, call?: CallOptions) =>
      post<wire.Breaker>(`/agents/${id(agentId)}/breakers`, body, call),
    get: (breakerId: string, call?: CallOptions) => get<wire.Breaker>(`/breakers/${id(breakerId)}`, undefined, call),
    /** Arms a breaker; `expecting_trips` must equal the counterfactual count or the server answers 409. */
    arm: (breakerId: string, body: wire.BreakerArmBody, call?: CallOptions) =>
      post<wire.Breaker>(`/breakers/${id(breakerId)}/arm`, body, call),
    /** Returns an armed breaker to `observe`. */
    disarm: (breakerId: string, body: wire.BreakerDisarmBody = {}, call?: CallOptions) =>
      post<wire.Breaker>(`/breakers/${id(breakerId)}/disarm`, body, call),
    /** How often each of the agent's breakers would have tripped over the last 90 days. */
    counterfactual: (agentId: string, query?: { readonly breaker_id?: string }, call?: CallOptions) =>
      get<wire.Counterfactual>(`/agents/${id(agentId)}/breakers/counterfactual`, query, call),
  };
}

/** Findings raised by armed `notify` breakers. */
export function findingsCalls({ get }: Verbs) {
  return {
    list: (query?: ListQuery & { readonly agent_id?: string }, call?: CallOptions) => get<wire.FindingList>("/findings", query, call),
  };
}

/** The sealed ledger. */
export function ledgerCalls({ get }: Verbs) {
  return {
    /** Recomputes every hash chain and answers the first broken link, if any. */
    verify: (call?: CallOptions) => get<wire.LedgerVerification>("/ledger/verify", undefined, call),
    /** The signed tree head of the ledger's Merkle tree: a C2SP checkpoint note, as text (check it with `verifyCheckpoint`). */
    checkpoint: (call?: CallOptions) => get<string>("/ledger/checkpoint", undefined, call),
    /** The RFC 9162 proof that the tree of `first` records is a prefix of the tree of `second` (check it with `verifyConsistency`). */
    consistency: (first: number, second: number, call?: CallOptions) =>
      get<wire.LedgerConsistency>("/ledger/consistency", { first, second }, call),
    /** The sealed records of a grant's tree in chain order (`after` is a `seq`), with the tree's verification. */
    tree: (grantId: string, query?: ListQuery, call?: CallOptions) => get<wire.TreeLedger>(`/grants/${id(grantId)}/ledger`, query, call),
  };
}

/** The service itself: liveness, readiness and the OpenAPI document (no role needed). */
export function serviceCalls({ get }: Verbs) {
  return {
    health: (call?: CallOptions) => get<wire.Health>("/health", undefined, call),
    ready: (call?: CallOptions) => get<wire.Health>("/ready", undefined, call),
    openapi: (call?: CallOptions) =>
      get<{ readonly openapi: string; readonly [member: string]: unknown }>("/openapi.json", undefined, call),
    /** The API's index: its version and the links to the OpenAPI document, health, the console and the docs. */
    index: (call?: CallOptions) => get<wire.ApiIndex>("/", undefined, call),
  };
}

/** Webhooks (admin): subscriptions of a URL to event types, and their deliveries (docs/events.md). */
export function webhooksCalls({ get, post }: Verbs) {
  const one = (id: string): string => `/webhooks/${encodeURIComponent(id)}`;
  return {
    /** Subscribes a URL; the signing secret is in this answer only. */
    create: (body: wire.WebhookCreateBody, call?: CallOptions) => post<wire.WebhookCreated>("/webhooks", body, call),
    list: (call?: CallOptions) => get<wire.WebhookList>("/webhooks", undefined, call),
    get: (webhookId: string, call?: CallOptions) => get<wire.Webhook>(one(webhookId), undefined, call),
    pause: (webhookId: string, body: wire.WebhookActionBody = {}, call?: CallOptions) =>
      post<wire.Webhook>(`${one(webhookId)}/pause`, body, call),
    resume: (webhookId: string, body: wire.WebhookActionBody = {}, call?: CallOptions) =>
      post<wire.Webhook>(`${one(webhookId)}/resume`, body, call),
    delete: (webhookId: string, body: wire.WebhookActionBody = {}, call?: CallOptions) =>
      post<wire.Webhook>(`${one(webhookId)}/delete`, body, call),
    /** The webhook's deliveries, oldest first (`limit`, `after` page through them). */
    deliveries: (webhookId: string, query?: { readonly limit?: number; readonly after?: string }, call?: CallOptions) =>
      get<wire.WebhookDeliveryList>(`${one(webhookId)}/deliveries`, query, call),
    /** Sends one delivery again now, under the same `webhook-id`. */
    redeliver: (webhookId: string, deliveryId: string, body: wire.WebhookActionBody = {}, call?: CallOptions) =>
      post<wire.WebhookDelivery>(`${one(webhookId)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`, body, call),
  };
}
