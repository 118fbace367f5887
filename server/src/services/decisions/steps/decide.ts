// The decide step of the decision path (decision 0318): from what was read under the locks, the
// engine's decision, the sealed record and every row to write, for one decision or a batch of them
// in order, each seeing the effects of those before it. Pure: it reads and writes no database.

import type { AuthorizeBody } from "@agent-authority/api";
import {
  decide,
  type ApprovalRecord,
  type ChainLink,
  type Decision,
  type DecisionRequest,
  type DecisionState,
} from "@agent-authority/engine";
import { newId } from "../../../ids.js";
import type { ChargeRow, DecisionApprovalRow, IdempotencyRow, LedgerRow } from "../../../store/decisions/index.js";
import type {
  ApprovalUse,
  BatchReads,
  BatchWrites,
  CertificateRecord,
  GrantRecord,
  GrantUsage,
  SignalRow,
} from "../../../store/core/index.js";
import { JSON_TYPE, type IdempotencyClaim, type PreparedAnswer } from "../../common/index.js";
import type { SealedDecision } from "../../breakers/index.js";
import type { Caller, ServiceContext } from "../../common/index.js";
import { signalOf } from "../../breakers/index.js";
import { argsCanonicalText, decisionAnswerText, decisionState, decisionStatement, requestText } from "../decision-text.js";
import { gateTexts } from "../gate-text.js";
import { grantTerms } from "../../grants/index.js";
import { decisionAnswerRow, storedAnswer } from "../../idempotency/index.js";
import { CanonicalText, sealedRow } from "../../seal/index.js";
import { Refusal } from "../../common/index.js";

/** What a presented `approval_id` turned out to be; only `usable` reaches the engine. */
export type ApprovalStatus = "usable" | "used" | "unknown";

export function chainLinks(chain: readonly GrantRecord[], usage: ReadonlyMap<string, GrantUsage>): ChainLink[] {
  return chain.map((grant) => {
    const used = usage.get(grant.id) ?? { uses: 0, held_minor: 0, settled_minor: 0 };
    return {
      grant_id: grant.id,
      agent_id: grant.agent_id,
      status: grant.status,
      terms: grantTerms(grant),
      // The store sums live holds at `now` (INVARIANT live-holds); one aggregate hold says the same.
      usage: {
        uses: used.uses,
        settled_minor: used.settled_minor,
        holds: used.held_minor > 0 ? [{ amount_minor: used.held_minor, expires_at: Number.MAX_SAFE_INTEGER }] : [],
      },
    };
  });
}

export function engineRequest(body: AuthorizeBody, agentId: string, approval: ApprovalRecord | null): DecisionRequest {
  return {
    grant_id: body.grant_id,
    agent_id: agentId,
    tool: body.tool,
    amount_minor: body.amount_minor ?? null,
    currency: body.currency ?? null,
    audience: body.audience ?? null,
    args: body.args ?? null,
    context: body.context ?? null,
    attestation: body.attestation ?? null,
    approval,
  };
}

/** The engine's state for a decision: the environment, the certificate and the hold lifetime. */
export function engineState(ctx: ServiceContext, certificate: CertificateRecord | undefined): DecisionState {
  return {
    ...decisionState(ctx.environment, certificate),
    ...(ctx.holdLifetimeMs === undefined ? {} : { hold_lifetime_ms: ctx.holdLifetimeMs }),
  };
}

/** What the ledger keeps of a decision besides the fields every record has. */
export function sealedBody(
  caller: Caller,
  body: AuthorizeBody,
  argsText: string | undefined,
  decision: Decision,
  gates: string,
  approvalStatus: ApprovalStatus | null,
  certificate: CertificateRecord | undefined,
  chain: readonly GrantRecord[],
) {
  return {
    // The args' canonical text is the one the decision's statement hashes (decision 1948).
    request: requestText(body, argsText),
    key_id: caller.keyId,
    would_outcome: decision.would_outcome ?? null,
    mode: decision.mode,
    decided_by: decision.decided_by,
    reason_code: decision.reason_code,
    reason: decision.reason,
    gates: new CanonicalText(gates),
    residual: decision.residual ?? null,
    approver: decision.approver,
    approval_id: body.approval_id ?? null,
    approval_status: approvalStatus,
    // The certificate the decision found, in either mode: an impact preview replays with it.
    certificate_id: certificate?.id ?? null,
    counted: decision.counted,
    chain: chain.map((g) => g.id),
    holds: decision.holds,
  };
}

/** One request of a batch: its caller's, with its idempotency claim if any. */
export interface BatchInput {
  readonly ctx: ServiceContext;
  /** An agent key's caller; one that is no agent's holds no grant (`agentId` null). */
  readonly caller: Caller;
  readonly body: AuthorizeBody;
  readonly claim: IdempotencyClaim | undefined;
  /** A stored answer at or before this time has expired. */
  readonly expiredUpTo: number;
}

/** A gated decision, whose `decision.gated` event the write step appends. */
export interface GatedDecision {
  readonly ledgerId: string;
  readonly agentId: string;
  readonly body: AuthorizeBody;
  readonly decision: Decision;
  readonly now: number;
}

/**
 * A decision of an agent with breakers: its signal is not among the batch's writes, because the
 * breakers' evaluation writes it and reads the windows it ends, one decision after another in
 * batch order, once the batch's records are written (decision 0321).
 */
export interface WatchedDecision {
  /** Its input's place in the batch. */
  readonly index: number;
  readonly seen: SealedDecision;
}

/** What the decide step answers for a batch. */
export interface BatchDecisions {
  /** Each input's answer, in input order. */
  readonly answers: readonly (PreparedAnswer | Refusal)[];
  readonly writes: BatchWrites;
  readonly gated: readonly GatedDecision[];
  /** The inputs decided here that stored an answer under their idempotency key. */
  readonly claimed: readonly BatchInput[];
  /** The decisions of agents with breakers, in batch order, for their evaluation after the writes. */
  readonly watched: readonly WatchedDecision[];
  /** The place of the batch's last sealed decision (-1: none). */
  readonly lastSealed: number;
}

/** A request whose idempotency key a decision of the same batch claimed: its answer is that decision's, or a refusal. */
interface BatchReplay {
  readonly at: number;
  readonly claim: IdempotencyClaim;
  readonly keyId: string;
}

/** The answer of a request whose key an earlier request of the batch claimed: that request's signed answer, or the reused-key refusal. */
function replayedInBatch({ claim, keyId }: BatchReplay, rows: readonly IdempotencyRow[]): PreparedAnswer | Refusal | undefined {
  const key = answerKey(claim.callerKeyId, claim.key);
  const found = storedAnswer(
    rows.find((row) => answerKey(row.caller_key_id, row.idempotency_key) === key),
    claim,
  );
  return found === undefined || found instanceof Refusal ? found : { ...found, keyId };
}

/** A decision of the batch whose answer waits for the batch's signature. */
interface UnsignedAnswer {
  /** Its place among the batch's answers. */
  readonly at: number;
  readonly statement: ReturnType<typeof decisionStatement>;
  /** The answer's text with its signature member's text. */
  readonly text: (signature: string) => string;
  readonly input: BatchInput;
  readonly decision: Decision;
}

/**
 * Signs the batch's statements with one signature and puts each signed answer in its place in
 * `answers`; answers the rows that store them under their idempotency keys.
 */
function signedAnswers(
  unsigned: readonly UnsignedAnswer[],
  answers: (PreparedAnswer | Refusal | undefined)[],
  now: number,
): IdempotencyRow[] {
  if (unsigned.length === 0) return [];
  const signatures = unsigned[0]!.input.ctx.signer.signAnswerTexts(unsigned.map((answer) => answer.statement));
  const rows: IdempotencyRow[] = [];
  for (const [i, { at, text: render, input, decision }] of unsigned.entries()) {
    const text = render(signatures[i]!);
    const { claim, caller } = input;
    if (claim !== undefined) rows.push(decisionAnswerRow(claim, text, now));
    answers[at] = {
      status: 200,
      contentType: JSON_TYPE,
      text,
      replayed: false,
      keyId: caller.keyId,
      outcome: decision.outcome,
      gate: decision.decided_by,
    };
  }
  return rows;
}

/** A stored answer's key: the caller's key id and the idempotency key. */
function answerKey(callerKeyId: string, key: string): string {
  return `${callerKeyId}\n${key}`;
}

/** The chain of a grant the agent holds, root first, from the grants read; undefined when not held or incomplete. */
function heldChain(grants: ReadonlyMap<string, GrantRecord>, grantId: string, agentId: string): GrantRecord[] | undefined {
  const leaf = grants.get(grantId);
  if (leaf === undefined || leaf.agent_id !== agentId) return undefined;
  const chain = [leaf];
  for (let grant = leaf; grant.parent_id !== null; ) {
    const parent = grants.get(grant.parent_id);
    // The chain is bounded by the grants read; a loop or a gap (a damaged database) is a grant not
    // held: decided on no chain, it is refused, and sealed in the agent's own chain.
    if (parent === undefined || chain.length > grants.size) return undefined;
    chain.push(parent);
    grant = parent;
  }
  return chain.reverse();
}

/** The chain a request is decided on: the grant's, root first, when its caller holds it; otherwise none. */
function chainOf(input: BatchInput, grants: ReadonlyMap<string, GrantRecord>): GrantRecord[] | undefined {
  const agentId = input.caller.agentId;
  return agentId === null ? undefined : heldChain(grants, input.body.grant_id, agentId);
}

/**
 * The chain a decision on a grant not held is sealed in: the asking agent's own (for a caller that
 * is no agent, its identity's); undefined for a grant held. The read step locks these chains; the
 * answer and the lock say nothing about someone else's tree.
 */
export function ownChainOf(input: BatchInput, grants: ReadonlyMap<string, GrantRecord>): string | undefined {
  return chainOf(input, grants) === undefined ? (input.caller.agentId ?? input.caller.identity) : undefined;
}

/** A presented approval as the engine reads it, with what it turned out to be. */
interface PresentedApproval {
  readonly record: ApprovalRecord | null;
  readonly status: ApprovalStatus | null;
}

/** A stored approval as the engine reads it. */
export function approvalRecord(row: DecisionApprovalRow): ApprovalRecord {
  return {
    approval_id: row.id,
    approver: row.approver,
    grant_id: row.grant_id,
    tool: row.tool,
    amount_ceiling_minor: row.amount_ceiling_minor,
    expires_at: row.expires_at,
  };
}

/** What a batch has decided so far: what each later decision reads, and what the batch writes. */
class BatchState {
  readonly usage: Map<string, GrantUsage>;
  readonly heads: Map<string, { seq: number; hash: string }>;
  readonly stored: Map<string, IdempotencyRow>;
  readonly answers: (PreparedAnswer | Refusal | undefined)[] = [];
  readonly ledger: LedgerRow[] = [];
  readonly approvalUses: ApprovalUse[] = [];
  lastSealed = -1;
  readonly signals: SignalRow[] = [];
  readonly uses = new Map<string, number>();
  readonly charges: ChargeRow[] = [];
  readonly gated: GatedDecision[] = [];
  readonly claimed: BatchInput[] = [];
  readonly watched: WatchedDecision[] = [];
  // The batch's statements are signed together once it is decided (decision 1901).
  readonly unsigned: UnsignedAnswer[] = [];
  readonly replays: BatchReplay[] = [];
  readonly claimedHere = new Set<string>();

  constructor(
    private readonly reads: BatchReads,
    private readonly now: number,
  ) {
    this.usage = new Map(reads.usage);
    this.heads = new Map(reads.heads);
    this.stored = new Map(reads.answers.map((row) => [answerKey(row.caller_key_id, row.idempotency_key), row]));
  }

  /**
   * The answer a claimed key already has: one claimed earlier in this batch (answered once the
   * batch is signed), or one stored; true when the input is answered so.
   */
  answeredBefore(input: BatchInput): boolean {
    const { caller, claim } = input;
    if (claim === undefined) return false;
    const key = answerKey(claim.callerKeyId, claim.key);
    if (this.claimedHere.has(key)) {
      this.replays.push({ at: this.answers.length, claim, keyId: caller.keyId });
      this.answers.push(undefined);
      return true;
    }
    const found = storedAnswer(this.stored.get(key), claim);
    if (found === undefined) return false;
    this.answers.push(found instanceof Refusal ? found : { ...found, keyId: caller.keyId });
    return true;
  }

  /**
   * A presented approval: unknown, used (before or earlier in this batch: it is single use, so it
   * is withheld and the policy asks for a new one), or usable. Read only for a grant held.
   */
  approval(approvalId: string | undefined, held: boolean): PresentedApproval {
    if (approvalId === undefined) return { record: null, status: null };
    const row = held ? this.reads.approvals.get(approvalId) : undefined;
    if (row === undefined) return { record: null, status: "unknown" };
    if (row.used_at !== null || this.approvalUses.some((use) => use.id === approvalId)) return { record: null, status: "used" };
    return { record: approvalRecord(row), status: "usable" };
  }

  /** Seals a decision: its record after its tree's head, its signal or breakers, its gated event and its unsigned answer. */
  seal(index: number, input: BatchInput, decided: DecidedRequest): string {
    const { caller, body } = input;
    const { agentId, treeId, chain, decision, certificate } = decided;
    const now = this.now;
    const ledgerId = newId("led", now);
    this.lastSealed = index;
    const gates = gateTexts(decision.gates);
    const argsText = argsCanonicalText(body);
    this.unsigned.push({
      at: this.answers.length,
      statement: decisionStatement(ledgerId, decision.outcome, agentId, body, now, argsText),
      text: (signature) => decisionAnswerText(ledgerId, decision, now, gates.answer, signature),
      input,
      decision,
    });
    const sealed = sealedBody(caller, body, argsText, decision, gates.sealed, decided.approvalStatus, certificate, chain);
    const row = sealedRow(
      {
        id: ledgerId,
        tree_id: treeId,
        kind: "decision",
        grant_id: body.grant_id,
        agent_id: agentId,
        outcome: decision.outcome,
        created_at: now,
        body: sealed,
      },
      this.heads.get(treeId) ?? null,
    );
    this.heads.set(treeId, { seq: row.seq, hash: row.hash });
    this.ledger.push(row);
    if (this.reads.watchedAgents.has(agentId)) this.watched.push({ index, seen: sealedDecision(ledgerId, agentId, now, decision) });
    else {
      const signal = signalOf(decision.outcome, decision.would_outcome ?? null, decision.reason_code);
      this.signals.push({ ledger_id: ledgerId, agent_id: agentId, at: now, signal });
    }
    if (decision.outcome === "gated") this.gated.push({ ledgerId, agentId, body, decision, now });
    return ledgerId;
  }

  /** INVARIANT (budget-monotone): one use of every grant of the chain, and the decision's holds, seen by every later decision. */
  count(ledgerId: string, chain: readonly GrantRecord[], decision: Decision): void {
    if (!decision.counted) return;
    for (const grant of chain) {
      this.uses.set(grant.id, (this.uses.get(grant.id) ?? 0) + 1);
      const used = this.usage.get(grant.id) ?? { uses: 0, held_minor: 0, settled_minor: 0 };
      this.usage.set(grant.id, { ...used, uses: used.uses + 1 });
    }
    for (const hold of decision.holds) {
      this.charges.push(holdCharge(ledgerId, hold, this.now));
      // INVARIANT (live-holds): an open hold counts while it has not expired at the batch's time.
      const used = this.usage.get(hold.grant_id) ?? { uses: 0, held_minor: 0, settled_minor: 0 };
      if (hold.amount_minor > 0 && hold.expires_at > this.now)
        this.usage.set(hold.grant_id, { ...used, held_minor: used.held_minor + hold.amount_minor });
    }
    // Single use: under the tree's lock nobody else can have used it since it was read.
    if (decision.approval_id !== undefined)
      this.approvalUses.push({ id: decision.approval_id, used_at: this.now, used_by_ledger_id: ledgerId });
  }
}

/** One request decided: by whom, on which chain, sealed in which tree, with what it found. */
interface DecidedRequest {
  readonly agentId: string;
  readonly treeId: string;
  readonly chain: readonly GrantRecord[];
  readonly decision: Decision;
  readonly certificate: CertificateRecord | undefined;
  readonly approvalStatus: ApprovalStatus | null;
}

/**
 * The engine's decision of one request on what the batch has seen so far. A grant not held (or
 * asked for by a caller that is no agent) is decided on an empty chain, without the agent's
 * certificate or any approval, and sealed in the agent's own chain.
 */
function decideOne(input: BatchInput, state: BatchState, reads: BatchReads, now: number): DecidedRequest {
  const { ctx, caller, body } = input;
  const agentId = caller.agentId ?? caller.identity;
  const chain = chainOf(input, reads.grants);
  const held = chain !== undefined;
  const approval = state.approval(body.approval_id, held);
  const certificate = held ? reads.certificates.get(agentId) : undefined;
  const decision = decide(
    engineRequest(body, agentId, approval.record),
    chainLinks(chain ?? [], state.usage),
    engineState(ctx, certificate),
    now,
  );
  return {
    agentId,
    treeId: held ? chain[0]!.root_id : agentId,
    chain: chain ?? [],
    decision,
    certificate,
    approvalStatus: approval.status,
  };
}

/**
 * Decides a batch in order at `now`: each decision sees the uses, holds, chain heads and stored
 * answers of those before it, exactly as if it had read them from the database after their writes
 * (INVARIANT budget-monotone: a use or hold counts for every later decision of the batch).
 */
export function decideBatch(inputs: readonly BatchInput[], reads: BatchReads, now: number, answersExpiredUpTo: number): BatchDecisions {
  const state = new BatchState(reads, now);
  const { answers } = state;
  for (const [index, input] of inputs.entries()) {
    if (state.answeredBefore(input)) continue;
    const decided = decideOne(input, state, reads, now);
    state.count(state.seal(index, input, decided), decided.chain, decided.decision);
    const { claim } = input;
    if (claim !== undefined) {
      state.claimedHere.add(answerKey(claim.callerKeyId, claim.key));
      state.claimed.push(input);
    }
    answers.push(undefined);
  }
  const answerRows = signedAnswers(state.unsigned, answers, now);
  for (const replay of state.replays) answers[replay.at] = replayedInBatch(replay, answerRows);
  const { ledger, signals, uses, charges, approvalUses, gated, claimed, watched, lastSealed } = state;
  return {
    // Every place is answered now: a decision signed, a stored answer, a replay or a refusal.
    answers: answers as (PreparedAnswer | Refusal)[],
    writes: { ledger, signals, uses, charges, approvalUses, answers: answerRows, answersExpiredUpTo },
    gated,
    claimed,
    watched,
    lastSealed,
  };
}

/** What the breakers are told of a sealed decision, as both decision paths tell it. */
export function sealedDecision(ledgerId: string, agentId: string, at: number, decision: Decision): SealedDecision {
  return {
    ledger_id: ledgerId,
    agent_id: agentId,
    at,
    outcome: decision.outcome,
    would_outcome: decision.would_outcome ?? null,
    reason_code: decision.reason_code,
  };
}

/** The open charge of one hold of a counted decision, as both decision paths write it. */
export function holdCharge(ledgerId: string, hold: Decision["holds"][number], now: number): ChargeRow {
  return {
    id: newId("chg", now),
    ledger_id: ledgerId,
    grant_id: hold.grant_id,
    amount_minor: hold.amount_minor,
    expires_at: hold.expires_at,
    settled_minor: null,
    settled_at: null,
    released_at: null,
    settlement_ledger_id: null,
  };
}
