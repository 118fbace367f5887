// One handler per v1 operation: each turns a validated request into a service call and a status.

import { CONSOLE_PATH } from "./console.js";
import type {
  AgentCreateBody,
  CertificationBody,
  DecisionAbandonBody,
  DecisionApproveBody,
  SettleBody,
  GrantDelegateBody,
  GrantEnforcementBody,
  GrantIssueBody,
  GrantPreviewBody,
  KeyCreateBody,
  ReasonBody,
} from "@agent-authority/api";
import type { BreakerArmBody, BreakerCreateBody, ContractCreateBody } from "@agent-authority/api";
import { armBreaker, createBreaker, disarmBreaker, getBreaker, listFindings } from "../services/breakers/index.js";
import { declareContract, listContracts } from "../services/breakers/index.js";
import { breakerCounterfactual } from "../services/breakers/index.js";
import { getFamily, instantiate, listFamilies, pushFamily, versionQuery } from "../services/families/index.js";
import { previewFamilyImpact } from "../services/families/index.js";
import type { GrantFamilyBody } from "@agent-authority/families";
import {
  certificationStatus,
  certifyAgent,
  createAgent,
  listAgents,
  listCertificates,
  revokeCertificate,
  visibleAgent,
} from "../services/agents/index.js";
import type { Caller, ServiceContext } from "../services/common/index.js";
import {
  approveGrant,
  delegateGrant,
  escalateEnforcement,
  getGrant,
  issueGrant,
  listGrants,
  listPendingGrants,
  revokeGrant,
} from "../services/grants/index.js";
import { createKeyFromRequest, listKeys, revokeKey, secretShownOnce } from "../services/keys/index.js";
import { abandonDecisionWait, approveDecision, decisionApproval } from "../services/decisions/index.js";
import { previewGrant } from "../services/decisions/index.js";
import { verifyLedger } from "../services/seal/index.js";
import { decisionReceipt, ledgerCheckpoint, ledgerConsistency } from "../services/ledger/index.js";
import { grantLedger, listPendingDecisions } from "../services/decisions/index.js";
import { settleDecision, visibleDecision } from "../services/ledger/index.js";
import {
  changeWebhook,
  createWebhook,
  getWebhook,
  listDeliveries,
  listWebhooks,
  redeliver,
  type WebhookCreateBody,
} from "../services/events/index.js";
import { agentView, keyView } from "../services/common/index.js";
import type { Page } from "../store/core/index.js";
import type { HttpMetrics } from "./metrics.js";
import { Refusal } from "../services/common/index.js";

export interface HandlerRequest {
  readonly ctx: ServiceContext;
  /** Absent only on the endpoints that need no key. */
  readonly caller: Caller | undefined;
  readonly params: Readonly<Record<string, string>>;
  /** Validated against the endpoint's schema. */
  readonly body: unknown;
  /** The body's text as the client sent it, for reports that point into it (positions). */
  readonly sentText: string | undefined;
  page(): Page;
  /** The page size alone, for a list paged by an opaque cursor. */
  limit(): number;
  query(name: string): string | undefined;
  readonly openapi: unknown;
  readonly metrics: HttpMetrics;
  readonly version: string;
}

export interface HandlerResult {
  readonly status: number;
  readonly body: unknown;
  /** What a replay of this answer under its Idempotency-Key gets instead, when the answer must not be stored (a secret). */
  readonly replayInstead?: Refusal;
}

type Handler = (r: HandlerRequest) => Promise<HandlerResult>;

/** `GET /v1` (decision 0917): links relative to the origin, so they hold behind any proxy that keeps the paths. */
function apiIndex(version: string) {
  return {
    api_version: "v1",
    server_version: version,
    links: { openapi: "/v1/openapi.json", health: "/v1/health", ready: "/v1/ready", metrics: "/v1/metrics", console: `${CONSOLE_PATH}/` },
    docs: { api: "docs/api.md", operations: "docs/operations.md", security: "docs/security.md" },
  };
}

const ok = (body: unknown): HandlerResult => ({ status: 200, body });
const created = (body: unknown): HandlerResult => ({ status: 201, body });
const who = (r: HandlerRequest): Caller => r.caller!;
const reason = (r: HandlerRequest): string | undefined => (r.body as ReasonBody).reason;

/**
 * Checks that run before the body is validated: a decision the caller may not see answers 404
 * `decision_not_found` whatever the body, so that neither its existence nor the endpoint's body
 * rules are told to another agent first (docs/security.md's table).
 */
export const BEFORE_BODY: Readonly<
  Record<string, (ctx: ServiceContext, caller: Caller, params: Readonly<Record<string, string>>) => Promise<void>>
> = {
  settleDecision: async (ctx, caller, params) => {
    await visibleDecision(ctx.store, caller, params["ledger_id"]!);
  },
  abandonDecisionWait: async (ctx, caller, params) => {
    await visibleDecision(ctx.store, caller, params["ledger_id"]!);
  },
};

export const HANDLERS: Readonly<Record<string, Handler>> = {
  index: async (r) => ok(apiIndex(r.version)),
  health: async (r) => ok({ status: "ok", version: r.version, environment: r.ctx.environment }),
  ready: async (r) => {
    try {
      await r.ctx.store.ping();
    } catch {
      throw new Refusal("not_ready", "the database does not answer");
    }
    const stopped = r.ctx.authorizeWorker?.failure;
    if (stopped !== undefined) throw new Refusal("not_ready", `authorize cannot be answered: ${stopped.message}`);
    return ok({ status: "ok", version: r.version, environment: r.ctx.environment });
  },
  openapi: async (r) => ok(r.openapi),
  metrics: async (r) => ok(await r.metrics.render()),

  whoami: async (r) => ok(keyView((await r.ctx.store.getKey(who(r).keyId))!)),

  createAgent: async (r) => {
    const result = await createAgent(r.ctx, who(r), r.body as AgentCreateBody);
    return { status: result.created ? 201 : 200, body: result.agent };
  },
  listAgents: async (r) => ok(await listAgents(r.ctx, r.page())),
  getAgent: async (r) => ok(agentView(await visibleAgent(r.ctx.store, who(r), r.params["agent_id"]!))),
  getCertification: async (r) => ok(await certificationStatus(r.ctx, who(r), r.params["agent_id"]!)),
  certifyAgent: async (r) => created(await certifyAgent(r.ctx, who(r), r.params["agent_id"]!, r.body as CertificationBody)),
  listCertificates: async (r) =>
    ok(await listCertificates(r.ctx, { agent_id: r.query("agent_id"), environment: r.query("environment") }, r.page())),
  revokeCertificate: async (r) => ok(await revokeCertificate(r.ctx, who(r), r.params["certificate_id"]!, reason(r))),

  issueGrant: async (r) => created(await issueGrant(r.ctx, who(r), r.body as GrantIssueBody)),
  listGrants: async (r) =>
    ok(
      await listGrants(r.ctx, who(r), {
        agent_id: r.query("agent_id"),
        status: r.query("status"),
        family_id: r.query("family_id"),
        principal_id: r.query("principal_id"),
        limit: r.limit(),
        cursor: r.query("cursor"),
      }),
    ),
  previewGrant: async (r) => ok(await previewGrant(r.ctx, r.body as GrantPreviewBody)),
  listPendingGrants: async (r) => ok(await listPendingGrants(r.ctx, r.page())),
  getGrant: async (r) => ok(await getGrant(r.ctx, who(r), r.params["grant_id"]!)),
  approveGrant: async (r) => ok(await approveGrant(r.ctx, who(r), r.params["grant_id"]!, (r.body as { note?: string }).note)),
  delegateGrant: async (r) => created(await delegateGrant(r.ctx, who(r), r.params["grant_id"]!, r.body as GrantDelegateBody)),
  escalateEnforcement: async (r) =>
    ok(await escalateEnforcement(r.ctx, who(r), r.params["grant_id"]!, (r.body as GrantEnforcementBody).enforcement_mode)),
  revokeGrant: async (r) => ok(await revokeGrant(r.ctx, who(r), r.params["grant_id"]!, reason(r))),

  settleDecision: async (r) => ok(await settleDecision(r.ctx, who(r), r.params["ledger_id"]!, r.body as SettleBody)),
  verifyLedger: async (r) => ok(await verifyLedger(r.ctx.store, r.ctx.now())),
  getLedgerCheckpoint: async (r) => ok(await ledgerCheckpoint(r.ctx)),
  getLedgerConsistency: async (r) => ok(await ledgerConsistency(r.ctx, r.query("first"), r.query("second"))),
  getDecisionReceipt: async (r) => ok(await decisionReceipt(r.ctx, who(r), r.params["ledger_id"]!)),
  listPendingDecisions: async (r) => ok(await listPendingDecisions(r.ctx, who(r), r.page())),
  getGrantLedger: async (r) => ok(await grantLedger(r.ctx, r.params["grant_id"]!, r.page())),
  getDecisionApproval: async (r) => ok(await decisionApproval(r.ctx, who(r), r.params["ledger_id"]!)),
  approveDecision: async (r) => created(await approveDecision(r.ctx, who(r), r.params["ledger_id"]!, r.body as DecisionApproveBody)),
  abandonDecisionWait: async (r) => ok(await abandonDecisionWait(r.ctx, who(r), r.params["ledger_id"]!, r.body as DecisionAbandonBody)),

  declareContract: async (r) => created(await declareContract(r.ctx, who(r), r.params["agent_id"]!, r.body as ContractCreateBody)),
  listContracts: async (r) => ok(await listContracts(r.ctx, who(r), r.params["agent_id"]!)),
  createBreaker: async (r) => created(await createBreaker(r.ctx, who(r), r.params["agent_id"]!, r.body as BreakerCreateBody)),
  breakerCounterfactual: async (r) => ok(await breakerCounterfactual(r.ctx, who(r), r.params["agent_id"]!, r.query("breaker_id"))),
  getBreaker: async (r) => ok(await getBreaker(r.ctx, r.params["breaker_id"]!)),
  armBreaker: async (r) => ok(await armBreaker(r.ctx, who(r), r.params["breaker_id"]!, r.body as BreakerArmBody)),
  disarmBreaker: async (r) => ok(await disarmBreaker(r.ctx, who(r), r.params["breaker_id"]!, reason(r))),
  listFindings: async (r) => {
    const page = r.page();
    return ok(await listFindings(r.ctx, r.query("agent_id"), page.after, page.limit));
  },

  pushGrantFamily: async (r) => {
    const result = await pushFamily(r.ctx, who(r), r.body as GrantFamilyBody, r.sentText);
    return { status: result.created ? 201 : 200, body: { ...result.family, created: result.created } };
  },
  listGrantFamilies: async (r) => ok(await listFamilies(r.ctx, r.query("name"), r.page())),
  getGrantFamily: async (r) => ok(await getFamily(r.ctx, r.params["family_id"]!, versionQuery(r.query("version")))),
  instantiateGrantFamily: async (r) =>
    created(await instantiate(r.ctx, who(r), r.params["family_id"]!, r.body as { parameters?: Record<string, unknown>; version?: number })),
  previewFamilyImpact: async (r) =>
    ok(
      await previewFamilyImpact(
        r.ctx,
        r.params["family_id"]!,
        r.body as { family?: GrantFamilyBody; source?: string; days?: number },
        r.sentText,
      ),
    ),

  listSigningKeys: async (r) => ok(r.ctx.signer.jwks()),
  rotateSigningKey: async (r) => {
    const retireKid = (r.body as { retire_kid: string }).retire_kid;
    if ((await r.ctx.signer.rotate(r.ctx.store, retireKid, r.ctx.now())) === undefined) {
      throw new Refusal(
        "signing_key_not_active",
        `\`${retireKid}\` is not the active signing key; read GET /v1/signing-keys and name the active one`,
      );
    }
    // This replica's authorize thread signs with the new key from its next batch on.
    r.ctx.authorizeWorker?.refreshSigningKeys();
    return ok(r.ctx.signer.jwks());
  },

  createKey: async (r) => {
    const key = await createKeyFromRequest(r.ctx, who(r), r.body as KeyCreateBody);
    return { ...created(key), replayInstead: secretShownOnce(key.id) };
  },
  listKeys: async (r) => ok(await listKeys(r.ctx, r.page())),

  createWebhook: async (r) => {
    const webhook = await createWebhook(r.ctx, who(r), r.body as WebhookCreateBody);
    return {
      ...created(webhook),
      replayInstead: new Refusal(
        "key_secret_shown_once",
        `the webhook \`${String(webhook["id"])}\` was created by the first request with this idempotency key; its secret is shown only once`,
        { webhook_id: webhook["id"] },
      ),
    };
  },
  listWebhooks: async (r) => ok(await listWebhooks(r.ctx)),
  getWebhook: async (r) => ok(await getWebhook(r.ctx, r.params["webhook_id"]!)),
  pauseWebhook: async (r) => ok(await changeWebhook(r.ctx, who(r), r.params["webhook_id"]!, "pause")),
  resumeWebhook: async (r) => ok(await changeWebhook(r.ctx, who(r), r.params["webhook_id"]!, "resume")),
  deleteWebhook: async (r) => ok(await changeWebhook(r.ctx, who(r), r.params["webhook_id"]!, "delete")),
  listWebhookDeliveries: async (r) => {
    const page = r.page();
    return ok(await listDeliveries(r.ctx, r.params["webhook_id"]!, page.after, page.limit));
  },
  redeliverWebhookDelivery: async (r) => ok(await redeliver(r.ctx, r.params["webhook_id"]!, r.params["delivery_id"]!)),
  revokeKey: async (r) => ok(await revokeKey(r.ctx, who(r), r.params["key_id"]!, reason(r))),
};
