// The store interface: every record the server keeps, behind one async API that SQLite and
// PostgreSQL both implement. Times are epoch milliseconds. Nothing is ever deleted.

import type { Role } from "@agent-authority/api";
import type { BreakerStore } from "../breakers/index.js";
import type { ChargeRow, DecisionApprovalRow, DecisionStore, IdempotencyRow, LedgerRow } from "../decisions/index.js";
import type { FamilyStore } from "../families/index.js";
import type { EventStore } from "../events/index.js";
import type { SigningKeyStore } from "../ledger/index.js";
import type { LedgerLogStore } from "../ledger/index.js";
import type { Dialect } from "../sql/index.js";

export type EnforcementMode = "observe" | "enforce";
export type StoredGrantStatus = "pending_approval" | "active" | "revoked";

export interface KeyRecord {
  readonly id: string;
  readonly hash: string;
  readonly identity: string;
  readonly kind: "human" | "service";
  readonly roles: readonly Role[];
  readonly agent_id: string | null;
  /** For an `enforcer` key: the agents it may ask for (decision 1701); null for any other key. */
  readonly agent_ids: readonly string[] | null;
  readonly email: string | null;
  readonly created_at: number;
  readonly created_by: string | null;
  readonly revoked_at: number | null;
  readonly revoked_by: string | null;
  readonly revocation_reason: string | null;
}

export interface AgentRecord {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly created_at: number;
  readonly created_by: string;
}

export interface CertificateRecord {
  readonly id: string;
  readonly agent_id: string;
  readonly environment: string;
  readonly issued_by: string;
  readonly issued_by_email: string | null;
  readonly issued_at: number;
  readonly basis: string;
  readonly provenance_version: string;
  readonly manifest_hash: string;
  readonly content_hash: string;
  readonly market_profile: string | null;
  readonly checks: readonly string[];
  readonly revoked_at: number | null;
  readonly revoked_by: string | null;
  readonly revocation_reason: string | null;
  readonly superseded_by: string | null;
}

export interface GrantRecord {
  readonly id: string;
  readonly root_id: string;
  readonly parent_id: string | null;
  readonly depth: number;
  readonly agent_id: string;
  readonly principal_type: "human" | "team" | "service";
  readonly principal_id: string;
  readonly scope: { readonly tool: readonly string[] };
  readonly budget_amount_minor: number;
  readonly budget_currency: string | null;
  readonly budget_count: number | null;
  readonly ttl_hours: number;
  readonly conditions: { readonly clean_context: boolean };
  readonly policy: string | null;
  readonly delegation_policy: "none" | "attenuating";
  readonly delegation_depth_max: number | null;
  readonly audience: string | null;
  readonly enforcement_mode: EnforcementMode;
  /** As stored; `expired` is computed from `expires_at` when a grant is read. */
  readonly status: StoredGrantStatus;
  readonly approval_required: boolean;
  readonly issued_at: number;
  readonly expires_at: number;
  readonly issued_by: string;
  readonly approved_by: string | null;
  readonly approved_at: number | null;
  readonly family_id: string | null;
  readonly family_version: string | null;
  readonly revoked_at: number | null;
  readonly revoked_by: string | null;
  readonly revocation_reason: string | null;
}

/** One append-only line of a grant's history: issued, approved, escalated, revoked. */
export interface GrantEventRecord {
  readonly id: string;
  readonly grant_id: string;
  /** `approval_wait_abandoned`: the agent stopped waiting for a gated decision's approval (detail: ledger_id, reason, waited_ms). */
  readonly kind: "issued" | "delegated" | "approved" | "enforcement_escalated" | "revoked" | "approval_wait_abandoned";
  readonly actor: string;
  readonly at: number;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** A grant's usage: allowed decisions counted on it, live holds and settled amounts. */
export interface GrantUsage {
  readonly uses: number;
  readonly held_minor: number;
  readonly settled_minor: number;
}

/** The filters of `GET /v1/grants`; an absent one matches every grant. */
export interface GrantFilter {
  readonly agent_id?: string | undefined;
  readonly status?: "pending_approval" | "active" | "revoked" | "expired" | undefined;
  readonly family_id?: string | undefined;
  readonly principal_id?: string | undefined;
}

/** A grant as presented by an agent: the decision reads it only when the agent holds it. */
export interface PresentedGrant {
  readonly grant_id: string;
  readonly agent_id: string;
}

/** An idempotency key to look up, and the time at or before which a stored answer has expired. */
export interface ClaimedKey {
  readonly caller_key_id: string;
  readonly idempotency_key: string;
  readonly expired_up_to: number;
}

/** What a batch of decisions asks to read. */
export interface BatchReadRequest {
  readonly claims: readonly ClaimedKey[];
  readonly presented: readonly PresentedGrant[];
  /** The approvals presented, read after the trees' locks. */
  readonly approvals: readonly string[];
}

/** What a batch of decisions reads, once for all of them. */
export interface BatchReads {
  /** The stored live answers of the keys looked up. */
  readonly answers: readonly IdempotencyRow[];
  /** The approvals presented that exist, by id, read under the trees' locks. */
  readonly approvals: ReadonlyMap<string, DecisionApprovalRow>;
  /** The agents that have breakers (their breaker rows are now locked). */
  readonly watchedAgents: ReadonlySet<string>;
  /** Every grant of the chains of the grants held as presented, by id. */
  readonly grants: ReadonlyMap<string, GrantRecord>;
  /** Their usage at the batch's time. */
  readonly usage: ReadonlyMap<string, GrantUsage>;
  /** The chain head of each tree locked (a tree without a record has none here). */
  readonly heads: ReadonlyMap<string, { readonly seq: number; readonly hash: string }>;
  /** Each agent's certificate in the environment that is not revoked. */
  readonly certificates: ReadonlyMap<string, CertificateRecord>;
}

/** One decision's signal for the breakers (decision_signals). */
export interface SignalRow {
  readonly ledger_id: string;
  readonly agent_id: string;
  readonly at: number;
  readonly signal: number;
}

/** The single use of an approval by a counted decision. */
export interface ApprovalUse {
  readonly id: string;
  readonly used_at: number;
  readonly used_by_ledger_id: string;
}

/** What a batch of decisions writes, once per table. */
export interface BatchWrites {
  /** In sealing order: within a tree, ascending seq. */
  readonly ledger: readonly LedgerRow[];
  readonly signals: readonly SignalRow[];
  /** Uses to add to each grant's totals. */
  readonly uses: ReadonlyMap<string, number>;
  readonly charges: readonly ChargeRow[];
  readonly answers: readonly IdempotencyRow[];
  /** The approvals used, each once: its single use by the decision that names it. */
  readonly approvalUses: readonly ApprovalUse[];
  /** A stored answer at or before this time has expired and may be replaced. */
  readonly answersExpiredUpTo: number;
}

/** A batch of decisions in a fixed number of statements (`Store.decisionBatch`, decision 0318; on SQLite, decision 0319). */
export interface DecisionBatchStore {
  /** The batch's reads, its locks first, in one flight. */
  read(request: BatchReadRequest, environment: string, now: number): Promise<BatchReads>;
  /**
   * Locks the chains of these trees that belong to no grant (an agent's own chain, where a
   * decision on a grant it does not hold is sealed), in id order after the trees' locks, and
   * answers the head of each that has a record.
   */
  ownChains(treeIds: readonly string[]): Promise<Map<string, { readonly seq: number; readonly hash: string }>>;
  /** The batch's writes, one statement per table; throws when an answer's key or an approval was taken meanwhile. */
  write(writes: BatchWrites): Promise<void>;
}

/**
 * A step that does several batched transactions of one kind at once in one transaction (decision
 * 0318): for each input, in batch order, its value, or undefined to leave it to its own function.
 */
export type StoreBatchStep = (tx: Store, inputs: readonly unknown[]) => Promise<readonly ({ value: unknown } | undefined)[]>;

/** What `batchedTransaction` may hand the group commit besides the transaction's own function. */
export interface StoreBatchable {
  readonly step: StoreBatchStep;
  readonly input: unknown;
}

/** What a decision reads under its tree's lock, in one flight of statements (`Store.heldTree`). */
export interface HeldTree {
  /** The grant and its ancestors, root first; empty when the agent does not hold the grant. */
  readonly chain: readonly GrantRecord[];
  /** Uses, settled amounts and live holds of each grant of the chain. */
  readonly usage: Map<string, GrantUsage>;
  /** The agent's certificate in the environment that is not revoked. */
  readonly certificate: CertificateRecord | undefined;
  /** The last record of the tree's chain; undefined for a tree with none or a grant not held. */
  readonly head: { readonly seq: number; readonly hash: string } | undefined;
}

export interface Page {
  /** Answer only ids after this one (ids sort by creation time). */
  readonly after?: string | undefined;
  readonly limit: number;
}

export interface Revocation {
  readonly at: number;
  readonly by: string;
  readonly reason: string | null;
}

export interface Store {
  readonly dialect: Dialect;
  /** Applies pending migrations; answers the versions applied. */
  migrate(now: number): Promise<number[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Runs `fn` atomically; inside it use only the store it is given. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
  /**
   * A transaction that may share its commit with others of the same event-loop turn; resolves
   * after it. `fn` may run more than once, so it must do nothing outside the transaction.
   * `order`, when given, is where it runs within its batch on PostgreSQL (ascending): batches that
   * take their locks in one order cannot deadlock (decision 0311).
   */
  batchedTransaction<T>(fn: (tx: Store) => Promise<T>, order?: string, batch?: StoreBatchable): Promise<T>;
  /**
   * Row counts of every table a request writes: what tests compare to prove that nothing changed.
   * The Merkle log's tables are left out: the ledger logger fills them on its own timer, from
   * the `ledger` rows counted here (decision 0621).
   */
  countRows(): Promise<Record<string, number>>;

  insertKey(key: KeyRecord): Promise<void>;
  getKey(id: string): Promise<KeyRecord | undefined>;
  findKeyByHash(hash: string): Promise<KeyRecord | undefined>;
  /** The keys of these hashes, by hash (one statement on PostgreSQL; the decision cache's on SQLite). */
  findKeysByHash(hashes: readonly string[]): Promise<Map<string, KeyRecord>>;
  listKeys(page: Page): Promise<KeyRecord[]>;
  /** Counts active keys with the role, locking them until the transaction ends (PostgreSQL). */
  countActiveKeysWithRole(role: Role): Promise<number>;
  countKeys(): Promise<number>;
  /** Sets the revocation fields when the key is active; answers whether it did. */
  revokeKey(id: string, revocation: Revocation): Promise<boolean>;

  /** Inserts the agent unless one with its name exists; answers the stored one. */
  createAgentIfAbsent(agent: AgentRecord): Promise<{ agent: AgentRecord; created: boolean }>;
  getAgent(id: string): Promise<AgentRecord | undefined>;
  /** Takes the agent's row lock until the transaction ends (PostgreSQL; SQLite is serial anyway). */
  lockAgent(id: string): Promise<void>;
  /**
   * Serialises the first start's admin key until the transaction ends, so replicas starting together
   * on one empty database create one key, not one each (advisory lock on PostgreSQL).
   */
  lockKeyBootstrap(): Promise<void>;
  listAgents(page: Page): Promise<AgentRecord[]>;

  insertCertificate(certificate: CertificateRecord): Promise<void>;
  getCertificate(id: string): Promise<CertificateRecord | undefined>;
  listCertificates(filter: { agent_id?: string | undefined; environment?: string | undefined }, page: Page): Promise<CertificateRecord[]>;
  /** The one certificate of this agent and environment that is not revoked. */
  validCertificate(agentId: string, environment: string): Promise<CertificateRecord | undefined>;
  revokeCertificate(id: string, revocation: Revocation, supersededBy?: string): Promise<boolean>;

  insertGrant(grant: GrantRecord): Promise<void>;
  getGrant(id: string): Promise<GrantRecord | undefined>;
  /** Takes the write lock of a delegation tree until the transaction ends (PostgreSQL row lock). */
  lockGrant(id: string): Promise<void>;
  /** The grant and its ancestors, root first. */
  grantChain(id: string): Promise<readonly GrantRecord[]>;
  /**
   * PostgreSQL's decision path: when `agentId` holds the grant, takes its tree's lock (INVARIANT
   * tree-serial), then reads the chain with its usage at `now`, the agent's valid certificate in
   * `environment` and the tree's chain head, each statement after the lock. The statements are
   * sent together (one round trip on a pipelining connection); a grant not held takes no lock.
   */
  heldTree(grantId: string, agentId: string, environment: string, now: number): Promise<HeldTree>;
  /** The ids of the grant and every descendant. */
  subtreeIds(id: string): Promise<string[]>;
  listGrantsByStatus(status: StoredGrantStatus, page: Page): Promise<GrantRecord[]>;
  /** Grants by id after `page.after`, at most `page.limit`, that match every filter given; `status` as read at `now`. */
  listGrants(filter: GrantFilter, now: number, page: Page): Promise<GrantRecord[]>;
  /** Sets approval fields and status `active` when the grant is pending; answers whether it did. */
  approveGrant(id: string, by: string, at: number): Promise<boolean>;
  /** Moves the mode from `from` to `to`; answers whether it did (false when the mode changed meanwhile). */
  setEnforcementMode(id: string, from: EnforcementMode, to: EnforcementMode): Promise<boolean>;
  /** Revokes every listed grant not yet revoked; answers the ids it revoked. */
  revokeGrants(ids: readonly string[], revocation: Revocation): Promise<string[]>;
  appendGrantEvent(event: GrantEventRecord): Promise<void>;
  listGrantEvents(grantId: string): Promise<GrantEventRecord[]>;
  usage(grantIds: readonly string[], now: number): Promise<Map<string, GrantUsage>>;

  /** The decision path's records (ledger, charges, approvals, idempotency keys) on this connection. */
  decisionPath(): DecisionStore;
  /** A batch of decisions' reads and writes, one statement per kind of row (decision 0318; SQLite's through its decision cache, 0319). */
  decisionBatch(): DecisionBatchStore;

  /** Contracts, breakers, trips, findings and decision signals on this connection. */
  breakerPath(): BreakerStore;

  /** Grant-family versions, their instances and the sealed decisions of their grants on this connection. */
  familyPath(): FamilyStore;

  /** The outbox of events, webhooks and their deliveries on this connection. */
  eventPath(): EventStore;
  /** The signing keys (public keys, sealed private keys, active or retired) on this connection. */
  signingKeys(): SigningKeyStore;
  /** The ledger's Merkle log (leaves in global order, subtree hashes) on this connection. */
  ledgerLog(): LedgerLogStore;
}
