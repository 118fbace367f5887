// The decision path's law (decisions 0318, 1841): a batch decided at once answers exactly what its
// decisions answer one after another through the same step, each reading what the ones before it
// wrote, and both answer what the pure engine decides. The model of "one after another" decides
// each request as a batch of one and applies its writes to the reads the way the database would
// (uses and live holds added, the chain heads moved on, the answer stored, the approval used), so
// a step that forgot a hold, a use, a head, a stored answer or an approval's use answers
// differently. Requests present grants held and not held, and approvals.

import type { AuthorizeBody } from "@agent-authority/api";
import fc from "fast-check";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signedStatement, SigningKeyring, type SigningKeySet } from "@agent-authority/sdk";
import { openStore, type CertificateRecord, type GrantRecord, type Store } from "@agent-authority/server";
import type { PreparedAnswer } from "../../server/src/services/common/index.js";
import type { Caller, ServiceContext } from "../../server/src/services/common/index.js";
import { decide } from "@agent-authority/engine";
import {
  approvalRecord,
  chainLinks,
  decideBatch,
  engineRequest,
  engineState,
  type BatchDecisions,
  type BatchInput,
} from "../../server/src/services/decisions/index.js";
import { Refusal } from "../../server/src/services/common/index.js";
import { Signer } from "../../server/src/services/seal/index.js";
import type { BatchReads, GrantUsage } from "../../server/src/store/core/index.js";
import type { DecisionApprovalRow } from "../../server/src/store/decisions/index.js";
import { grantRecord, T0 } from "./store-records.js";

const AGENT = "agt_0000000001abcdefghjkmnpqrs";
const OTHER = "agt_0000000002abcdefghjkmnpqrs";
const ROOT = "grt_0000000001abcdefghjkmnpqrs";
const CHILD = "grt_0000000002abcdefghjkmnpqrs";
const GRANDCHILD = "grt_0000000003abcdefghjkmnpqrs";
const FOREIGN = "grt_0000000004abcdefghjkmnpqrs";
const NOW = T0 + 60_000;
const APPROVAL = "apr_0000000001abcdefghjkmnpqrs";
const ATTESTATION = { manifest_hash: "sha256:aaaa", content_hash: "sha256:bbbb", provenance_version: "model-1" };

const caller: Caller = {
  keyId: "key_0000000001abcdefghjkmnpqrs",
  identity: "agent-a",
  kind: "service",
  email: null,
  roles: ["agent"],
  agentId: AGENT,
};

const certificate: CertificateRecord = {
  id: "crt_0000000001abcdefghjkmnpqrs",
  agent_id: AGENT,
  environment: "test-env",
  issued_by: "admin",
  issued_by_email: null,
  issued_at: T0,
  basis: "property",
  provenance_version: "model-1",
  manifest_hash: "sha256:aaaa",
  content_hash: "sha256:bbbb",
  market_profile: null,
  checks: [],
  revoked_at: null,
  revoked_by: null,
  revocation_reason: null,
  superseded_by: null,
};

/** A tree of three grants of the agent, each within its parent's budget, and another agent's grant. */
function tree(budgets: readonly [number, number, number], count: number | null, childRevoked: boolean): GrantRecord[] {
  return [
    grantRecord(AGENT, { id: ROOT, budget_amount_minor: budgets[0], budget_count: count }),
    grantRecord(AGENT, {
      id: CHILD,
      root_id: ROOT,
      parent_id: ROOT,
      depth: 1,
      budget_amount_minor: budgets[1],
      ...(childRevoked ? { status: "revoked" as const, revoked_at: T0, revoked_by: "admin", revocation_reason: "property" } : {}),
    }),
    grantRecord(AGENT, { id: GRANDCHILD, root_id: ROOT, parent_id: CHILD, depth: 2, budget_amount_minor: budgets[2] }),
    grantRecord(OTHER, { id: FOREIGN }),
  ];
}

interface Request {
  readonly grant: string;
  readonly tool: string;
  readonly amount: number | undefined;
  readonly key: string | undefined;
  readonly approval: boolean;
}

const request: fc.Arbitrary<Request> = fc.record({
  grant: fc.constantFrom(ROOT, CHILD, GRANDCHILD, GRANDCHILD, FOREIGN),
  tool: fc.constantFrom("payments.send", "payments.send", "payments.refund", "mail.send"),
  amount: fc.option(fc.integer({ min: 0, max: 1_500 }), { nil: undefined }),
  // A small pool of keys: repeats replay, or are refused when the request differs.
  key: fc.option(fc.constantFrom("k1", "k2", "k3"), { nil: undefined, freq: 2 }),
  approval: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
});

function body(r: Request): AuthorizeBody {
  return {
    grant_id: r.grant,
    tool: r.tool,
    ...(r.amount === undefined ? {} : { amount_minor: r.amount, currency: "EUR" }),
    ...(r.approval ? { approval_id: APPROVAL } : {}),
    attestation: ATTESTATION,
  };
}

function input(ctx: ServiceContext, r: Request): BatchInput {
  return {
    ctx,
    caller,
    body: body(r),
    expiredUpTo: 0,
    claim:
      r.key === undefined
        ? undefined
        : { key: r.key, method: "POST", path: "/v1/authorize", requestHash: JSON.stringify(body(r)), callerKeyId: caller.keyId },
  };
}

/** What the database holds after a batch's writes, as the next batch's reads would find it. */
function applied(reads: BatchReads, decided: BatchDecisions): BatchReads {
  const usage = new Map<string, GrantUsage>(reads.usage);
  const bump = (id: string, change: Partial<GrantUsage>) => {
    const used = usage.get(id) ?? { uses: 0, held_minor: 0, settled_minor: 0 };
    usage.set(id, { ...used, uses: used.uses + (change.uses ?? 0), held_minor: used.held_minor + (change.held_minor ?? 0) });
  };
  for (const [id, n] of decided.writes.uses) bump(id, { uses: n });
  for (const charge of decided.writes.charges) if (charge.expires_at > NOW) bump(charge.grant_id, { held_minor: charge.amount_minor });
  const heads = new Map(reads.heads);
  for (const row of decided.writes.ledger) heads.set(row.tree_id, { seq: row.seq, hash: row.hash });
  const answers = [
    ...reads.answers.filter((a) => !decided.writes.answers.some((b) => b.idempotency_key === a.idempotency_key)),
    ...decided.writes.answers,
  ];
  const approvals = new Map(reads.approvals);
  for (const use of decided.writes.approvalUses) {
    const row = approvals.get(use.id)!;
    approvals.set(use.id, { ...row, used_at: use.used_at, used_by_ledger_id: use.used_by_ledger_id });
  }
  return { ...reads, usage, heads, answers, approvals };
}

/** An approval of the grandchild's `payments.send` up to `ceiling`, unused, as a human gave it. */
function approvalRow(ceiling: number): DecisionApprovalRow {
  return {
    id: APPROVAL,
    ledger_id: "led_0000000001abcdefghjkmnpqrs",
    grant_id: GRANDCHILD,
    tool: "payments.send",
    amount_ceiling_minor: ceiling,
    currency: "EUR",
    approver: "alice@example.com",
    approved_at: T0,
    expires_at: NOW + 600_000,
    used_at: null,
    used_by_ledger_id: null,
  };
}

/**
 * What the pure engine decides for one request on what the database holds: the chain of a grant
 * the agent holds (none otherwise), its usage, the certificate, and the approval when unused.
 */
function engineOutcome(ctx: ServiceContext, reads: BatchReads, r: Request): { outcome: string; reason: string } {
  const chain: GrantRecord[] = [];
  for (
    let g = reads.grants.get(r.grant);
    g !== undefined && g.agent_id === AGENT;
    g = g.parent_id === null ? undefined : reads.grants.get(g.parent_id)
  )
    chain.unshift(g);
  const held = chain.length > 0;
  const row = held && r.approval ? reads.approvals.get(APPROVAL) : undefined;
  const approval = row === undefined || row.used_at !== null ? null : approvalRecord(row);
  const certificate = held ? reads.certificates.get(AGENT) : undefined;
  const decision = decide(engineRequest(body(r), AGENT, approval), chainLinks(chain, reads.usage), engineState(ctx, certificate), NOW);
  return { outcome: decision.outcome, reason: decision.reason_code };
}

/** What must be the same either way: the answer's kind and what it decided, not its fresh ids and signature. */
function summary(answer: PreparedAnswer | Refusal | undefined): unknown {
  if (answer === undefined) return "unanswered";
  if (answer instanceof Refusal) return { refused: answer.code };
  const parsed = JSON.parse(answer.text) as Record<string, unknown>;
  return { status: answer.status, replayed: answer.replayed, outcome: parsed["outcome"], reason: parsed["reason_code"], gate: answer.gate };
}

describe("the decide step decides a batch as its decisions would one after another", () => {
  let store: Store;
  let ctx: ServiceContext;
  beforeAll(async () => {
    store = openStore(":memory:");
    await store.migrate(T0);
    const signer = new Signer(randomBytes(32));
    await signer.load(store, T0);
    ctx = { store, environment: "test-env", autoApprovalCeilingMinor: 1_000_000, now: () => NOW, signer, cursorKey: randomBytes(32) };
  });
  afterAll(async () => {
    await store?.close();
  });

  it("answers, uses, holds, chain heads and stored answers agree with deciding one at a time", () => {
    fc.assert(
      fc.property(
        fc.array(request, { minLength: 1, maxLength: 24 }),
        fc.tuple(fc.integer({ min: 0, max: 6_000 }), fc.integer({ min: 0, max: 4_000 }), fc.integer({ min: 0, max: 3_000 })),
        fc.option(fc.integer({ min: 1, max: 12 }), { nil: null }),
        fc.boolean(),
        fc.record({ uses: fc.nat(5), held: fc.nat(2_000), settled: fc.nat(2_000) }),
        fc.option(fc.integer({ min: 0, max: 1_500 }), { nil: null }),
        (requests, budgets, count, childRevoked, used, ceiling) => {
          const grants = tree(budgets, count, childRevoked);
          const reads: BatchReads = {
            answers: [],
            approvals: new Map(ceiling === null ? [] : [[APPROVAL, approvalRow(ceiling)]]),
            watchedAgents: new Set(),
            grants: new Map(grants.map((g) => [g.id, g])),
            usage: new Map([[ROOT, { uses: used.uses, held_minor: used.held, settled_minor: used.settled }]]),
            heads: new Map([[ROOT, { seq: 3, hash: "0".repeat(64) }]]),
            certificates: new Map([[AGENT, certificate]]),
          };
          const inputs = requests.map((r) => input(ctx, r));
          const batch = decideBatch(inputs, reads, NOW, 0);
          let state = reads;
          const oneByOne: (PreparedAnswer | Refusal | undefined)[] = [];
          for (const [i, one] of inputs.entries()) {
            const expected = engineOutcome(ctx, state, requests[i]!);
            const decided = decideBatch([one], state, NOW, 0);
            const answer = decided.answers[0];
            oneByOne.push(answer);
            // A fresh decision is what the pure engine decides on what the database held.
            if (answer !== undefined && !(answer instanceof Refusal) && !answer.replayed) {
              const parsed = JSON.parse(answer.text) as Record<string, unknown>;
              expect({ outcome: parsed["outcome"], reason: parsed["reason_code"] }).toEqual(expected);
            }
            state = applied(state, decided);
          }
          expect(batch.answers.map(summary)).toEqual(oneByOne.map(summary));
          const after = applied(reads, batch);
          expect(after.usage).toEqual(state.usage);
          expect([...after.heads].map(([tree, head]) => [tree, head.seq])).toEqual(
            [...state.heads].map(([tree, head]) => [tree, head.seq]),
          );
          expect(after.answers.map((a) => [a.idempotency_key, a.request_hash])).toEqual(
            state.answers.map((a) => [a.idempotency_key, a.request_hash]),
          );
          expect(after.approvals.get(APPROVAL)?.used_by_ledger_id === null).toBe(state.approvals.get(APPROVAL)?.used_by_ledger_id === null);
          // The batch's records chain on from each tree's head, one after another: the grants'
          // tree, and the agent's own chain for the grant it does not hold.
          const heads = new Map<string, { seq: number; hash: string }>(reads.heads);
          for (const row of batch.writes.ledger) {
            const head = heads.get(row.tree_id) ?? { seq: 0, hash: "0".repeat(64) };
            expect([row.seq, row.prev_hash]).toEqual([head.seq + 1, head.hash]);
            expect(row.tree_id).toBe(row.grant_id === FOREIGN ? AGENT : ROOT);
            heads.set(row.tree_id, { seq: row.seq, hash: row.hash });
          }
          // A key's replay in the batch is its first answer, byte for byte.
          const first = new Map<string, string>();
          for (const [i, r] of requests.entries()) {
            const answer = batch.answers[i];
            if (r.key === undefined || answer === undefined || answer instanceof Refusal) continue;
            if (!first.has(r.key)) first.set(r.key, answer.text);
            else expect(answer.text).toBe(first.get(r.key));
          }
          // The step never spends beyond a budget: the holds and uses it adds stay within each grant's.
          for (const g of grants) {
            const u = after.usage.get(g.id);
            if (u === undefined || g.budget_amount_minor === null) continue;
            const before = reads.usage.get(g.id) ?? { held_minor: 0, settled_minor: 0, uses: 0 };
            if (u.held_minor > before.held_minor) expect(u.held_minor + u.settled_minor).toBeLessThanOrEqual(g.budget_amount_minor);
            if (g.budget_count !== null && u.uses > before.uses) expect(u.uses).toBeLessThanOrEqual(g.budget_count);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("signs the batch's decisions once: one root and one value, each answer at its own leaf, each verifying alone (decision 1901)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 24 }), async (requests) => {
        const grants = tree([6_000, 4_000, 3_000], null, false);
        const reads: BatchReads = {
          answers: [],
          approvals: new Map([[APPROVAL, approvalRow(1_000)]]),
          watchedAgents: new Set(),
          grants: new Map(grants.map((g) => [g.id, g])),
          usage: new Map(),
          heads: new Map([[ROOT, { seq: 3, hash: "0".repeat(64) }]]),
          certificates: new Map([[AGENT, certificate]]),
        };
        const batch = decideBatch(
          requests.map((r) => input(ctx, r)),
          reads,
          NOW,
          0,
        );
        const fresh = batch.answers.filter((a): a is PreparedAnswer => a !== undefined && !(a instanceof Refusal) && !a.replayed);
        const answers = fresh.map((a) => JSON.parse(a.text) as Record<string, unknown> & { signature: Record<string, unknown> });
        // A key's repeat in the batch carries its first answer's text, so the leaves are the first answers'.
        const leaves = [...new Map(answers.map((a) => [a.signature["leaf_index"], a])).values()];
        expect(new Set(leaves.map((a) => a.signature["root"])).size).toBeLessThanOrEqual(1);
        expect(new Set(leaves.map((a) => a.signature["value"])).size).toBeLessThanOrEqual(1);
        expect(leaves.map((a) => a.signature["leaf_index"]).sort((x, y) => Number(x) - Number(y))).toEqual(leaves.map((_, i) => i));
        for (const a of leaves) expect(a.signature["tree_size"]).toBe(leaves.length);
        const keyring = new SigningKeyring(ctx.signer.jwks() as unknown as SigningKeySet);
        for (const a of answers) expect(await signedStatement(a, keyring)).toHaveProperty("statement");
      }),
      { numRuns: 60 },
    );
  });
});
