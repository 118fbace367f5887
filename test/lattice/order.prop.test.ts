// Laws of the attenuation order and of meet, on generated grants (docs/attenuation.md).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BOTTOM, effectiveGrant, equivalent, leq, meet, normalizeTerms, type GrantTerms } from "@agent-authority/lattice";
import { alignedTermsArb, childOf, narrowerThan, termsArb } from "./arbitraries.js";
import { PERMANENT_PAIRS } from "./counterexamples.js";
import { propertyOptions } from "./property-options.js";

const mixedArb = fc.oneof(termsArb, alignedTermsArb);

describe("the order ≤ on grants", () => {
  it("is reflexive", () => {
    fc.assert(
      fc.property(mixedArb, (a) => leq(a, a)),
      propertyOptions(),
    );
  });

  it("is transitive", () => {
    const step = (t: GrantTerms): fc.Arbitrary<GrantTerms> => fc.oneof(childOf(t), narrowerThan(t));
    const chain = alignedTermsArb.chain((a) => step(a).chain((b) => step(b).map((c) => [a, b, c] as const)));
    fc.assert(
      fc.property(chain, ([a, b, c]) => !(leq(c, b) && leq(b, a)) || leq(c, a)),
      propertyOptions(),
    );
  });

  it("is transitive on unrelated triples too", () => {
    fc.assert(
      fc.property(mixedArb, mixedArb, mixedArb, (a, b, c) => !(leq(a, b) && leq(b, c)) || leq(a, c)),
      propertyOptions(),
    );
  });

  it("is antisymmetric on canonical terms", () => {
    const pair = alignedTermsArb.chain((a) => fc.oneof(childOf(a), narrowerThan(a)).map((b) => [a, b] as const));
    fc.assert(
      fc.property(pair, ([a, b]) => {
        if (leq(a, b) && leq(b, a)) expect(normalizeTerms(a)).toEqual(normalizeTerms(b));
      }),
      propertyOptions<[readonly [GrantTerms, GrantTerms]]>(PERMANENT_PAIRS.map((p) => [p])),
    );
  });

  it("keeps canonical forms equivalent to their terms", () => {
    fc.assert(
      fc.property(mixedArb, (a) => leq(a, normalizeTerms(a)) && leq(normalizeTerms(a), a)),
      propertyOptions(),
    );
  });

  it("has BOTTOM below everything", () => {
    fc.assert(
      fc.property(mixedArb, (a) => leq(BOTTOM, a)),
      propertyOptions(),
    );
  });
});

describe("meet, the greatest lower bound", () => {
  const pairArb = fc.oneof(
    fc.tuple(mixedArb, mixedArb),
    alignedTermsArb.chain((a) => fc.oneof(childOf(a), narrowerThan(a)).map((b) => [a, b] as [GrantTerms, GrantTerms])),
  );

  it("is below both arguments", () => {
    fc.assert(
      fc.property(pairArb, ([a, b]) => leq(meet(a, b), a) && leq(meet(a, b), b)),
      propertyOptions(),
    );
  });

  it("is above every common lower bound", () => {
    const triple = pairArb.chain(([a, b]) =>
      fc.oneof(narrowerThan(a), narrowerThan(b), narrowerThan(meet(a, b)), childOf(meet(a, b)), mixedArb).map((c) => [a, b, c] as const),
    );
    fc.assert(
      fc.property(triple, ([a, b, c]) => !(leq(c, a) && leq(c, b)) || leq(c, meet(a, b))),
      propertyOptions(),
    );
  });

  it("is commutative and idempotent up to equivalence", () => {
    fc.assert(
      fc.property(pairArb, ([a, b]) => {
        expect(normalizeTerms(meet(a, b))).toEqual(normalizeTerms(meet(b, a)));
        expect(normalizeTerms(meet(a, a))).toEqual(normalizeTerms(a));
      }),
      propertyOptions(),
    );
  });

  it("returns values that are frozen and leaves its arguments untouched", () => {
    fc.assert(
      fc.property(pairArb, ([a, b]) => {
        const before = JSON.stringify([a, b]);
        const m = meet(a, b);
        expect(JSON.stringify([a, b])).toBe(before);
        expect(Object.isFrozen(m) && Object.isFrozen(m.scope) && Object.isFrozen(m.scope.tool)).toBe(true);
      }),
      propertyOptions(),
    );
  });
});

describe("effectiveGrant", () => {
  it("is below every link of the chain, and equal to a lone grant", () => {
    const chainArb = alignedTermsArb.chain((root) =>
      fc
        .array(fc.constant(null), { minLength: 0, maxLength: 3 })
        .chain((steps) =>
          steps.reduce<fc.Arbitrary<GrantTerms[]>>(
            (acc) => acc.chain((chain) => narrowerThan(chain[chain.length - 1]!).map((next) => [...chain, next])),
            fc.constant([root]),
          ),
        ),
    );
    fc.assert(
      fc.property(chainArb, (chain) => {
        const effective = effectiveGrant(chain);
        for (const link of chain) expect(leq(effective, link)).toBe(true);
        if (chain.length === 1) expect(equivalent(effective, chain[0]!)).toBe(true);
      }),
      propertyOptions(),
    );
  });
});
