// The impact preview of a candidate family version (docs/families.md): the sealed decisions of the
// family's grants over the last N days are decided again by the engine's `decide` under the terms
// the candidate would have given each grant, and the enforce outcomes that differ are reported.
// Nothing is written; the ledger is only read.

import { API_LIMITS, type GrantIssueBody } from "@agent-authority/api";
import { decide, HOUR_MS, type ApprovalRecord, type ChainLink, type DecisionRequest, type GateResult, type Outcome } from "@agent-authority/engine";
import { instantiateFamily, type GrantFamilyBody } from "@agent-authority/families";
import { ApiProblem } from "../http/problem.js";
import type { LedgerRow } from "../store/decision-sql.js";
import type { GrantRecord } from "../store/store.js";
import type { ServiceContext } from "./context.js";
import { checkFamilyBody, familyVersion } from "./families.js";
import { familyContentHash } from "@agent-authority/families";
import { grantFromIssueBody, grantTerms } from "./grants.js";
import { iso } from "./views.js";

/** The most sealed decisions one preview reads (usage history included); past it the answer says `truncated`. */
export const IMPACT_DECISIONS_MAX = 10_000;
const DAY_MS = 24 * HOUR_MS;

/** What a sealed decision record keeps that a replay needs (see authorize.ts). */
interface SealedDecision {
  readonly request: {
    readonly tool: string; readonly amount_minor?: number; readonly currency?: string; readonly audience?: string;
    readonly args?: Record<string, unknown>; readonly context?: { clean?: boolean };
    readonly attestation?: { manifest_hash: string; content_hash: string; provenance_version: string };
  };
  readonly would_outcome: Outcome | null;
  readonly decided_by: string | null;
  readonly reason_code: string;
  readonly gates: readonly GateResult[];
  readonly approver: string | null;
  readonly approval_id: string | null;
  readonly counted: boolean;
  readonly chain: readonly string[];
  readonly holds: readonly { grant_id: string; amount_minor: number }[];
}

interface Change {
  readonly ledger_id: string;
  readonly grant_id: string;
  readonly decided_at: string;
  readonly tool: string;
  readonly before: { outcome: string; decided_by: string | null; reason_code: string };
  readonly after: { outcome: string; decided_by: string | null; reason_code: string; reason: string };
}

/** The grant as the candidate would have issued it: same id, agent, time and place in its tree. */
function candidateGrant(stored: GrantRecord, issueBody: GrantIssueBody, ceilingMinor: number): GrantRecord {
  const fresh = grantFromIssueBody(issueBody, stored.issued_by, ceilingMinor, stored.issued_at);
  return {
    ...fresh,
    id: stored.id, root_id: stored.root_id, parent_id: stored.parent_id, depth: stored.depth,
    status: stored.status, family_id: stored.family_id, family_version: stored.family_version,
  };
}

/** The replayed status: active unless the sealed decision found the grant not active. */
function statusAt(sealed: SealedDecision, stored: GrantRecord): GrantRecord["status"] {
  const gate = sealed.gates.find((g) => g.gate === "status");
  return gate?.result === "fail" ? (stored.status === "active" ? "revoked" : stored.status) : "active";
}

function replayOne(
  row: LedgerRow, sealed: SealedDecision, grant: GrantRecord, usage: { uses: number; held_minor: number }, environment: string,
): ReturnType<typeof decide> {
  const certificationGate = sealed.gates.find((g) => g.gate === "certification");
  const attestation = sealed.request.attestation ?? null;
  // The agent's certificate as the sealed decision found it: valid and matching, unless that gate failed.
  const certificate = certificationGate?.result === "fail" || attestation === null ? null : {
    certificate_id: "crt_replayed", agent_id: row.agent_id, environment, revoked_at: null, ...attestation,
  };
  const approval: ApprovalRecord | null = sealed.approver === null || sealed.approval_id === null ? null : {
    approval_id: sealed.approval_id, approver: sealed.approver, grant_id: grant.id, tool: sealed.request.tool,
    amount_ceiling_minor: sealed.request.amount_minor ?? 0, expires_at: Number.MAX_SAFE_INTEGER,
  };
  const request: DecisionRequest = {
    grant_id: grant.id, agent_id: row.agent_id, tool: sealed.request.tool,
    amount_minor: sealed.request.amount_minor ?? null, currency: sealed.request.currency ?? null,
    audience: sealed.request.audience ?? null, args: sealed.request.args ?? null, context: sealed.request.context ?? null,
    attestation, approval,
  };
  const link: ChainLink = {
    grant_id: grant.id, agent_id: grant.agent_id, status: statusAt(sealed, grant), terms: grantTerms(grant),
    usage: { uses: usage.uses, settled_minor: 0, holds: usage.held_minor > 0 ? [{ amount_minor: usage.held_minor, expires_at: Number.MAX_SAFE_INTEGER }] : [] },
  };
  return decide(request, [link], { environment, certificate }, row.created_at);
}

/**
 * `POST /v1/grant-families/{id}/impact`. Each grant is re-instantiated from the candidate with the
 * parameters it was given; a grant whose parameters the candidate refuses is listed under
 * `skipped`. Usage before each decision is what the sealed records counted (uses and held amounts).
 */
export async function previewFamilyImpact(ctx: ServiceContext, id: string, body: { family: GrantFamilyBody; days?: number }): Promise<Record<string, unknown>> {
  const current = await familyVersion(ctx, id, undefined);
  const candidate = body.family;
  checkFamilyBody(candidate);
  if (candidate.id !== current.name) {
    throw new ApiProblem("invalid_family", `the candidate is family \`${candidate.id}\`, not \`${current.name}\``);
  }
  const now = ctx.now();
  const days = body.days ?? 30;
  const since = now - days * DAY_MS;
  const families = ctx.store.familyPath();
  // A grant lives at most ttlHoursMax, so its usage history starts no earlier than that before the window.
  const rows = await families.sealedDecisionsOfFamily(id, since - API_LIMITS.ttlHoursMax * HOUR_MS, IMPACT_DECISIONS_MAX + 1);
  const truncated = rows.length > IMPACT_DECISIONS_MAX;
  const grantIds = [...new Set(rows.map((r) => r.grant_id))];
  const instances = new Map((await families.instancesOf(id, grantIds)).map((i) => [i.grant_id, i]));
  const replayable = new Map<string, GrantRecord>();
  const skipped: { grant_id: string; decisions: number; reason: string }[] = [];
  for (const grantId of grantIds) {
    const instance = instances.get(grantId);
    const stored = await ctx.store.getGrant(grantId);
    if (instance === undefined || stored === undefined) continue;
    const result = instantiateFamily(candidate, JSON.parse(instance.parameters) as Record<string, unknown>);
    if (!result.ok) {
      const reasons = [...result.parameterProblems.map((p) => p.message), ...result.grantErrors.map((e) => e.message)];
      const decisions = rows.filter((r) => r.grant_id === grantId && r.created_at >= since).length;
      if (decisions > 0) skipped.push({ grant_id: grantId, decisions, reason: `the grant's parameters do not instantiate the candidate: ${reasons.join("; ")}` });
      continue;
    }
    replayable.set(grantId, candidateGrant(stored, result.value.grant as unknown as GrantIssueBody, ctx.autoApprovalCeilingMinor));
  }
  const usage = new Map<string, { uses: number; held_minor: number }>();
  const changes: Change[] = [];
  let replayed = 0;
  for (const row of rows.slice(0, IMPACT_DECISIONS_MAX)) {
    const sealed = JSON.parse(row.record) as SealedDecision;
    const grant = replayable.get(row.grant_id);
    // A decision on a grant its caller did not hold was decided on no chain: no terms can change it.
    if (grant === undefined || !sealed.chain.includes(row.grant_id)) continue;
    const used = usage.get(row.grant_id) ?? { uses: 0, held_minor: 0 };
    if (row.created_at >= since) {
      replayed += 1;
      const decision = replayOne(row, sealed, grant, used, ctx.environment);
      const before = sealed.would_outcome ?? (row.outcome as Outcome);
      const after = decision.would_outcome ?? decision.outcome;
      if (before !== after) {
        changes.push({
          ledger_id: row.id, grant_id: row.grant_id, decided_at: iso(row.created_at), tool: sealed.request.tool,
          before: { outcome: before, decided_by: sealed.decided_by, reason_code: sealed.reason_code },
          after: { outcome: after, decided_by: decision.decided_by, reason_code: decision.reason_code, reason: decision.reason },
        });
      }
    }
    if (sealed.counted) {
      const held = sealed.holds.find((h) => h.grant_id === row.grant_id)?.amount_minor ?? 0;
      usage.set(row.grant_id, { uses: used.uses + 1, held_minor: used.held_minor + held });
    }
  }
  return {
    family_id: current.id,
    current_version: current.version,
    candidate_version: candidate.version,
    candidate_content_hash: familyContentHash(candidate as unknown as Record<string, unknown>),
    days,
    since: iso(since),
    replayed,
    changed: changes.length,
    truncated,
    changes,
    skipped,
  };
}
