// The environment the policy gate reads, whose names are computed when read (LinkEnvironment,
// decision 0152), gives every name the value the object built whole gave before it, on random
// requests, links, instants and approvers; and every policy decided or evaluated on it comes out as
// on that object: outcome, residual text, error and units charged.
import {
  compilePolicy,
  costMeter,
  decideChain,
  decideLink,
  ENVIRONMENT_NAMES,
  formatExpr,
  type CompiledPolicy,
  type PolicyEnvironment,
} from "@agent-authority/language";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { approverExprs, typedExprs } from "../../language/test-support/arbitraries.js";
import { LinkEnvironment, policyEnvironment } from "./environment.js";
import { requestAmount } from "./gates.js";
import type { ChainLink, DecisionRequest } from "./types.js";
import { spentMinor } from "./usage.js";

const params = (runs: number): fc.Parameters<unknown> => ({ numRuns: runs, seed: Number(process.env["FC_SEED"] ?? 20261129) });

const DAY_MS = 86_400_000;

/** The environment as the gate built it before decision 0152: one object of every name, computed whole. */
function eagerEnvironment(request: DecisionRequest, link: ChainLink, now: number, approver: string | null = null): PolicyEnvironment {
  const WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;
  const days = Math.floor(now / DAY_MS);
  return {
    amount_minor: requestAmount(request),
    currency: request.currency ?? "",
    tool: request.tool,
    approver,
    agent: request.agent_id,
    principal: link.terms.principal.id,
    audience: request.audience ?? link.terms.audience ?? "",
    uses: link.usage.uses,
    spent_minor: spentMinor(link, now),
    hour_utc: Math.floor((now - days * DAY_MS) / 3_600_000),
    weekday_utc: WEEKDAYS[(((days + 4) % 7) + 7) % 7]!,
    args: request.args ?? {},
  };
}

/** Small pools of strings, shared by the request, the link, the approver and the policies' literals, so that they meet. */
const STRINGS = ["", "a", "pay", "EUR", "alice", "api", "mon", "thu"];
const str = fc.constantFrom(...STRINGS);
const absent = <T>(value: fc.Arbitrary<T>): fc.Arbitrary<T | null | undefined> =>
  fc.oneof(value, fc.constant(null), fc.constant(undefined));

/** Instants anywhere a Date can be, near the epoch, near a day's edges before and after it. */
const nowArb = fc.oneof(
  fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 }),
  fc.integer({ min: -3 * DAY_MS, max: 3 * DAY_MS }),
  fc.tuple(fc.integer({ min: -200_000, max: 200_000 }), fc.integer({ min: -2, max: 2 })).map(([d, ms]) => d * DAY_MS + ms),
);

const argsArb = absent(
  fc.record(
    {
      n: fc.oneof(fc.integer({ min: -3, max: 20 }), str, fc.constant(null)),
      s: fc.oneof(str, fc.integer({ min: 0, max: 5 })),
      b: fc.oneof(fc.boolean(), str),
      l: fc.oneof(fc.array(str, { maxLength: 3 }), str),
      o: fc.record({ x: fc.oneof(fc.integer({ min: 0, max: 5 }), str) }, { requiredKeys: [] }),
    },
    { requiredKeys: [] },
  ),
);

const requestArb: fc.Arbitrary<DecisionRequest> = fc.record(
  {
    grant_id: fc.constant("grt_1"),
    agent_id: str,
    tool: str,
    amount_minor: absent(fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.constant(Number.MAX_SAFE_INTEGER))),
    currency: absent(str),
    audience: absent(str),
    args: argsArb,
  },
  { requiredKeys: ["grant_id", "agent_id", "tool"] },
);

/** A link (the environment reads its principal, audience and usage); holds expire around `now`, given as offsets from it. */
const linkArb = fc.record({
  principal: str,
  audience: absent(str),
  uses: fc.integer({ min: 0, max: 200 }),
  settled_minor: fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.constant(0)),
  holds: fc.array(fc.record({ amount_minor: fc.integer({ min: 0, max: 100_000 }), expires_in: fc.integer({ min: -2, max: 2 }) }), {
    maxLength: 4,
  }),
});

type LinkDrawn = typeof linkArb extends fc.Arbitrary<infer T> ? T : never;

function linkAt(drawn: LinkDrawn, now: number): ChainLink {
  return {
    grant_id: "grt_1",
    agent_id: "agt_1",
    status: "active",
    terms: { principal: { type: "user", id: drawn.principal }, audience: drawn.audience, policy: null },
    usage: {
      uses: drawn.uses,
      settled_minor: drawn.settled_minor,
      holds: drawn.holds.map((h) => ({ amount_minor: h.amount_minor, expires_at: now + h.expires_in })),
    },
  } as unknown as ChainLink;
}

const approverArb = fc.oneof(fc.constant(null), str, fc.constantFrom("b", "ab", "z"));

const caseArb = fc.record({ request: requestArb, link: linkArb, now: nowArb, approver: approverArb });

/** Every name, each some times, in a random order (a name read again gives what it gave first). */
const readsArb = fc.array(fc.constantFrom(...ENVIRONMENT_NAMES), { minLength: 1, maxLength: 30 });

/** Conditions on every name (`approver` compared with names too: a residual states their values). */
const NAMES_READ = [
  "amount_minor > 5000",
  "amount_minor == 0",
  'currency == "EUR"',
  'currency == ""',
  'tool in ["pay", "a"]',
  'agent == "alice"',
  'startsWith(principal, "al")',
  'audience == ""',
  'endsWith(audience, "pi")',
  "uses < 100",
  "spent_minor + amount_minor <= 1000000",
  "spent_minor == 0",
  "hour_utc >= 8 && hour_utc < 18",
  'weekday_utc in ["mon", "tue", "wed", "thu", "fri"]',
  'weekday_utc == "thu"',
  "args.n > 3",
  'args.s == "a"',
  "approver == null",
  "approver == tool",
  "approver in [agent, principal, currency]",
  "approver == audience || approver == weekday_utc",
  "startsWith(approver, tool)",
  'approver in args.l || approver == "pay"',
];

const part = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NAMES_READ) },
  { weight: 1, arbitrary: approverExprs.map(formatExpr) },
  { weight: 1, arbitrary: typedExprs.b.map(formatExpr) },
);

/** Policies as text (so that a counterexample prints as one), each compiled once. */
const compiled = new Map<string, CompiledPolicy | null>();
function compiledOf(text: string): CompiledPolicy | null {
  if (!compiled.has(text)) {
    const result = compilePolicy(text);
    compiled.set(text, result.ok ? result.policy : null);
  }
  return compiled.get(text)!;
}

const policyArb: fc.Arbitrary<string> = fc
  .array(fc.tuple(part, fc.constantFrom("&&", "||", "&& !", "|| !")), { minLength: 1, maxLength: 4 })
  .map((parts) => parts.map(([p, op], i) => (i === 0 ? `(${p})` : `${op}(${p})`)).join(" "))
  .filter((text) => compiledOf(text) !== null);

describe("LinkEnvironment", () => {
  it("gives every name the value the whole object gave, read in any order and again", () => {
    fc.assert(
      fc.property(caseArb, readsArb, ({ request, link, now, approver }, reads) => {
        const chainLink = linkAt(link, now);
        const eager = eagerEnvironment(request, chainLink, now, approver);
        const lazy = new LinkEnvironment(request, chainLink, now, approver);
        for (const name of [...reads, ...ENVIRONMENT_NAMES]) expect(lazy[name]).toStrictEqual(eager[name]);
        // `args` is the request's own object when it has one, and one object however often it is read.
        expect(lazy.args).toBe(lazy.args);
        if (request.args != null) expect(lazy.args).toBe(request.args);
        // The plain object has every name, and only them, with the same values.
        expect(policyEnvironment(request, chainLink, now, approver)).toStrictEqual(eager);
        // A null approver is the default, as before.
        expect(new LinkEnvironment(request, chainLink, now).approver).toBe(null);
      }),
      params(3000),
    );
  });

  it("decides and evaluates every policy as the whole object does: outcome, residual, error and units", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(policyArb, caseArb, (text, { request, link, now, approver }) => {
        const policy = compiledOf(text)!;
        const chainLink = linkAt(link, now);
        const eager = eagerEnvironment(request, chainLink, now, null);
        const lazy = new LinkEnvironment(request, chainLink, now, null);
        const [m1, m2] = [costMeter(), costMeter()];
        const decided = decideLink(policy, lazy, m1);
        expect(decided).toStrictEqual(decideLink(policy, eager, m2));
        expect(m1.spent).toBe(m2.spent);
        seen.add(decided.outcome);
        // Two links of the chain, each with its own environment, conjoined.
        const root: ChainLink = { ...chainLink, usage: { ...chainLink.usage, uses: 0 } };
        const [other, otherEager] = [new LinkEnvironment(request, root, now, null), eagerEnvironment(request, root, now, null)];
        expect(
          decideChain([
            { policy, env: lazy },
            { policy, env: other },
          ]),
        ).toStrictEqual(
          decideChain([
            { policy, env: eager },
            { policy, env: otherEager },
          ]),
        );
        if (approver === null) return;
        const [e1, e2] = [costMeter(), costMeter()];
        const withApprover = new LinkEnvironment(request, chainLink, now, approver);
        expect(policy.evaluate(withApprover, e1)).toStrictEqual(policy.evaluate(eagerEnvironment(request, chainLink, now, approver), e2));
        expect(e1.spent).toBe(e2.spent);
      }),
      params(3000),
    );
    expect([...seen].sort()).toEqual(["allow", "deny", "gated"]);
  });
});
