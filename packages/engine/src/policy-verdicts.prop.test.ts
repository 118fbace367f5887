// A verdict the policy gate keeps and gives again equals the one it would build (decision 0150):
// one long-lived PolicyVerdicts, asked in a random order for random quotes drawn from small pools
// (so that quotes repeat, and one grant is both a leaf and an ancestor), against a fresh one each time;
// some approvers drawn from a pool larger than a slot keeps (decision 0151).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PolicyVerdicts } from "./policy-verdicts.js";
import type { ChainLink } from "./types.js";

const params = (runs: number): fc.Parameters<unknown> => ({ numRuns: runs, seed: Number(process.env["FC_SEED"] ?? 20261129) });

/** A chain of grants by id (the verdicts read only `grant_id` and the chain's length). */
const chainArb = fc
  .array(fc.constantFrom("grt_a", "grt_b"), { minLength: 1, maxLength: 3 })
  .map((ids) => ids.map((grant_id) => ({ grant_id }) as ChainLink));

/** Approvers: mostly one of a few, sometimes one of forty, more than a slot keeps by quote (QUOTES_KEPT). */
const approverArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("a", "b", "a@x") },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 39 }).map((n) => `p${n}`) },
);

const askArb = fc.oneof(
  fc.record({ kind: fc.constant("refused" as const), chain: chainArb, at: fc.nat(), quoted: fc.constant("") }),
  fc.record({ kind: fc.constant("refusedWith" as const), chain: chainArb, at: fc.nat(), quoted: approverArb }),
  fc.record({ kind: fc.constant("approved" as const), chain: chainArb, at: fc.nat(), quoted: approverArb }),
  fc.record({
    kind: fc.constant("gated" as const),
    chain: chainArb,
    at: fc.nat(),
    quoted: fc.constantFrom("approver != null", 'approver == "a"'),
  }),
);

type Ask = typeof askArb extends fc.Arbitrary<infer T> ? T : never;

function answer(verdicts: PolicyVerdicts, ask: Ask): unknown {
  const i = ask.at % ask.chain.length;
  switch (ask.kind) {
    case "refused":
      return verdicts.refused(ask.chain, i);
    case "refusedWith":
      return verdicts.refusedWith(ask.chain, i, ask.quoted);
    case "approved":
      return verdicts.approved(ask.quoted);
    default:
      return verdicts.gated(ask.quoted);
  }
}

describe("the policy gate's kept verdicts", () => {
  it("equal, field for field, the verdicts built afresh for the same quotes", () => {
    let given = 0;
    fc.assert(
      fc.property(fc.array(askArb, { minLength: 1, maxLength: 80 }), (asks) => {
        const kept = new PolicyVerdicts();
        const before = new Map<Ask["kind"], unknown>();
        for (const ask of asks) {
          const verdict = answer(kept, ask);
          expect(verdict).toStrictEqual(answer(new PolicyVerdicts(), ask));
          expect(JSON.stringify(verdict)).toBe(JSON.stringify(answer(new PolicyVerdicts(), ask)));
          if (before.get(ask.kind) === verdict) given += 1;
          before.set(ask.kind, verdict);
        }
      }),
      params(2000),
    );
    // Kept verdicts were given again, not only built.
    expect(given).toBeGreaterThan(1000);
  });
});
