// The cost model of issue 33: the static worst case at its edge, the run-time budget on the issue's
// hostile shapes, and residuals that keep a reference to `args` rather than grow past their policy.
import { describe, expect, it } from "vitest";
import { SAMPLE_ENVIRONMENT } from "../test-support/arbitraries.js";
import { compiled } from "../test-support/fixtures.js";
import { UNITS_PER_64_CODE_UNITS, FUNCTION_COSTS, urlReadingUnits } from "./cost.js";
import { FUNCTION_ARITY } from "./environment.js";
import { LIMITS, utf8Length } from "./limits.js";
import { compilePolicy, conjoin, costMeter, decideChain, type CompiledPolicy } from "./policy.js";

const env = SAMPLE_ENVIRONMENT;
const { approver: _none, ...undecided } = env;

/** `count` addresses, `user0@example.com` and on. */
const addresses = (count: number, domain = "example.com"): string[] => Array.from({ length: count }, (_, i) => `user${i}@${domain}`);

/** The issue's 56 KB list: 1,024 lists of 27 zeros. */
const LARGE = Array.from({ length: 1024 }, () => Array.from({ length: 27 }, () => 0));

function estimate(text: string): number {
  const result = compilePolicy(text, { origin: "stored" });
  if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
  return Math.max(result.policy.cost.evaluation, result.policy.cost.decision);
}

/** Blocks of a conjunction and the marginal units of each (its `&&` included), largest first. */
const BLOCKS: readonly ((i: number) => string)[] = [
  () => "args.a == args.b",
  (i) => `size(args.s${i}) > 0`,
  (i) => `lower(args.s${i}) == "x"`,
  (i) => `tool == args.t${i}`,
  (i) => `uses < ${i}`,
  (i) => `args.f${i}`,
];

/** A conjunction whose static worst case is exactly `target` units (greedy over BLOCKS), or undefined. */
function policyCosting(target: number): string | undefined {
  const first = BLOCKS[0]!(0);
  const marginal = BLOCKS.map((block) => estimate(`${first} && ${block(999)}`) - estimate(first));
  const parts = [first];
  let left = target - estimate(first);
  for (let b = 0; b < BLOCKS.length; b++) {
    // Keep room for the small blocks to land exactly: 3s and 5s make every number from 8 on.
    while (
      left - marginal[b]! >= (b < 4 ? 8 : 0) &&
      (b < 4 || left % marginal[b]! === 0 || left - marginal[b]! >= 8 || (left - marginal[b]!) % marginal[5]! === 0)
    ) {
      parts.push(BLOCKS[b]!(parts.length));
      left -= marginal[b]!;
    }
  }
  return left === 0 ? parts.join(" && ") : undefined;
}

describe("the static worst case", () => {
  it("gives every function of the language a cost, in one table", () => {
    expect(Object.keys(FUNCTION_COSTS).sort()).toEqual(Object.keys(FUNCTION_ARITY).sort());
    expect(FUNCTION_COSTS.lower([640])).toBe(1 + 10 * UNITS_PER_64_CODE_UNITS.lower);
    expect(FUNCTION_COSTS.size([640])).toBe(1 + 10 * UNITS_PER_64_CODE_UNITS.codePoints);
    // A path or URL longer than its limit is refused before it is parsed: charged as one at the limit.
    expect(FUNCTION_COSTS.pathWithin([65_536, 1])).toBe(FUNCTION_COSTS.pathWithin([LIMITS.pathBytesMax, 1]));
    expect(FUNCTION_COSTS.startsWith([65_536, 3])).toBe(1);
  });

  it("LIMITS.evaluationUnitsMax at its edge: a policy that could take exactly the budget is issued, one unit more is refused", () => {
    const exact = policyCosting(LIMITS.evaluationUnitsMax);
    expect(exact).toBeDefined();
    expect(utf8Length(exact!)).toBeLessThanOrEqual(LIMITS.policyBytesMax);
    expect(estimate(exact!)).toBe(LIMITS.evaluationUnitsMax);
    expect(compilePolicy(exact!).ok).toBe(true);
    // `-uses` for `uses`: one node, one unit more.
    const over = exact!.replace(/uses </, "-uses <");
    expect(estimate(over)).toBe(LIMITS.evaluationUnitsMax + 1);
    const refused = compilePolicy(over);
    expect(refused.ok).toBe(false);
    if (!refused.ok)
      expect(refused.diagnostics.map((d) => [d.code, d.span])).toEqual([["policy-too-costly", { start: 0, end: over.length }]]);
  });

  it("the worst cases docs/policy-language.md states", () => {
    const cost = (text: string) => {
      const result = compilePolicy(text, { origin: "stored" });
      if (!result.ok) throw new Error(text);
      return result.policy.cost;
    };
    expect(cost("args.l == args.m").evaluation).toBe(32_773);
    expect(cost("args.a == args.b && args.c == args.d").evaluation).toBe(65_547);
    expect(cost('args.country == "DE"').evaluation).toBe(5);
    expect(cost("approver in args.l")).toMatchObject({ evaluation: 2_053, decision: 4_494 });
  });

  it("refuses the issue's `args.l == args.l && …` when it is written, and accepts `approver in args.l`", () => {
    const hostile = Array.from({ length: 180 }, () => "args.l == args.l").join(" && ");
    const result = compilePolicy(hostile);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.diagnostics[0]!.code).toBe("policy-too-costly");
    expect(compilePolicy("approver in args.l").ok).toBe(true);
    expect(compilePolicy("args.l == args.m").ok).toBe(true);
  });
});

describe("the run-time budget", () => {
  const stored = (text: string): CompiledPolicy => {
    const result = compilePolicy(text, { origin: "stored" });
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    return result.policy;
  };

  it("denies a stored `args.l == args.l && …` on 56 KB of args with `cost-exceeded`, having spent no more than its budget and one charge", () => {
    const policy = stored(Array.from({ length: 180 }, () => "args.l == args.l").join(" && "));
    expect(utf8Length(JSON.stringify({ l: LARGE }))).toBeGreaterThan(56_000);
    const meter = costMeter();
    const evaluated = policy.evaluate({ ...env, args: { l: LARGE } }, meter);
    expect(evaluated.ok).toBe(false);
    if (!evaluated.ok) expect(evaluated.error.code).toBe("cost-exceeded");
    // One policy never spends more than its own budget of the decision's (one charge past it at most).
    expect(meter.spent).toBeGreaterThan(LIMITS.evaluationUnitsMax);
    expect(meter.spent).toBeLessThanOrEqual(LIMITS.evaluationUnitsMax + 1);
    const decided = policy.decide({ ...undecided, args: { l: LARGE } });
    expect(decided).toMatchObject({ outcome: "deny", error: { code: "cost-exceeded" } });
  });

  it("the same policy on small args evaluates within its budget: the budget is about the work, not the text", () => {
    const policy = stored(Array.from({ length: 180 }, () => "args.l == args.l").join(" && "));
    const meter = costMeter();
    expect(policy.evaluate({ ...env, args: { l: [1, 2, 3] } }, meter)).toEqual({ ok: true, value: true });
    expect(meter.spent).toBeLessThan(5_000);
  });

  it("charges a shared meter across policies, and a chain past the decision's budget denies", () => {
    const one = compiled("args.l == args.m");
    const copy = structuredClone(LARGE);
    const links = Array.from({ length: 16 }, () => ({ policy: one, env: { ...undecided, args: { l: LARGE, m: copy } } }));
    const meter = costMeter();
    const outcome = decideChain(links, meter);
    expect(outcome).toMatchObject({ outcome: "cost-exceeded", error: { code: "cost-exceeded" } });
    expect(meter.spent).toBeLessThanOrEqual(LIMITS.decisionUnitsMax + 1);
  });

  it("the static estimate bounds what an evaluation of the largest values is charged", () => {
    const strings = { s: "x".repeat(60_000), t: "x".repeat(60_000), l: addresses(1024), m: LARGE };
    for (const text of [
      'lower(args.s) == "x"',
      "size(args.s) > 3",
      "args.s < args.t",
      "startsWith(args.s, args.t)",
      "args.s in args.l",
      "approver in args.l",
      "args.m == args.m",
    ]) {
      const policy = compiled(text);
      for (const approver of [null, "user1023@example.com", "x".repeat(60_000)]) {
        const meter = costMeter();
        policy.evaluate({ ...env, approver, args: strings }, meter);
        expect(meter.spent, text).toBeLessThanOrEqual(policy.cost.evaluation);
      }
      const meter = costMeter();
      policy.decide({ ...undecided, args: strings }, meter);
      expect(meter.spent, text).toBeLessThanOrEqual(policy.cost.decision);
    }
  });
});

describe("large residuals (issue 33 item 4)", () => {
  it("`approver in [810 addresses]` is gated with a residual no larger than its canonical text, which compiles as a residual and admits every member", () => {
    // 810 two-letter identities, written without spaces: 4,064 bytes, 4,872 once formatted.
    const letters = "abcdefghijklmnopqrstuvwxyz0123456789";
    const list = Array.from({ length: 810 }, (_, i) => letters[Math.floor(i / 36)]! + letters[i % 36]!);
    const text = `approver in [${list.map((a) => `"${a}"`).join(",")}]`;
    expect(utf8Length(text)).toBeLessThanOrEqual(LIMITS.policyBytesMax);
    expect(utf8Length(compiled(text).text)).toBe(4_872);
    const policy = compiled(text);
    const decided = policy.decide({ ...undecided, amount_minor: 100 });
    expect(decided.outcome).toBe("gated");
    if (decided.outcome !== "gated") return;
    expect(utf8Length(decided.residual)).toBeGreaterThan(LIMITS.policyBytesMax);
    expect(utf8Length(decided.residual)).toBeLessThanOrEqual(utf8Length(policy.text));
    expect(compilePolicy(decided.residual).ok).toBe(false);
    const residual = compilePolicy(decided.residual, { origin: "residual" });
    expect(residual.ok).toBe(true);
    if (!residual.ok) return;
    for (const member of list)
      expect(residual.policy.evaluate({ ...env, approver: member }).ok && residual.policy.evaluate({ ...env, approver: member })).toEqual({
        ok: true,
        value: true,
      });
    expect(residual.policy.evaluate({ ...env, approver: "zz" })).toEqual({ ok: true, value: false });
  });

  it("`approver in args.l` with 1,024 addresses keeps the reference: the residual is the policy's own text, read on the action's args", () => {
    const policy = compiled("approver in args.l");
    const l = addresses(1024);
    const decided = policy.decide({ ...undecided, args: { l } });
    expect(decided).toEqual({ outcome: "gated", residual: "approver in args.l" });
    // A short list fits in the policy's size as values, and is stated.
    expect(compiled("approver in args.longer_name").decide({ ...undecided, args: { longer_name: ["a@b"] } })).toEqual({
      outcome: "gated",
      residual: 'approver in ["a@b"]',
    });
    expect(compiled("approver in args.l").decide({ ...undecided, args: { l: ["a@b"] } })).toEqual({
      outcome: "gated",
      residual: "approver in args.l",
    });
  });

  it("a chain of 64 such links is gated with a residual no larger than its policies together", () => {
    const policies = Array.from({ length: 64 }, (_, i) => compiled(`approver in args.l && args.k != "v${i}"`));
    const l = addresses(1024);
    const meter = costMeter();
    const outcome = decideChain(
      policies.map((policy) => ({ policy, env: { ...undecided, args: { l } } })),
      meter,
    );
    expect(outcome.outcome).toBe("gated");
    if (outcome.outcome !== "gated") return;
    expect(utf8Length(outcome.residual)).toBeLessThanOrEqual(utf8Length(conjoin(policies).text));
    expect(meter.spent).toBeLessThanOrEqual(LIMITS.decisionUnitsMax);
  });

  it("states the values when they fit: who can approve reads as names where it can", () => {
    const policy = compiled("approver == args.manager || amount_minor < 10");
    expect(policy.decide({ ...undecided, amount_minor: 100, args: { manager: "bob@example.com" } })).toEqual({
      outcome: "gated",
      residual: 'approver == "bob@example.com"',
    });
    const long = `${"b".repeat(60)}@example.com`;
    expect(policy.decide({ ...undecided, amount_minor: 100, args: { manager: long } })).toEqual({
      outcome: "gated",
      residual: "approver == args.manager",
    });
  });
});

describe("URL functions read each argument once (decision 0147)", () => {
  const shared = 'urlPort(args.u) == 443 && urlScheme(args.u) == "https" && pathNormalize(args.p) in ["/a"]';

  it("parts of one `args` value share one reading, so the documented policy is issued; two values from `args` are over the budget", () => {
    const one = compilePolicy(shared);
    expect(one.ok).toBe(true);
    const reading = urlReadingUnits(LIMITS.urlBytesMax);
    expect(reading).toBe(1 + (LIMITS.urlBytesMax * UNITS_PER_64_CODE_UNITS.url) / 64);
    // Just under: any number of parts of `args.u`; just over: a second value from `args`.
    const parts = 'urlPort(args.u) == 443 && urlHost(args.u) == "a" && urlPath(args.u) == "/" && urlWithin(args.u, "https://a")';
    expect(estimate(parts)).toBeLessThan(LIMITS.evaluationUnitsMax);
    expect(compilePolicy(parts).ok).toBe(true);
    const two = 'urlHost(args.u) == "a" && urlHost(args.v) == "b"';
    expect(estimate(two)).toBeGreaterThan(LIMITS.evaluationUnitsMax);
    expect(estimate(two)).toBeLessThan(LIMITS.evaluationUnitsMax + 32);
    const refused = compilePolicy(two);
    expect(refused.ok ? "issued" : refused.diagnostics[0]!.code).toBe("policy-too-costly");
  });

  it("at run time one reading per distinct string: a URL at the limit is charged once however often it is read", () => {
    const result = compilePolicy(shared);
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    const u = `https://docs.example.com/${"a/".repeat((LIMITS.urlBytesMax - 25) / 2)}`.slice(0, LIMITS.urlBytesMax);
    const meter = costMeter();
    const value = result.policy.evaluate({ ...env, args: { u, p: "/a" } }, meter);
    expect(value).toEqual({ ok: true, value: true });
    const path = FUNCTION_COSTS.pathNormalize([2, 0]);
    // Besides: the three comparisons of a result that may fail, one unit each.
    expect(meter.spent).toBe(result.policy.cost.nodes + urlReadingUnits(u.length) + 2 * FUNCTION_COSTS.urlPort([u.length, 0]) + path + 3);
    expect(meter.spent).toBeLessThanOrEqual(result.policy.cost.evaluation);
  });

  it("a stored policy reading two URLs from `args`: allowed just under the budget, `cost-exceeded` one code unit over", () => {
    const text = 'urlHost(args.u) == "e.com" && urlHost(args.v) == "e.com"';
    const stored = compilePolicy(text, { origin: "stored" });
    if (!stored.ok) throw new Error(JSON.stringify(stored.diagnostics));
    const policy = stored.policy;
    const u = `https://e.com/${"a".repeat(LIMITS.urlBytesMax - 14)}`;
    // Units left for the second URL's reading, each code unit charged 3 bytes at RATE.url per 64.
    const left = LIMITS.evaluationUnitsMax - policy.cost.nodes - 2 * FUNCTION_COSTS.urlHost([0]) - urlReadingUnits(u.length) - 1;
    const length = Math.floor((left * 64) / (3 * UNITS_PER_64_CODE_UNITS.url));
    const v = (n: number): string => `https://e.com/${"b".repeat(n - 14)}`;
    expect(urlReadingUnits(length) <= left + 1 && urlReadingUnits(length + 1) > left + 1).toBe(true);
    const under = costMeter(LIMITS.evaluationUnitsMax);
    expect(policy.evaluate({ ...env, args: { u, v: v(length) } }, under)).toEqual({ ok: true, value: true });
    expect(under.spent).toBeLessThanOrEqual(LIMITS.evaluationUnitsMax);
    const over = policy.evaluate({ ...env, args: { u, v: v(length + 1) } }, costMeter(LIMITS.evaluationUnitsMax));
    expect(over.ok ? "allowed" : over.error.code).toBe("cost-exceeded");
  });
});
