// The impact preview of a candidate family version (docs/families.md): the sealed decisions of the
// family's grants over the last N days are decided again by the engine's `decide` under the terms
// the candidate would have given each grant, in `enforce` whatever the candidate's mode (decision
// 0915), and the enforce outcomes that differ are reported with what the candidate's own mode
// answers. Nothing is written; the ledger is only read.

import { API_LIMITS, type GrantIssueBody } from "@agent-authority/api";
import type { EnforcementMode } from "@agent-authority/lattice";
import {
  ABSOLUTE_GATES,
  decide,
  HOUR_MS,
  type ApprovalRecord,
  type CertificateState,
  type ChainLink,
  type Decision,
  type DecisionRequest,
  type DecisionState,
  type LiveHold,
  type Outcome,
} from "@agent-authority/engine";
import { instantiateFamily, type GrantFamilyBody } from "@agent-authority/families";
import { Refusal } from "../common/index.js";
import type { LedgerRow } from "../../store/decisions/index.js";
import type { CertificateRecord, GrantRecord } from "../../store/core/index.js";
import { decisionState } from "../decisions/index.js";
import type { ServiceContext } from "../common/index.js";
import { checkFamilyBody, familyFromSource, familyVersion } from "./families.js";
import { familyContentHash } from "@agent-authority/families";
import { grantFromIssueBody, grantTerms } from "../grants/index.js";
import {
  decisionRecord,
  familyBody,
  instanceParameters,
  settlementRecord,
  type DecisionRecord,
  type SettlementRecord,
} from "../seal/index.js";
import { iso } from "../common/index.js";

/** The most sealed decisions one preview reads (usage history included); past it the answer says `truncated`. */
export const IMPACT_DECISIONS_MAX = 10_000;
/**
 * The most certificates of one agent (in this environment) a preview reads to find the one each
 * decision was made under. An agent with more is not guessed at: its grants are listed under
 * `skipped`, and their decisions are not replayed.
 */
export const IMPACT_CERTIFICATES_PER_AGENT_MAX = 1_000;
const DAY_MS = 24 * HOUR_MS;

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
  /** What enforce would decide; `mode` is the one the candidate runs the grant in, `answer` what that mode answers. */
  readonly after: {
    outcome: string;
    decided_by: string | null;
    reason_code: string;
    reason: string;
    mode: EnforcementMode;
    answer: Outcome;
  };
}

/** The grant as the candidate would have issued it: same id, agent, time and place in its tree. */
function candidateGrant(stored: GrantRecord, issueBody: GrantIssueBody, ceilingMinor: number): GrantRecord {
  const fresh = grantFromIssueBody(issueBody, stored.issued_by, ceilingMinor, stored.issued_at);
  return {
    ...fresh,
    id: stored.id,
    root_id: stored.root_id,
    parent_id: stored.parent_id,
    depth: stored.depth,
    status: stored.status,
    family_id: stored.family_id,
    family_version: stored.family_version,
  };
}

/**
 * The replayed status of one link: active unless the sealed decision found that link not active
 * (the status gate names the link it failed on; a record without the name is about the grant).
 */
function statusAt(sealed: DecisionRecord, stored: GrantRecord, isLeaf: boolean): GrantRecord["status"] {
  const gate = sealed.gates.find((g) => g.gate === "status");
  if (gate?.result !== "fail") return "active";
  const failedOn = gate.grant_id ?? (isLeaf ? stored.id : undefined);
  if (failedOn !== stored.id) return "active";
  return stored.status === "active" ? "revoked" : stored.status;
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
  async at(row: LedgerRow, sealed: DecisionRecord): Promise<CertificateState | null> {
    const history = (await this.#of(row.agent_id))!;
    const found =
      sealed.certificate_id !== undefined
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
  for (let after: string | undefined; ; ) {
    const limit = Math.min(API_LIMITS.listLimitMax, IMPACT_CERTIFICATES_PER_AGENT_MAX + 1 - all.length);
    const page = await ctx.store.listCertificates({ agent_id: agentId, environment: ctx.environment }, { after, limit });
    all.push(...page);
    if (all.length > IMPACT_CERTIFICATES_PER_AGENT_MAX) return undefined;
    if (page.length < limit) return all;
    after = page[page.length - 1]!.id;
  }
}

function replayRequest(row: LedgerRow, sealed: DecisionRecord): DecisionRequest {
  const approval: ApprovalRecord | null =
    sealed.approver === null || sealed.approval_id === null
      ? null
      : {
          approval_id: sealed.approval_id,
          approver: sealed.approver,
          grant_id: row.grant_id,
          tool: sealed.request.tool,
          amount_ceiling_minor: sealed.request.amount_minor ?? 0,
          expires_at: Number.MAX_SAFE_INTEGER,
        };
  return {
    grant_id: row.grant_id,
    agent_id: row.agent_id,
    tool: sealed.request.tool,
    amount_minor: sealed.request.amount_minor ?? null,
    currency: sealed.request.currency ?? null,
    audience: sealed.request.audience ?? null,
    args: sealed.request.args ?? null,
    context: sealed.request.context ?? null,
    attestation: sealed.request.attestation ?? null,
    approval,
  };
}

/**
 * One tree's replay state: the candidate's root grant, the stored grants below it, each grant's
 * usage, and which grants each replayed decision charged (so that a settlement releases them all).
 */
class TreeReplay {
  readonly #usages = new Map<string, ReplayUsage>();
  readonly #charged = new Map<string, readonly string[]>();
  constructor(
    readonly candidate: GrantRecord,
    private readonly grants: ReadonlyMap<string, GrantRecord>,
  ) {}

  /**
   * The chain the sealed decision was made on, with the candidate as its root and every link in
   * `enforce`, or undefined when a link is not known.
   * INVARIANT (enforce-replay): the preview answers what enforce would decide, whatever mode the
   * candidate runs in; the mode's own answer is derived from it (`answerInMode`), never replayed.
   */
  chain(row: LedgerRow, sealed: DecisionRecord): ChainLink[] | undefined {
    const links: ChainLink[] = [];
    for (const [index, id] of sealed.chain.entries()) {
      const grant = id === this.candidate.id ? this.candidate : this.grants.get(id);
      if (grant === undefined) return undefined;
      const usage = this.#usage(id);
      links.push({
        grant_id: id,
        agent_id: grant.agent_id,
        status: statusAt(sealed, grant, id === row.grant_id && index === sealed.chain.length - 1),
        terms: { ...grantTerms(grant), enforcement_mode: "enforce" },
        // The engine itself leaves out the holds that expired before the decision.
        usage: { uses: usage.uses, settled_minor: usage.settled_minor, holds: [...usage.holds.values()] },
      });
    }
    return links;
  }

  /** Counts a decision as a live store does: one use and its hold on every grant of its chain. */
  count(
    ledgerId: string,
    counted: boolean,
    chain: readonly string[],
    holds: readonly { grant_id: string; amount_minor: number; expires_at: number }[],
  ): void {
    if (!counted) return;
    for (const id of chain) {
      const usage = this.#usage(id);
      usage.uses += 1;
      const hold = holds.find((h) => h.grant_id === id);
      if (hold !== undefined && hold.amount_minor > 0)
        usage.holds.set(ledgerId, { amount_minor: hold.amount_minor, expires_at: hold.expires_at });
    }
    this.#charged.set(ledgerId, chain);
  }

  /**
   * Applies a settlement as the server would have: only a decision that held in the replay, and
   * whose hold is still live, can be settled, up to what it held; each hold of its chain is
   * released and the captured amount counts as settled on each grant.
   */
  settle(sealed: SettlementRecord, at: number): void {
    const chain = this.#charged.get(sealed.decision_ledger_id) ?? [];
    const holds = chain.map((id) => this.#usage(id).holds.get(sealed.decision_ledger_id)).filter((h) => h !== undefined);
    const held = holds.reduce((max, h) => Math.max(max, h.amount_minor), 0);
    if (held === 0 || sealed.amount_minor > held || holds.some((h) => h.expires_at <= at)) return;
    for (const id of chain) {
      const usage = this.#usage(id);
      if (usage.holds.delete(sealed.decision_ledger_id)) usage.settled_minor += sealed.amount_minor;
    }
  }

  #usage(grantId: string): ReplayUsage {
    let usage = this.#usages.get(grantId);
    if (usage === undefined) this.#usages.set(grantId, (usage = { uses: 0, settled_minor: 0, holds: new Map() }));
    return usage;
  }
}

/**
 * What the candidate answers in its own mode, given what enforce decides (INVARIANT enforce-replay):
 * `observe` refuses only an unusable grant, and those gates run first in every mode.
 */
function answerInMode(mode: EnforcementMode, decision: Decision): Outcome {
  return mode === "enforce" || decision.decided_by === null || ABSOLUTE_GATES.has(decision.decided_by) ? decision.outcome : "allow";
}

/** Per mode the candidate runs its grants in: grants, decisions replayed, and refusals by enforce and by that mode. */
interface ModeSummary {
  mode: EnforcementMode;
  grants: number;
  replayed: number;
  enforce_refusals: number;
  refusals: number;
}

/** One summary per enforcement mode, counting the trees that would run in it. */
function modeSummaries(trees: ReadonlyMap<string, TreeReplay>): Map<EnforcementMode, ModeSummary> {
  const modes = new Map<EnforcementMode, ModeSummary>();
  for (const tree of trees.values()) {
    const mode = tree.candidate.enforcement_mode;
    const summary = modes.get(mode) ?? { mode, grants: 0, replayed: 0, enforce_refusals: 0, refusals: 0 };
    summary.grants += 1;
    modes.set(mode, summary);
  }
  return modes;
}

/** A decision the candidate terms would take otherwise, as a change: the sealed outcome against the new one. */
function changeOf(row: LedgerRow, sealed: DecisionRecord, decision: Decision, mode: EnforcementMode, answer: Outcome): Change | undefined {
  const before = sealed.would_outcome ?? (row.outcome as Outcome);
  if (before === decision.outcome) return undefined;
  return {
    ledger_id: row.id,
    grant_id: row.grant_id,
    decided_at: iso(row.created_at),
    tool: sealed.request.tool,
    before: { outcome: before, decided_by: sealed.decided_by, reason_code: sealed.reason_code },
    after: {
      outcome: decision.outcome,
      decided_by: decision.decided_by,
      reason_code: decision.reason_code,
      reason: decision.reason,
      mode,
      answer,
    },
  };
}

/** The replay of every record of the family's replayable trees, oldest first; changes are reported from `since` on. */
async function replayRecords(
  ctx: ServiceContext,
  rows: readonly LedgerRow[],
  trees: ReadonlyMap<string, TreeReplay>,
  since: number,
  certificates: CertificatesAt,
): Promise<{ replayed: number; changes: Change[]; modes: ModeSummary[] }> {
  const changes: Change[] = [];
  const modes = modeSummaries(trees);
  let replayed = 0;
  for (const row of rows) {
    // Every record read is in the tree of the instance it was read for, a root grant.
    const tree = trees.get(row.tree_id);
    if (tree === undefined) continue;
    if (row.kind === "settlement") {
      tree.settle(settlementRecord(row), row.created_at);
      continue;
    }
    const sealed = decisionRecord(row);
    // A decision on a grant its caller did not hold was decided on no chain: no terms can change it.
    if (!sealed.chain.includes(row.grant_id)) continue;
    const chain = tree.chain(row, sealed);
    if (chain === undefined) continue;
    const state: DecisionState = {
      environment: ctx.environment,
      certificate: await certificates.at(row, sealed),
      ...(ctx.holdLifetimeMs === undefined ? {} : { hold_lifetime_ms: ctx.holdLifetimeMs }),
    };
    const decision = decide(replayRequest(row, sealed), chain, state, row.created_at);
    tree.count(row.id, decision.counted, sealed.chain, decision.holds);
    if (row.created_at < since) continue;
    replayed += 1;
    const mode = tree.candidate.enforcement_mode;
    const answer = answerInMode(mode, decision);
    const summary = modes.get(mode)!;
    summary.replayed += 1;
    if (decision.outcome !== "allow") summary.enforce_refusals += 1;
    if (answer !== "allow") summary.refusals += 1;
    const change = changeOf(row, sealed, decision, mode, answer);
    if (change !== undefined) changes.push(change);
  }
  return { replayed, changes, modes: [...modes.values()] };
}

/**
 * `POST /v1/grant-families/{id}/impact`. Each grant is re-instantiated from the candidate with the
 * parameters it was given; a grant whose parameters the candidate refuses is listed under
 * `skipped`. Usage before each decision is what the sealed records counted (uses and held amounts).
 */
export async function previewFamilyImpact(
  ctx: ServiceContext,
  id: string,
  body: { family?: GrantFamilyBody; source?: string; days?: number },
  sentText?: string,
): Promise<Record<string, unknown>> {
  const current = await familyVersion(ctx, id, undefined);
  // The schema lets exactly one of the two through. A source is compiled as `authority compile`
  // does, which checks all that a sent body's check does; a body is checked where it was sent.
  const candidate = body.family ?? familyFromSource(body.source ?? "");
  if (body.family !== undefined) checkFamilyBody(body.family, sentText === undefined ? undefined : { text: sentText, path: ["family"] });
  if (candidate.id !== current.name) {
    throw new Refusal("invalid_family", `the candidate is family \`${candidate.id}\`, not \`${current.name}\``);
  }
  const now = ctx.now();
  const days = body.days ?? 30;
  const since = now - days * DAY_MS;
  const families = ctx.store.familyPath();
  // A grant lives at most ttlHoursMax, so its usage history starts no earlier than that before the window.
  const rows = await families.sealedRecordsOfFamily(id, since - API_LIMITS.ttlHoursMax * HOUR_MS, IMPACT_DECISIONS_MAX + 1);
  const truncated = rows.length > IMPACT_DECISIONS_MAX;
  const treeIds = [...new Set(rows.map((r) => r.tree_id))];
  const instances = new Map((await families.instancesOf(id, treeIds)).map((i) => [i.grant_id, i]));
  const trees = new Map<string, TreeReplay>();
  const skipped: { grant_id: string; decisions: number; reason: string }[] = [];
  const certificates = new CertificatesAt(ctx);
  for (const rootId of treeIds) {
    const instance = instances.get(rootId);
    if (instance === undefined) continue;
    const treeRows = rows.filter((r) => r.tree_id === rootId);
    const prepared = await prepareTree(ctx, candidate, instance.parameters, rootId, treeRows, certificates);
    if (typeof prepared === "string") {
      const decisions = treeRows.filter((r) => r.kind === "decision" && r.created_at >= since).length;
      if (decisions > 0) skipped.push({ grant_id: rootId, decisions, reason: prepared });
    } else if (prepared !== undefined) {
      trees.set(rootId, prepared);
    }
  }
  const { replayed, changes, modes } = await replayRecords(ctx, rows.slice(0, IMPACT_DECISIONS_MAX), trees, since, certificates);
  const symbolic = await symbolicDiff(familyBody(current), candidate);
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
    candidate_modes: modes,
    changes,
    skipped,
    symbolic,
  };
}

/**
 * The symbolic diff of the current version and the candidate (docs/analysis.md): what could change
 * for any action, beside the replay of what would have changed in the past. The solver is loaded
 * for this preview only, never on the authorize path, and released before the answer; a failure of
 * the solver is an `unknown` answer with its reason, never an error of the preview.
 */
async function symbolicDiff(current: GrantFamilyBody, candidate: GrantFamilyBody): Promise<Record<string, unknown>> {
  try {
    const analysis = await import("@agent-authority/analysis");
    const analyzer = await analysis.createAnalyzer();
    try {
      return { ...(await analysis.diffFamilies(analyzer, current, candidate)) };
    } finally {
      await analyzer.close();
    }
  } catch (error) {
    return {
      relation: "unknown",
      widening: [],
      narrowing: [],
      reason: `the solver failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/**
 * The replay of one instance's tree under the candidate, or the reason it is skipped: the
 * candidate refuses the grant's parameters, or an agent of the tree holds more certificates than
 * one preview reads (each decision is replayed under its agent's certificate of the time).
 */
async function prepareTree(
  ctx: ServiceContext,
  candidate: GrantFamilyBody,
  parameters: string,
  rootId: string,
  treeRows: readonly LedgerRow[],
  certificates: CertificatesAt,
): Promise<TreeReplay | string | undefined> {
  const stored = await ctx.store.getGrant(rootId);
  if (stored === undefined) return undefined;
  const result = instantiateFamily(candidate, instanceParameters(rootId, parameters));
  if (!result.ok) {
    const reasons = [...result.parameterProblems.map((p) => p.message), ...result.grantErrors.map((e) => e.message)];
    return `the grant's parameters do not instantiate the candidate: ${reasons.join("; ")}`;
  }
  for (const agentId of new Set(treeRows.map((r) => r.agent_id))) {
    if (await certificates.tooMany(agentId)) {
      return `an agent of the grant's tree holds more than ${IMPACT_CERTIFICATES_PER_AGENT_MAX} certificates in this environment, more than one preview reads to find each decision's`;
    }
  }
  // The grants delegated below the root keep their stored terms: the family does not own them.
  const below = new Map<string, GrantRecord>();
  const ids = new Set<string>();
  for (const row of treeRows) if (row.kind === "decision") for (const id of decisionRecord(row).chain) ids.add(id);
  for (const grantId of ids) {
    if (grantId === rootId) continue;
    const grant = await ctx.store.getGrant(grantId);
    if (grant !== undefined) below.set(grantId, grant);
  }
  return new TreeReplay(candidateGrant(stored, result.value.grant as unknown as GrantIssueBody, ctx.autoApprovalCeilingMinor), below);
}
