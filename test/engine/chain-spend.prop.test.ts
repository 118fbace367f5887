// A delegation tree never spends more in total than its root's budget, whatever the interleaving.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decide, liveHeldMinor, type ChainLink, type DecisionState } from "@agent-authority/engine";
import { checkAttenuation, inheritChildTerms, type GrantTerms } from "@agent-authority/lattice";
import { propertyOptions } from "../lattice/property-options.js";
import { AGENT, STATE } from "./arbitraries.js";

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 5, 1);

const ROOT: GrantTerms = {
  scope: { tool: ["pay.*"] },
  window: { start: T0, end: T0 + 48 * HOUR },
  budget_amount_minor: 10_000,
  budget_currency: "EUR",
  budget_count: 12,
  conditions: { clean_context: false },
  enforcement_mode: "enforce",
  audience: null,
  principal: { type: "team", id: "finance" },
  delegation_policy: "attenuating",
  delegation_depth_max: null,
  policy: null,
};

type Op =
  | { kind: "delegate"; parent: number; share: number; count: number | null; mode: "enforce" | "observe" }
  | { kind: "act"; node: number; amount: number }
  | { kind: "settle"; decision: number; share: number }
  | { kind: "wait"; minutes: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("delegate" as const),
      parent: fc.nat(20),
      share: fc.constantFrom(0.3, 0.6, 1, 1.2),
      count: fc.constantFrom(null, 3, 20),
      mode: fc.constantFrom("enforce" as const, "observe" as const),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant("act" as const), node: fc.nat(20), amount: fc.constantFrom(0, 1, 700, 2_500, 4_000, 9_999) }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("settle" as const), decision: fc.nat(50), share: fc.constantFrom(0, 0.5, 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("wait" as const), minutes: fc.constantFrom(5, 60, 600) }) },
);

interface Node {
  readonly id: string;
  readonly path: readonly number[]; // indices of the chain, root first, this node last
  terms: GrantTerms;
  uses: number;
  settled: number;
  holds: { decision: number; amount_minor: number; expires_at: number }[];
}

/** A store in miniature: it applies the engine's decisions exactly as docs/attenuation.md and docs/decisions.md say. */
function simulate(ops: readonly Op[], state: DecisionState): void {
  const nodes: Node[] = [{ id: "grt_0", path: [0], terms: ROOT, uses: 0, settled: 0, holds: [] }];
  const decisions: { chain: readonly number[]; amount: number; settled: boolean }[] = [];
  let now = T0 + HOUR;
  let captured = 0;
  const link = (i: number): ChainLink => {
    const n = nodes[i]!;
    return {
      grant_id: n.id,
      agent_id: AGENT,
      status: "active",
      terms: n.terms,
      usage: { uses: n.uses, settled_minor: n.settled, holds: n.holds },
    };
  };
  for (const op of ops) {
    if (op.kind === "wait") now += op.minutes * 60_000;
    if (op.kind === "delegate") {
      const parent = nodes[op.parent % nodes.length]!;
      const usage = { uses: parent.uses, spent_minor: parent.settled + liveHeldMinor(link(parent.path.at(-1)!), now) };
      const remaining = Math.max(0, parent.terms.budget_amount_minor - usage.spent_minor);
      const child = inheritChildTerms(
        parent.terms,
        {
          budget_amount_minor: Math.floor(remaining * op.share),
          budget_count: op.count,
          enforcement_mode: op.mode,
          window: { start: now, end: parent.terms.window.end },
        },
        usage,
      );
      // A widening request creates nothing, exactly as the server's 422.
      if (checkAttenuation(parent.terms, child, usage).ok)
        nodes.push({ id: `grt_${nodes.length}`, path: [...parent.path, nodes.length], terms: child, uses: 0, settled: 0, holds: [] });
    }
    if (op.kind === "act") {
      const node = nodes[op.node % nodes.length]!;
      const chain = node.path.map(link);
      const d = decide(
        { grant_id: node.id, agent_id: AGENT, tool: "pay.send", amount_minor: op.amount, currency: "EUR", attestation: STATE.certificate },
        chain,
        state,
        now,
      );
      if (d.counted) {
        // INVARIANT (budget-monotone): one atomic step debits the grant and every ancestor.
        const index = decisions.push({ chain: node.path, amount: op.amount, settled: false }) - 1;
        for (const i of node.path) nodes[i]!.uses += 1;
        for (const hold of d.holds) {
          const target = nodes.find((n) => n.id === hold.grant_id)!;
          target.holds.push({ decision: index, amount_minor: hold.amount_minor, expires_at: hold.expires_at });
        }
      }
    }
    if (op.kind === "settle" && decisions.length > 0) {
      const index = op.decision % decisions.length;
      const decision = decisions[index]!;
      const live = nodes[decision.chain[0]!]!.holds.some((h) => h.decision === index && h.expires_at > now);
      if (!decision.settled && live) {
        const amount = Math.floor(decision.amount * op.share);
        decision.settled = true;
        captured += amount;
        for (const i of decision.chain) {
          const n = nodes[i]!;
          n.holds = n.holds.filter((h) => h.decision !== index);
          n.settled += amount;
        }
      }
    }
    const root = nodes[0]!;
    const committed = root.settled + liveHeldMinor(link(0), now);
    expect(committed).toBeLessThanOrEqual(ROOT.budget_amount_minor);
    expect(captured).toBeLessThanOrEqual(ROOT.budget_amount_minor);
    expect(root.uses).toBeLessThanOrEqual(ROOT.budget_count!);
    for (const n of nodes) {
      expect(n.settled + liveHeldMinor(link(n.path.at(-1)!), now)).toBeLessThanOrEqual(n.terms.budget_amount_minor);
    }
  }
}

/** Shrunk counterexamples, kept as permanent cases. */
const PERMANENT_OPS: { why: string; ops: Op[]; lifetime: number }[] = [
  {
    why: "a child spending its whole budget after its parent spent: the budget gate must check every ancestor, not only the grant",
    ops: [
      { kind: "delegate", parent: 0, share: 1, count: 3, mode: "enforce" },
      { kind: "act", node: 0, amount: 9999 },
      { kind: "act", node: 7, amount: 9999 },
    ],
    lifetime: HOUR,
  },
];

describe("a delegation tree never multiplies authority", () => {
  it("keeps its shrunk counterexamples as permanent cases", () => {
    for (const c of PERMANENT_OPS) simulate(c.ops, { ...STATE, hold_lifetime_ms: c.lifetime });
  });

  it("spends at most the root's budget and uses, whatever the interleaving across children", () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 60 }), fc.constantFrom(HOUR, 24 * HOUR), (ops, lifetime) => {
        simulate(ops, { ...STATE, hold_lifetime_ms: lifetime });
      }),
      propertyOptions(),
    );
  });
});
