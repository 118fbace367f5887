// AuthZEN 1.0 search: the actions an agent may take under a grant, and the agents that may take an
// action. Each candidate is decided by the engine exactly as an evaluation would decide it now,
// from the same reads, but nothing is sealed, held or counted. A candidate the grant's scope,
// window, status or budget already refuses is never listed; one that only what the call will
// carry can decide (its arguments, amount, audience, attestation or a human's approval) is listed
// as a candidate, marked as such (decision 1702).

import { decide, type ChainLink, type Decision, type GateName } from "@agent-authority/engine";
import type { GrantRecord } from "../../store/core/index.js";
import type { Caller, ServiceContext } from "../common/index.js";
import { chainLinks, engineRequest, engineState } from "../decisions/index.js";
import { Refusal } from "../common/index.js";
import type { AuthzenEntity, AuthzenEvaluation } from "./evaluation.js";

/** Every bound of a search. */
export const SEARCH_LIMITS = Object.freeze({
  /** Results in one page when the request gives no `page.limit`. */
  pageDefault: 50,
  /** The largest `page.limit` taken. */
  pageMax: 100,
  /** Live grants read per agent by a subject search that names no grant. */
  grantsPerAgentMax: 100,
});

/** What a search finds for one grant and one action: nothing, a definite allow, or a candidate. */
type Finding = { readonly listed: false } | { readonly listed: true; readonly candidate: boolean; readonly gate: GateName | null };

/**
 * The chain with every term that the call itself can satisfy opened: no policy, no conditions, no
 * audience. What the engine still refuses under it (the grant, its status, window, scope, budget
 * of uses, the agent's certificate) it refuses whatever the call carries.
 */
function standingOnly(links: readonly ChainLink[]): ChainLink[] {
  return links.map((link) => ({
    ...link,
    terms: { ...link.terms, policy: null, conditions: { ...link.terms.conditions, clean_context: false }, audience: null },
  }));
}

/**
 * How `tool` stands under the grant now: refused by what the call cannot change (not listed),
 * allowed with what the search gives (definite, unless a pattern), or refused or gated by what the
 * call will carry (a candidate, with the gate that decided).
 */
function findingOf(standing: Decision, asked: Decision, pattern: boolean): Finding {
  // A pattern is not a tool name: the scope gate reading it says nothing about the tools it covers.
  if (standing.outcome !== "allow" && !(pattern && standing.decided_by === "scope")) return { listed: false };
  if (asked.outcome === "allow") return { listed: true, candidate: pattern, gate: null };
  return { listed: true, candidate: true, gate: asked.decided_by };
}

/** The search context the engine sees: what the request's context and subject give, nothing invented. */
function askedBody(grantId: string, tool: string, member: AuthzenEvaluation): Parameters<typeof engineRequest>[0] {
  const context = member.context ?? {};
  const attestation = member.subject?.properties?.["attestation"];
  return {
    grant_id: grantId,
    tool,
    ...(typeof context["amount_minor"] === "number" ? { amount_minor: context["amount_minor"] } : {}),
    ...(typeof context["currency"] === "string" ? { currency: context["currency"] } : {}),
    ...(typeof context["audience"] === "string" ? { audience: context["audience"] } : {}),
    ...(typeof context["args"] === "object" && context["args"] !== null && !Array.isArray(context["args"])
      ? { args: context["args"] as Record<string, unknown> }
      : {}),
    ...(typeof attestation === "object" && attestation !== null ? { attestation: attestation as never } : {}),
  } as Parameters<typeof engineRequest>[0];
}

/** Decides each of `tools` under the grant held by `agentId` now; the findings by tool, in order. */
async function findings(
  ctx: ServiceContext,
  agentId: string,
  grantId: string,
  tools: readonly string[],
  member: AuthzenEvaluation,
): Promise<{ grant: GrantRecord | undefined; found: Map<string, Finding> }> {
  const now = ctx.now();
  const held = await ctx.store.heldTree(grantId, agentId, ctx.environment, now);
  const found = new Map<string, Finding>();
  const grant = held.chain[held.chain.length - 1];
  if (grant === undefined) return { grant, found };
  const links = chainLinks(held.chain, held.usage);
  const opened = standingOnly(links);
  const state = engineState(ctx, held.certificate);
  // The agent's own certified attestation stands in for the one its call will present.
  const certificate = held.certificate;
  const attested =
    certificate === undefined
      ? {}
      : {
          attestation: {
            manifest_hash: certificate.manifest_hash,
            content_hash: certificate.content_hash,
            provenance_version: certificate.provenance_version,
          },
        };
  for (const tool of tools) {
    const standing = decide(engineRequest({ grant_id: grantId, tool, ...attested }, agentId, null), opened, state, now);
    const asked = decide(engineRequest(askedBody(grantId, tool, member), agentId, null), links, state, now);
    found.set(tool, findingOf(standing, asked, tool.includes("*")));
  }
  return { grant, found };
}

/** The grant a search request names: a `grant` resource, or `context.grant_id`; undefined when none. */
function namedGrant(member: AuthzenEvaluation): string | undefined {
  if (member.resource?.type === "grant" && typeof member.resource.id === "string") return member.resource.id;
  const fromContext = member.context?.["grant_id"];
  return typeof fromContext === "string" ? fromContext : undefined;
}

/** An action result: the scope entry and whether it is a candidate. */
export interface ActionResult {
  readonly name: string;
  readonly properties: { readonly candidate: boolean; readonly pattern: boolean; readonly gate?: GateName };
}

/**
 * `POST /access/v1/search/action`: the scope entries of the named grant that the agent may take now,
 * in the grant's order. The subject is checked by the caller (it is one the key speaks for).
 */
export async function searchActions(ctx: ServiceContext, subject: AuthzenEntity, member: AuthzenEvaluation): Promise<ActionResult[]> {
  const grantId = namedGrant(member);
  if (grantId === undefined) throw new Refusal("invalid_body", "the search names no grant: give a `grant` resource or `context.grant_id`");
  const grant = await ctx.store.getGrant(grantId);
  if (grant === undefined || grant.agent_id !== subject.id) return [];
  const tools = grant.scope.tool;
  const { found } = await findings(ctx, subject.id, grantId, tools, member);
  const results: ActionResult[] = [];
  for (const tool of tools) {
    const finding = found.get(tool);
    if (finding === undefined || !finding.listed) continue;
    results.push({
      name: tool,
      properties: {
        candidate: finding.candidate,
        pattern: tool.includes("*"),
        ...(finding.gate === null ? {} : { gate: finding.gate }),
      },
    });
  }
  return results;
}

/** A subject result: an agent and the grants under which it may take the action. */
export interface SubjectResult {
  readonly type: "agent";
  readonly id: string;
  readonly properties: { readonly candidate: boolean; readonly grant_ids: readonly string[] };
}

/**
 * `POST /access/v1/search/subject`: the agents the key speaks for that may take `action` now,
 * under the grant named or, when none is, under any of their live grants (at most
 * SEARCH_LIMITS.grantsPerAgentMax each). An agent is a candidate unless one grant allows outright.
 */
export async function searchSubjects(
  ctx: ServiceContext,
  caller: Caller,
  action: string,
  member: AuthzenEvaluation,
): Promise<SubjectResult[]> {
  const agents = spokenFor(caller);
  const grantId = namedGrant(member);
  const results: SubjectResult[] = [];
  for (const agentId of agents) {
    const grants =
      grantId === undefined
        ? await ctx.store.listGrants({ agent_id: agentId, status: "active" }, ctx.now(), { limit: SEARCH_LIMITS.grantsPerAgentMax })
        : [await ctx.store.getGrant(grantId)].filter((g): g is GrantRecord => g !== undefined && g.agent_id === agentId);
    const allowedBy: string[] = [];
    let definite = false;
    for (const grant of grants) {
      const finding = (await findings(ctx, agentId, grant.id, [action], member)).found.get(action);
      if (finding === undefined || !finding.listed) continue;
      allowedBy.push(grant.id);
      definite ||= !finding.candidate;
    }
    if (allowedBy.length > 0) results.push({ type: "agent", id: agentId, properties: { candidate: !definite, grant_ids: allowedBy } });
  }
  return results;
}

/** The agents a key speaks for, in a stable order: an agent key its own, an enforcer its list. */
function spokenFor(caller: Caller): readonly string[] {
  if (caller.roles.includes("agent")) return caller.agentId === null ? [] : [caller.agentId];
  if (caller.roles.includes("enforcer")) return [...(caller.agentIds ?? [])].sort();
  return [];
}
