// Grants: issue, read, approve, delegate, escalate enforcement and revoke (docs/attenuation.md, docs/security.md).
// The lattice decides what a delegation may be; this module only gathers the facts and records.

import { grantStatusSchema, type Grant, type GrantDelegateBody, type GrantIssueBody, type GrantRevocation } from "@agent-authority/api";
import { ENGINE_LIMITS, HOUR_MS } from "@agent-authority/engine";
import {
  checkAttenuation,
  inheritChildTerms,
  modeRank,
  type ChildRequest,
  type GrantTerms,
  type ParentUsage,
} from "@agent-authority/lattice";
import { Refusal } from "../common/index.js";
import { newId } from "../../ids.js";
import type { GrantEventRecord, GrantFilter, GrantRecord, Page, Revocation, Store } from "../../store/core/index.js";
import { requireCertificationFor } from "../agents/index.js";
import { confinedToAgent, type Caller, type ServiceContext } from "../common/index.js";
import { decodeCursor, encodeCursor } from "../common/index.js";
import { emitEvent } from "../events/index.js";
import { checkPolicy } from "./policy.js";
import { grantStatus, grantView, iso } from "../common/index.js";

const DEFAULT_TTL_HOURS = 24;

/** The lattice's view of a grant. */
export function grantTerms(grant: GrantRecord): GrantTerms {
  return {
    scope: { tool: [...grant.scope.tool] },
    window: { start: grant.issued_at, end: grant.expires_at },
    budget_amount_minor: grant.budget_amount_minor,
    budget_currency: grant.budget_currency,
    budget_count: grant.budget_count,
    conditions: { clean_context: grant.conditions.clean_context },
    enforcement_mode: grant.enforcement_mode,
    audience: grant.audience,
    principal: { type: grant.principal_type, id: grant.principal_id },
    delegation_policy: grant.delegation_policy,
    delegation_depth_max: grant.delegation_depth_max,
    policy: grant.policy,
  };
}

async function event(
  store: Store,
  grantId: string,
  kind: GrantEventRecord["kind"],
  actor: string,
  at: number,
  detail: Record<string, unknown> = {},
): Promise<void> {
  await store.appendGrantEvent({ id: newId("evt", at), grant_id: grantId, kind, actor, at, detail });
}

async function view(store: Store, grant: GrantRecord, now: number): Promise<Grant> {
  const usage = (await store.usage([grant.id], now)).get(grant.id)!;
  return grantView(grant, usage, now);
}

/**
 * Takes the write lock of the grant's whole delegation tree (its root row), so that a revocation
 * and a delegation in the same tree never interleave: a child is either created before the
 * revocation computes the subtree, and revoked with it, or refused afterwards.
 */
async function lockTree(store: Store, grantId: string): Promise<void> {
  const grant = await store.getGrant(grantId);
  if (grant !== undefined) await store.lockGrant(grant.root_id);
}

/** The grant, or 404; an agent key sees only grants held by its own agent. */
async function visibleGrant(store: Store, caller: Caller, id: string): Promise<GrantRecord> {
  const grant = await store.getGrant(id);
  const confined = confinedToAgent(caller);
  if (grant === undefined || (confined !== null && grant.agent_id !== confined)) throw new Refusal("grant_not_found", `no grant \`${id}\``);
  return grant;
}

/**
 * The grant an issue body describes, with the defaults of docs/attenuation.md: no spending, no use limit,
 * 24 hours, no delegation, `enforce`; born `pending_approval` when asked or over the ceiling.
 * Issue stores it; preview decides against it.
 */
export function grantFromIssueBody(body: GrantIssueBody, issuedBy: string, autoApprovalCeilingMinor: number, now: number): GrantRecord {
  const amount = body.budget_amount_minor ?? 0;
  const approvalRequired = body.require_approval === true || amount > autoApprovalCeilingMinor;
  const ttlHours = body.ttl_hours ?? DEFAULT_TTL_HOURS;
  const id = newId("grt", now);
  return {
    id,
    root_id: id,
    parent_id: null,
    depth: 0,
    agent_id: body.agent_id,
    principal_type: body.principal_type,
    principal_id: body.principal_id,
    scope: { tool: [...body.scope.tool] },
    budget_amount_minor: amount,
    budget_currency: body.budget_currency ?? null,
    budget_count: body.budget_count ?? null,
    ttl_hours: ttlHours,
    conditions: { clean_context: body.conditions?.clean_context ?? false },
    policy: body.policy ?? null,
    delegation_policy: body.delegation_policy ?? "none",
    delegation_depth_max: body.delegation_depth_max ?? null,
    audience: body.audience ?? null,
    enforcement_mode: body.enforcement_mode ?? "enforce",
    status: approvalRequired ? "pending_approval" : "active",
    approval_required: approvalRequired,
    issued_at: now,
    expires_at: now + ttlHours * HOUR_MS,
    issued_by: issuedBy,
    approved_by: null,
    approved_at: null,
    family_id: null,
    family_version: null,
    revoked_at: null,
    revoked_by: null,
    revocation_reason: null,
  };
}

/** Where a grant issued from a family came from: recorded on the grant and among the family's instances. */
export interface FamilyOrigin {
  readonly family_id: string;
  readonly family_version: number;
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** The one issue path: a plain issue, and an instantiation of a family (`origin`), both run it. */
export async function issueGrant(
  ctx: ServiceContext,
  caller: Caller,
  body: GrantIssueBody,
  origin?: FamilyOrigin,
): Promise<Grant & { warnings?: unknown[] }> {
  const warnings = checkPolicy(body.policy);
  const now = ctx.now();
  const plain = grantFromIssueBody(body, caller.identity, ctx.autoApprovalCeilingMinor, now);
  const grant: GrantRecord =
    origin === undefined ? plain : { ...plain, family_id: origin.family_id, family_version: String(origin.family_version) };
  const issued = await ctx.store.transaction(async (tx) => {
    if ((await tx.getAgent(grant.agent_id)) === undefined) throw new Refusal("agent_not_found", `no agent \`${grant.agent_id}\``);
    await requireCertificationFor(tx, ctx.environment, grant.agent_id, grant.enforcement_mode);
    await tx.insertGrant(grant);
    if (origin !== undefined) {
      await tx.familyPath().insertInstance({
        grant_id: grant.id,
        family_id: origin.family_id,
        family_version: origin.family_version,
        parameters: JSON.stringify(origin.parameters),
        created_at: now,
      });
    }
    const from = origin === undefined ? {} : { family_id: origin.family_id, family_version: origin.family_version };
    await event(tx, grant.id, "issued", caller.identity, now, { approval_required: grant.approval_required, ...from });
    await emitEvent(tx, "grant.issued", {
      subject: grant.id,
      agentId: grant.agent_id,
      at: now,
      data: {
        grant_id: grant.id,
        agent_id: grant.agent_id,
        status: grant.status,
        enforcement_mode: grant.enforcement_mode,
        issued_by: caller.identity,
        approval_required: grant.approval_required,
        family_id: origin?.family_id ?? null,
        family_version: origin?.family_version ?? null,
      },
    });
    return view(tx, grant, now);
  });
  return warnings.length > 0 ? { ...issued, warnings: [...warnings] } : issued;
}

export async function getGrant(ctx: ServiceContext, caller: Caller, id: string): Promise<Grant> {
  const now = ctx.now();
  return view(ctx.store, await visibleGrant(ctx.store, caller, id), now);
}

export async function listPendingGrants(ctx: ServiceContext, page: Page): Promise<{ grants: Grant[]; next_after: string | null }> {
  const now = ctx.now();
  const records = await ctx.store.listGrantsByStatus("pending_approval", page);
  const usage = await ctx.store.usage(
    records.map((g) => g.id),
    now,
  );
  // An expired grant can no longer be approved, so it is not awaiting approval any more.
  const grants = records.filter((g) => grantStatus(g, now) === "pending_approval").map((g) => grantView(g, usage.get(g.id)!, now));
  return { grants, next_after: records.length === page.limit ? records[records.length - 1]!.id : null };
}

/** The statuses `GET /v1/grants?status=` accepts: those a grant reads as. */
/** The statuses a grant reads as, from the API's own schema. */
const GRANT_STATUSES = grantStatusSchema.enum;
const GRANT_ID = /^grt_[0-9a-hjkmnp-tv-z]{26}$/;

/** The query of `GET /v1/grants`: its filters, the page size and the cursor, as sent. */
export interface GrantListQuery {
  readonly agent_id?: string | undefined;
  readonly status?: string | undefined;
  readonly family_id?: string | undefined;
  readonly principal_id?: string | undefined;
  readonly limit: number;
  readonly cursor?: string | undefined;
}

/**
 * `GET /v1/grants`: grants in id order (oldest first), filtered by agent, status (as read now),
 * family and principal, one page at a time behind an opaque cursor. An agent key lists only its
 * own agent's grants, whatever `agent_id` it asks for.
 */
export async function listGrants(
  ctx: ServiceContext,
  caller: Caller,
  query: GrantListQuery,
): Promise<{ grants: Grant[]; next_cursor: string | null }> {
  const status = query.status;
  if (status !== undefined && !(GRANT_STATUSES as readonly string[]).includes(status)) {
    throw new Refusal("invalid_query", `\`status\` must be one of ${GRANT_STATUSES.map((s) => `\`${s}\``).join(", ")}`);
  }
  const after = query.cursor === undefined ? undefined : decodeCursor(ctx.cursorKey, "grants", query.cursor, GRANT_ID);
  const confined = confinedToAgent(caller);
  if (confined !== null && query.agent_id !== undefined && query.agent_id !== confined) return { grants: [], next_cursor: null };
  const now = ctx.now();
  const filter = {
    agent_id: confined ?? query.agent_id,
    status: status as GrantFilter["status"],
    family_id: query.family_id,
    principal_id: query.principal_id,
  };
  const records = await ctx.store.listGrants(filter, now, { after, limit: query.limit });
  const usage = await ctx.store.usage(
    records.map((g) => g.id),
    now,
  );
  return {
    grants: records.map((g) => grantView(g, usage.get(g.id)!, now)),
    next_cursor: records.length === query.limit ? encodeCursor(ctx.cursorKey, "grants", records[records.length - 1]!.id) : null,
  };
}

export async function approveGrant(ctx: ServiceContext, caller: Caller, id: string, note: string | undefined): Promise<Grant> {
  if (caller.kind !== "human") throw new Refusal("human_required", "approval needs a human key");
  return ctx.store.transaction(async (tx) => {
    await lockTree(tx, id);
    const grant = await visibleGrant(tx, caller, id);
    const now = ctx.now();
    const status = grantStatus(grant, now);
    if (status !== "pending_approval") throw new Refusal("grant_not_pending", `grant \`${id}\` is ${status.replace("_", " ")}`);
    if (grant.issued_by === caller.identity)
      throw new Refusal("self_approval", `\`${caller.identity}\` issued this grant; another human must approve it`);
    // Approval makes the authority live, so the agent must still be certified for a refusing mode.
    await requireCertificationFor(tx, ctx.environment, grant.agent_id, grant.enforcement_mode);
    await tx.approveGrant(id, caller.identity, now);
    await event(tx, id, "approved", caller.identity, now, note === undefined ? {} : { note });
    await emitEvent(tx, "grant.approved", {
      subject: id,
      agentId: grant.agent_id,
      at: now,
      data: { grant_id: id, agent_id: grant.agent_id, approved_by: caller.identity, note: note ?? null },
    });
    return view(tx, (await tx.getGrant(id))!, now);
  });
}

/** The chain must be live for authority to flow from it: every link active and inside its window. */
function requireLiveChain(chain: readonly GrantRecord[], now: number): void {
  for (const link of chain) {
    const status = grantStatus(link, now);
    if (status !== "active") throw new Refusal("grant_not_active", `grant \`${link.id}\` is ${status.replace("_", " ")}`);
  }
}

/** A child must leave its chain within the length the engine decides on, or it could never authorize. */
function requireRoomInChain(chain: readonly GrantRecord[]): void {
  if (chain.length + 1 > ENGINE_LIMITS.chainLinksMax) {
    throw new Refusal(
      "delegation_chain_too_long",
      `the child would be link \`${chain.length + 1}\` of its chain; a chain holds at most \`${ENGINE_LIMITS.chainLinksMax}\` grants`,
    );
  }
}

/** What the delegation asks of the child, in the lattice's terms: only what the body names. */
function childRequest(body: GrantDelegateBody, parent: GrantRecord, now: number): ChildRequest {
  const ttlHours = body.ttl_hours;
  return {
    window: { start: now, end: ttlHours === undefined ? parent.expires_at : now + ttlHours * HOUR_MS },
    ...(body.scope === undefined ? {} : { scope: body.scope }),
    ...(body.budget_amount_minor === undefined ? {} : { budget_amount_minor: body.budget_amount_minor }),
    ...(body.budget_currency === undefined ? {} : { budget_currency: body.budget_currency }),
    ...(body.budget_count === undefined ? {} : { budget_count: body.budget_count }),
    ...(body.conditions === undefined ? {} : { conditions: { clean_context: body.conditions.clean_context ?? false } }),
    ...(body.enforcement_mode === undefined ? {} : { enforcement_mode: body.enforcement_mode }),
    ...(body.audience === undefined ? {} : { audience: body.audience }),
    ...(body.principal_type === undefined && body.principal_id === undefined
      ? {}
      : { principal: { type: body.principal_type ?? parent.principal_type, id: body.principal_id ?? parent.principal_id } }),
    ...(body.delegation_policy === undefined ? {} : { delegation_policy: body.delegation_policy }),
    ...(body.delegation_depth_max === undefined ? {} : { delegation_depth_max: body.delegation_depth_max }),
    ...(body.policy === undefined ? {} : { policy: body.policy }),
  };
}

/** The child's record: its terms, its place under the parent, and who issued it. */
function childRecord(id: string, parent: GrantRecord, terms: GrantTerms, agentId: string, issuedBy: string): GrantRecord {
  return {
    id,
    root_id: parent.root_id,
    parent_id: parent.id,
    depth: parent.depth + 1,
    agent_id: agentId,
    principal_type: terms.principal.type,
    principal_id: terms.principal.id,
    scope: { tool: [...terms.scope.tool] },
    budget_amount_minor: terms.budget_amount_minor,
    budget_currency: terms.budget_currency,
    budget_count: terms.budget_count,
    ttl_hours: Math.max(1, Math.ceil((terms.window.end - terms.window.start) / HOUR_MS)),
    conditions: { clean_context: terms.conditions.clean_context },
    policy: terms.policy,
    delegation_policy: terms.delegation_policy,
    delegation_depth_max: terms.delegation_depth_max,
    audience: terms.audience,
    enforcement_mode: terms.enforcement_mode,
    status: "active",
    approval_required: false,
    issued_at: terms.window.start,
    expires_at: terms.window.end,
    issued_by: issuedBy,
    approved_by: null,
    approved_at: null,
    family_id: parent.family_id,
    family_version: parent.family_version,
    revoked_at: null,
    revoked_by: null,
    revocation_reason: null,
  };
}

/** A child may only narrow its parent: each axis it would widen is named in the refusal. */
function requireNarrowing(parentTerms: GrantTerms, terms: GrantTerms, usage: ParentUsage): void {
  const verdict = checkAttenuation(parentTerms, terms, usage);
  if (!verdict.ok) {
    throw new Refusal("delegation_widens", `the child would widen ${verdict.widenings.map((w) => `\`${w.axis}\``).join(", ")}`, {
      widenings: verdict.widenings,
    });
  }
}

/** Stores the child with its history event and the `grant.delegated` event for subscribers. */
async function insertChild(tx: Store, record: GrantRecord, issuedBy: string, now: number): Promise<void> {
  await tx.insertGrant(record);
  await event(tx, record.id, "delegated", issuedBy, now, { parent_id: record.parent_id });
  await emitEvent(tx, "grant.delegated", {
    subject: record.id,
    agentId: record.agent_id,
    at: now,
    data: {
      grant_id: record.id,
      parent_id: record.parent_id,
      root_id: record.root_id,
      agent_id: record.agent_id,
      issued_by: issuedBy,
      enforcement_mode: record.enforcement_mode,
    },
  });
}

/** The child's terms: the request over what the parent still has, once the chain may carry it. */
async function delegatedTerms(
  tx: Store,
  parent: GrantRecord,
  body: GrantDelegateBody,
  now: number,
): Promise<{ parentTerms: GrantTerms; terms: GrantTerms; usage: ParentUsage }> {
  const chain = await tx.grantChain(parent.id);
  requireLiveChain(chain, now);
  requireRoomInChain(chain);
  if ((await tx.getAgent(body.agent_id)) === undefined) throw new Refusal("agent_not_found", `no agent \`${body.agent_id}\``);
  const parentUsage = (await tx.usage([parent.id], now)).get(parent.id)!;
  const usage: ParentUsage = { uses: parentUsage.uses, spent_minor: parentUsage.held_minor + parentUsage.settled_minor };
  const parentTerms = grantTerms(parent);
  return { parentTerms, terms: inheritChildTerms(parentTerms, childRequest(body, parent, now), usage), usage };
}

export async function delegateGrant(
  ctx: ServiceContext,
  caller: Caller,
  parentId: string,
  body: GrantDelegateBody,
): Promise<Grant & { warnings?: unknown[] }> {
  const warnings = checkPolicy(body.policy);
  const child = await ctx.store.transaction(async (tx) => {
    await lockTree(tx, parentId);
    const parent = await visibleGrant(tx, caller, parentId);
    const now = ctx.now();
    const { parentTerms, terms, usage } = await delegatedTerms(tx, parent, body, now);
    // Certification first: who may hold refusing authority, then what the authority may be.
    // Also for the same agent: otherwise an observe grant delegated to its own agent in enforce
    // would be an escalation that skipped the check (INVARIANT certified-to-refuse).
    await requireCertificationFor(tx, ctx.environment, body.agent_id, terms.enforcement_mode);
    requireNarrowing(parentTerms, terms, usage);
    const record = childRecord(newId("grt", now), parent, terms, body.agent_id, caller.identity);
    await insertChild(tx, record, caller.identity, now);
    return view(tx, record, now);
  });
  return warnings.length > 0 ? { ...child, warnings: [...warnings] } : child;
}

export async function escalateEnforcement(ctx: ServiceContext, caller: Caller, id: string, mode: "observe" | "enforce"): Promise<Grant> {
  return ctx.store.transaction(async (tx) => {
    await lockTree(tx, id);
    const grant = await visibleGrant(tx, caller, id);
    const now = ctx.now();
    const status = grantStatus(grant, now);
    if (status === "revoked" || status === "expired") throw new Refusal("grant_not_active", `grant \`${id}\` is ${status}`);
    if (modeRank(mode) <= modeRank(grant.enforcement_mode)) {
      throw new Refusal("not_an_escalation", `grant \`${id}\` is in \`${grant.enforcement_mode}\`; \`${mode}\` is not stricter`, {
        enforcement_mode: grant.enforcement_mode,
      });
    }
    await requireCertificationFor(tx, ctx.environment, grant.agent_id, mode);
    await tx.setEnforcementMode(id, grant.enforcement_mode, mode);
    await event(tx, id, "enforcement_escalated", caller.identity, now, { from: grant.enforcement_mode, to: mode });
    await emitEvent(tx, "grant.enforcement_changed", {
      subject: id,
      agentId: grant.agent_id,
      at: now,
      data: { grant_id: id, agent_id: grant.agent_id, from: grant.enforcement_mode, to: mode, changed_by: caller.identity },
    });
    return view(tx, (await tx.getGrant(id))!, now);
  });
}

/** Revokes the grant and its whole subtree; answers exactly the ids this request revoked. */
export async function revokeGrant(ctx: ServiceContext, caller: Caller, id: string, reason: string | undefined): Promise<GrantRevocation> {
  return ctx.store.transaction(async (tx) => {
    await lockTree(tx, id);
    const grant = await tx.getGrant(id);
    const confined = confinedToAgent(caller);
    // An agent key may revoke below any grant its agent holds: that only ever takes authority away.
    const chain = grant === undefined ? [] : await tx.grantChain(id);
    if (grant === undefined || (confined !== null && !chain.some((link) => link.agent_id === confined))) {
      throw new Refusal("grant_not_found", `no grant \`${id}\``);
    }
    if (grant.status === "revoked") throw new Refusal("grant_already_revoked");
    const now = ctx.now();
    const revoked = await revokeSubtreeWithin(tx, id, { at: now, by: caller.identity, reason: reason ?? null });
    return { grant_id: id, revoked, revoked_at: iso(now) };
  });
}

/**
 * Revokes the grant and its whole subtree inside an open transaction, recording each revocation in
 * the grant's history; answers exactly the ids it revoked. Circuit breakers revoke through it too.
 */
export async function revokeSubtreeWithin(
  tx: Store,
  id: string,
  revocation: Revocation,
  detail: Record<string, unknown> = {},
): Promise<string[]> {
  const revoked = await tx.revokeGrants(await tx.subtreeIds(id), revocation);
  for (const revokedId of revoked) await event(tx, revokedId, "revoked", revocation.by, revocation.at, { via: id, ...detail });
  if (revoked.length > 0) {
    const grant = (await tx.getGrant(id))!;
    await emitEvent(tx, "grant.revoked", {
      subject: id,
      agentId: grant.agent_id,
      at: revocation.at,
      data: {
        grant_id: id,
        agent_id: grant.agent_id,
        revoked,
        revoked_by: revocation.by,
        reason: revocation.reason,
        breaker_id: typeof detail["breaker_id"] === "string" ? detail["breaker_id"] : null,
        trip_id: typeof detail["trip_id"] === "string" ? detail["trip_id"] : null,
      },
    });
  }
  return revoked;
}
