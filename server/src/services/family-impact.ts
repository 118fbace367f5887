// The impact preview of a candidate family version (docs/families.md): the sealed decisions of the
// family's grants over the last N days are decided again by the engine's `decide` under the terms
// the candidate would have given each grant, and the enforce outcomes that differ are reported.
// Nothing is written; the ledger is only read.

import { API_LIMITS, type GrantIssueBody } from "@agent-authority/api";
import {
  decide, HOUR_MS, type ApprovalRecord, type CertificateState, type ChainLink, type DecisionRequest, type DecisionState,
  type GateResult, type LiveHold, type Outcome,
} from "@agent-authority/engine";
import { instantiateFamily, type GrantFamilyBody } from "@agent-authority/families";
import { ApiProblem } from "../http/problem.js";
import type { LedgerRow } from "../store/decision-sql.js";
import type { CertificateRecord, GrantRecord } from "../store/store.js";
import { decisionState } from "./authorize.js";
import type { ServiceContext } from "./context.js";
import { checkFamilyBody, familyVersion } from "./families.js";
import { familyContentHash } from "@agent-authority/families";
import { grantFromIssueBody, grantTerms } from "./grants.js";
import { iso } from "./views.js";

/** The most sealed decisions one preview reads (usage history included); past it the answer says `truncated`. */
export const IMPACT_DECISIONS_MAX = 10_000;
/**
 * The most certificates of one agent (in this environment) a preview reads to find the one each
 * decision was made under. An agent with more is not guessed at: its grants are listed under
 * `skipped`, and their decisions are not replayed.
 */
export const IMPACT_CERTIFICATES_PER_AGENT_MAX = 1_000;
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
  readonly holds: readonly { grant_id: string; amount_minor: number; expires_at: number }[];
  /** The certificate the decision found valid (null: none); absent from records sealed before it was kept. */
  readonly certificate_id?: string | null;
}

/** What a sealed settlement record keeps that a replay needs (see settle.ts). */
interface SealedSettlement {
  readonly decision_ledger_id: string;
  readonly amount_minor: number;
}

/** A grant's usage as the replay has it: its uses, what was settled, and each decision's hold until it is settled. */
interface ReplayUsage {
  uses: number;
  settled_minor: number;
  readonly holds: Map<string, LiveHold>;
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

/**
 * The agent's certificate as the decision found it, whatever the mode: the one the record names,
 * or for a record sealed before certificates were named, the one valid at the decision's time
 * (issued at or before it, not yet revoked). A later revocation is not the decision's world.
 */
class CertificatesAt {
  readonly #history = new Map<string, Promise<CertificateRecord[] | undefined>>();
  constructor(private readonly ctx: ServiceContext) {}

  /** Whether the agent holds more certificates than one preview reads (IMPACT_CERTIFICATES_PER_AGENT_MAX). */
  async tooMany(agentId: string): Promise<boolean> {
    return (await this.#of(agentId)) === undefined;
  }

  /** Only for an agent that is not `tooMany`. */
  async at(row: LedgerRow, sealed: SealedDecision): Promise<CertificateState | null> {
    const history = (await this.#of(row.agent_id))!;
    const found = sealed.certificate_id !== undefined
      ? history.find((c) => c.id === sealed.certificate_id)
      : history.find((c) => c.issued_at <= row.created_at && (c.revoked_at === null || c.revoked_at > row.created_at));
    return found === undefined ? null : { ...decisionState(this.ctx.environment, found).certificate!, revoked_at: null };
  }

  #of(agentId: string): Promise<CertificateRecord[] | undefined> {
    let history = this.#history.get(agentId);
    if (history === undefined) {
      history = certificateHistory(this.ctx, agentId);
      this.#history.set(agentId, history);
    }
    return history;
  }
}

/**
 * Every certificate of the agent in this environment, page by page, or undefined once there are
 * more than IMPACT_CERTIFICATES_PER_AGENT_MAX: at most that many plus one are read.
 */
async function certificateHistory(ctx: ServiceContext, agentId: string): Promise<CertificateRecord[] | undefined> {
  const all: CertificateRecord[] = [];
  for (let after: string | undefined; ;) {
    const limit = Math.min(API_LIMITS.listLimitMax, IMPACT_CERTIFICATES_PER_AGENT_MAX + 1 - all.length);
    const page = await ctx.store.listCertificates({ agent_id: agentId, environment: ctx.environment }, { after, limit });
    all.push(...page);
    if (all.length > IMPACT_CERTIFICATES_PER_AGENT_MAX) return undefined;
    if (page.length < limit) return all;
    after = page[page.length - 1]!.id;
  }
}

function replayOne(
  row: LedgerRow, sealed: SealedDecision, grant: GrantRecord, usage: ReplayUsage, state: DecisionState,
): ReturnType<typeof decide> {
  const approval: ApprovalRecord | null = sealed.approver === null || sealed.approval_id === null ? null : {
    approval_id: sealed.approval_id, approver: sealed.approver, grant_id: grant.id, tool: sealed.request.tool,
    amount_ceiling_minor: sealed.request.amount_minor ?? 0, expires_at: Number.MAX_SAFE_INTEGER,
  };
  const request: DecisionRequest = {
    grant_id: grant.id, agent_id: row.agent_id, tool: sealed.request.tool,
    amount_minor: sealed.request.amount_minor ?? null, currency: sealed.request.currency ?? null,
    audience: sealed.request.audience ?? null, args: sealed.request.args ?? null, context: sealed.request.context ?? null,
    attestation: sealed.request.attestation ?? null, approval,
  };
  const link: ChainLink = {
    grant_id: grant.id, agent_id: grant.agent_id, status: statusAt(sealed, grant), terms: grantTerms(grant),
    // The engine itself leaves out the holds that expired before the decision.
    usage: { uses: usage.uses, settled_minor: usage.settled_minor, holds: [...usage.holds.values()] },
  };
  return decide(request, [link], state, row.created_at);
}

/** Counts a decision on the grant's usage: one use and its hold on the grant, as a live store would. */
function countDecision(usage: ReplayUsage, ledgerId: string, grantId: string, counted: boolean, holds: readonly { grant_id: string; amount_minor: number; expires_at: number }[]): void {
  if (!counted) return;
  usage.uses += 1;
  const hold = holds.find((h) => h.grant_id === grantId);
  if (hold !== undefined && hold.amount_minor > 0) usage.holds.set(ledgerId, { amount_minor: hold.amount_minor, expires_at: hold.expires_at });
}

/**
 * Applies a settlement as the server would have: only a decision that held in the replay can be
 * settled, up to what it held; the hold is released and the captured amount counts as settled.
 */
function settle(usage: ReplayUsage, sealed: SealedSettlement): void {
  const hold = usage.holds.get(sealed.decision_ledger_id);
  if (hold === undefined || sealed.amount_minor > hold.amount_minor) return;
  usage.holds.delete(sealed.decision_ledger_id);
  usage.settled_minor += sealed.amount_minor;
}

/** The replay of every record of the family's replayable grants, oldest first; changes are reported from `since` on. */
async function replayRecords(
  ctx: ServiceContext, rows: readonly LedgerRow[], replayable: Map<string, GrantRecord>, since: number, certificates: CertificatesAt,
): Promise<{ replayed: number; changes: Change[] }> {
  const usages = new Map<string, ReplayUsage>();
  const changes: Change[] = [];
  let replayed = 0;
  for (const row of rows) {
    // Every record read is in the tree of the instance it was read for, a root grant.
    const grant = replayable.get(row.tree_id);
    if (grant === undefined) continue;
    let usage = usages.get(grant.id);
    if (usage === undefined) usages.set(grant.id, usage = { uses: 0, settled_minor: 0, holds: new Map() });
    if (row.kind === "settlement") {
      settle(usage, JSON.parse(row.record) as SealedSettlement);
      continue;
    }
    const sealed = JSON.parse(row.record) as SealedDecision;
    // A descendant's decision counts on the grant as it was sealed; only the grant's own are replayed.
    if (row.grant_id !== grant.id) {
      countDecision(usage, row.id, grant.id, sealed.counted, sealed.holds);
      continue;
    }
    // A decision on a grant its caller did not hold was decided on no chain: no terms can change it.
    if (!sealed.chain.includes(row.grant_id)) continue;
    const state: DecisionState = {
      environment: ctx.environment, certificate: await certificates.at(row, sealed),
      ...(ctx.holdLifetimeMs === undefined ? {} : { hold_lifetime_ms: ctx.holdLifetimeMs }),
    };
    const decision = replayOne(row, sealed, grant, usage, state);
    countDecision(usage, row.id, grant.id, decision.counted, decision.holds);
    if (row.created_at < since) continue;
    replayed += 1;
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
  return { replayed, changes };
}

/**
 * `POST /v1/grant-families/{id}/impact`. Each grant is re-instantiated from the candidate with the
 * parameters it was given; a grant whose parameters the candidate refuses is listed under
 * `skipped`. Usage before each decision is what the sealed records counted (uses and held amounts).
 */
export async function previewFamilyImpact(
  ctx: ServiceContext, id: string, body: { family: GrantFamilyBody; days?: number }, sentText?: string,
): Promise<Record<string, unknown>> {
  const current = await familyVersion(ctx, id, undefined);
  const candidate = body.family;
  checkFamilyBody(candidate, sentText === undefined ? undefined : { text: sentText, path: ["family"] });
  if (candidate.id !== current.name) {
    throw new ApiProblem("invalid_family", `the candidate is family \`${candidate.id}\`, not \`${current.name}\``);
  }
  const now = ctx.now();
  const days = body.days ?? 30;
  const since = now - days * DAY_MS;
  const families = ctx.store.familyPath();
  // A grant lives at most ttlHoursMax, so its usage history starts no earlier than that before the window.
  const rows = await families.sealedRecordsOfFamily(id, since - API_LIMITS.ttlHoursMax * HOUR_MS, IMPACT_DECISIONS_MAX + 1);
  const truncated = rows.length > IMPACT_DECISIONS_MAX;
  const grantIds = [...new Set(rows.map((r) => r.grant_id))];
  const instances = new Map((await families.instancesOf(id, grantIds)).map((i) => [i.grant_id, i]));
  const replayable = new Map<string, GrantRecord>();
  const skipped: { grant_id: string; decisions: number; reason: string }[] = [];
  const certificates = new CertificatesAt(ctx);
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
    // Only the grant's own decisions are replayed, each under its agent's certificate of the time.
    if (await certificates.tooMany(stored.agent_id)) {
      const decisions = rows.filter((r) => r.grant_id === grantId && r.created_at >= since).length;
      if (decisions > 0) {
        skipped.push({ grant_id: grantId, decisions, reason: `the grant's agent holds more than ${IMPACT_CERTIFICATES_PER_AGENT_MAX} certificates in this environment, more than one preview reads to find each decision's` });
      }
      continue;
    }
    replayable.set(grantId, candidateGrant(stored, result.value.grant as unknown as GrantIssueBody, ctx.autoApprovalCeilingMinor));
  }
  const { replayed, changes } = await replayRecords(ctx, rows.slice(0, IMPACT_DECISIONS_MAX), replayable, since, certificates);
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
