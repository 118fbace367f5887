// AuthZEN 1.0 access evaluation: one mapping from an AuthZEN request onto an authorize body, each
// member decided by the authorize service itself (every gate, sealed, counted against budgets), and
// the decision answered in the AuthZEN shape with what an enforcement point needs in its context.

import type { AuthorizeBody } from "@agent-authority/api";
import { ID_PREFIXES } from "@agent-authority/api";
import type { PreparedAnswer, RequestClaim } from "../common/index.js";
import { authorize, authorizeAction } from "../decisions/index.js";
import type { Caller, ServiceContext } from "../common/index.js";
import { Refusal } from "../common/index.js";

/** An AuthZEN entity: a subject or a resource. */
export interface AuthzenEntity {
  readonly type: string;
  readonly id: string;
  readonly properties?: Record<string, unknown>;
}

/** One evaluation as the AuthZEN request states it, after the batch's defaults were applied. */
export interface AuthzenEvaluation {
  readonly subject?: AuthzenEntity;
  readonly resource?: AuthzenEntity;
  readonly action?: { readonly name: string; readonly properties?: Record<string, unknown> };
  readonly context?: Record<string, unknown>;
}

/** An AuthZEN decision: the boolean and what the enforcement point may use besides. */
export interface AuthzenDecision {
  readonly decision: boolean;
  readonly context?: Record<string, unknown>;
}

/** Context members copied onto the authorize body under the same names. */
const CONTEXT_FIELDS = ["amount_minor", "currency", "audience", "args", "approval_id", "nonce"] as const;

/** A member that cannot be decided: `decision: false` with the reason, nothing written. */
export function undecided(status: number, message: string): AuthzenDecision {
  return {
    decision: false,
    context: { error: { status, message }, reason_admin: { [String(status)]: message }, reason_user: { [String(status)]: message } },
  };
}

/** The grant the request names: a `grant` resource, or `context.grant_id` beside a resource of another type. */
function namedGrant(evaluation: AuthzenEvaluation): string | undefined {
  const resource = evaluation.resource;
  if (resource?.type === "grant") return resource.id;
  const fromContext = evaluation.context?.["grant_id"];
  return typeof fromContext === "string" ? fromContext : undefined;
}

/**
 * The authorize body of one evaluation, or the `decision: false` of one that names no grant or no
 * action. The body still goes through the authorize schema, so a malformed member decides nothing.
 */
export function authorizeBodyOf(evaluation: AuthzenEvaluation): Record<string, unknown> | AuthzenDecision {
  const grantId = namedGrant(evaluation);
  if (grantId === undefined) {
    return undecided(400, "the request names no grant: give a `grant` resource or `context.grant_id`");
  }
  const tool = evaluation.action?.name;
  if (typeof tool !== "string") return undecided(400, "the request names no action");
  const body: Record<string, unknown> = { grant_id: grantId, tool };
  const context = evaluation.context ?? {};
  for (const field of CONTEXT_FIELDS) if (context[field] !== undefined) body[field] = context[field];
  const resource = evaluation.resource;
  if (resource !== undefined && resource.type !== "grant") {
    const args = typeof body["args"] === "object" && body["args"] !== null ? (body["args"] as Record<string, unknown>) : {};
    body["args"] = { ...args, resource: { type: resource.type, id: resource.id, ...(resource.properties ?? {}) } };
  }
  const attestation = evaluation.subject?.properties?.["attestation"];
  if (attestation !== undefined) body["attestation"] = attestation;
  return body;
}

/**
 * Whether the subject is one the caller may speak for: an agent key for its own agent only, an
 * enforcement point's key (`enforcer`) for each agent its list names and no other.
 */
export function speaksFor(caller: Caller, subject: AuthzenEntity | undefined): boolean {
  if (subject === undefined || subject.type !== "agent" || !subject.id.startsWith(`${ID_PREFIXES.agent}_`)) return false;
  if (caller.roles.includes("agent")) return caller.agentId === subject.id;
  if (caller.roles.includes("enforcer")) return caller.agentIds?.includes(subject.id) === true;
  return false;
}

/**
 * Who asks for one evaluation: an agent key, by the secret it presented (decided as `/v1/authorize`
 * decides it), or an enforcement point's key for one agent of its list. The enforcer's key is the
 * decision's key: its id is sealed in the record (`key_id`) and its idempotency keys are its own.
 */
export type EvaluationAsker = { readonly secret: string } | { readonly enforcer: Caller; readonly agentId: string };

/** The caller an enforcer's key decides as: the agent it names, under the enforcer's own key id. */
function decidingCaller(enforcer: Caller, agentId: string): Caller {
  return { keyId: enforcer.keyId, identity: enforcer.identity, kind: enforcer.kind, email: enforcer.email, roles: ["agent"], agentId };
}

/** The decision answer of authorize as JSON (the fields this mapping reads). */
interface DecisionJson {
  readonly ledger_id: string;
  readonly outcome: string;
  readonly enforcement_mode: string;
  readonly decided_by: string | null;
  readonly reason_code: string;
  readonly reason: string;
  readonly residual?: string;
  readonly approval_id?: string;
  readonly holds?: readonly unknown[];
  readonly [field: string]: unknown;
}

/** The AuthZEN decision of an authorize answer: permit only on `allow`; the whole sealed decision in the context. */
export function authzenOf(answer: PreparedAnswer): AuthzenDecision {
  if (answer.status !== 200) return undecided(answer.status, "the decision could not be made");
  const decision = JSON.parse(answer.text) as DecisionJson;
  const allowed = decision.outcome === "allow";
  const reasonKey = allowed ? "200" : "403";
  const context: Record<string, unknown> = {
    ledger_id: decision.ledger_id,
    outcome: decision.outcome,
    gate: decision.decided_by,
    reason_code: decision.reason_code,
    reason_admin: { [reasonKey]: decision.reason },
    reason_user: { [reasonKey]: userReason(decision) },
    decision_record: decision,
  };
  if (decision.outcome === "gated") {
    context["approval"] = {
      approvers: decision.residual ?? null,
      approve: `POST /v1/decisions/${decision.ledger_id}/approve`,
      retry: "send the same evaluation again with `context.approval_id` set to the approval's id",
    };
  }
  if (decision.holds !== undefined && decision.holds.length > 0) {
    context["hold"] = { holds: decision.holds, settle: `POST /v1/decisions/${decision.ledger_id}/settle` };
  }
  return { decision: allowed, context };
}

/** The short reason an end user sees, without the policy's internals. */
function userReason(decision: DecisionJson): string {
  if (decision.outcome === "allow") return "allowed";
  if (decision.outcome === "gated") return "this action needs a human's approval";
  return "this action is not allowed";
}

/** Refusals that answer the whole request (a problem, no decision) rather than one member. */
const WHOLE_REQUEST_REFUSALS: ReadonlySet<string> = new Set(["idempotency_key_reused", "unauthenticated", "forbidden"]);

/** Decides one member through the authorize service and maps its answer; a refusal is `decision: false`. */
export async function evaluateOne(
  ctx: ServiceContext,
  asker: EvaluationAsker,
  body: AuthorizeBody,
  claim: RequestClaim | undefined,
): Promise<{ decision: AuthzenDecision; answer: PreparedAnswer | undefined }> {
  // An agent's key: the same entry as `POST /v1/authorize` (its thread on SQLite), with the key the
  // request presented. An enforcer's: the same decision step, as the agent it speaks for.
  const answer =
    "secret" in asker
      ? await authorize(ctx, { secret: asker.secret, read: async () => ({ body, claim }) }, {})
      : await authorizeAction(ctx, decidingCaller(asker.enforcer, asker.agentId), body, claim);
  // A request that is not the one its id first named, or a key that may not ask, is refused whole.
  if (answer instanceof Refusal && WHOLE_REQUEST_REFUSALS.has(answer.code)) throw answer;
  if (answer instanceof Refusal) return { decision: undecided(refusalStatus(answer), answer.detail ?? answer.code), answer: undefined };
  return { decision: authzenOf(answer), answer };
}

function refusalStatus(refusal: Refusal): number {
  return refusal.code === "unauthenticated" ? 401 : refusal.code === "forbidden" ? 403 : 400;
}
