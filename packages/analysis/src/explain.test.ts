// The nearest allowed input: fewest names changed, then the smallest change of each int, and always confirmed by the evaluator.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compilePolicy, type PolicyEnvironment } from "@agent-authority/language";
import { createAnalyzer, nearestAllowed, type Analyzer } from "./index.js";

let analyzer: Analyzer;
beforeAll(async () => {
  analyzer = await createAnalyzer();
});
afterAll(async () => {
  await analyzer.close();
});

const action: PolicyEnvironment = {
  amount_minor: 60_000,
  currency: "EUR",
  tool: "payments.transfer",
  approver: null,
  agent: "agt_1",
  principal: "ops",
  audience: "erp",
  uses: 3,
  spent_minor: 0,
  hour_utc: 22,
  weekday_utc: "sat",
  args: { memo: "rent" },
};

describe("nearest allowed input", () => {
  it("changes one int by the least amount", async () => {
    const r = await nearestAllowed(analyzer, 'amount_minor <= 50000 && currency == "EUR"', action);
    expect(r).toEqual({ kind: "nearest", input: { ...action, amount_minor: 50_000 }, changed: ["amount_minor"] });
  });

  it("prefers one changed name to two: an approval rather than a smaller amount and another currency", async () => {
    const r = await nearestAllowed(analyzer, 'amount_minor < 100 && currency == "USD" || approver != null', action);
    expect(r.kind).toBe("nearest");
    if (r.kind !== "nearest") return;
    expect(r.changed).toEqual(["approver"]);
    expect(typeof r.input.approver).toBe("string");
  });

  it("adds a missing argument, keeping the others", async () => {
    const r = await nearestAllowed(analyzer, "args.limit != null && args.limit > 10", action);
    expect(r.kind).toBe("nearest");
    if (r.kind !== "nearest") return;
    expect(r.changed).toEqual(["args.limit"]);
    expect(r.input.args).toEqual({ memo: "rent", limit: 11 });
    const compiled = compilePolicy("args.limit != null && args.limit > 10");
    expect(compiled.ok && compiled.policy.evaluate(r.input)).toEqual({ ok: true, value: true });
  });

  it("answers `allowed` for an input already allowed and `never` for a policy nothing satisfies", async () => {
    expect(await nearestAllowed(analyzer, 'currency == "EUR"', action)).toEqual({ kind: "allowed" });
    expect(await nearestAllowed(analyzer, 'startsWith(tool, "a.") && startsWith(tool, "b.")', action)).toEqual({ kind: "never" });
  });

  it("an hour within its domain: the nearest allowed hour to 22 under `hour_utc < 9` is 8", async () => {
    const r = await nearestAllowed(analyzer, "hour_utc < 9", action);
    expect(r.kind === "nearest" && r.input.hour_utc).toBe(8);
  });
});
