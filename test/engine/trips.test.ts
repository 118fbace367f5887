// The trip detector: entries into `breached`, sliding windows by count and by time, and its speed.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  contractStatus,
  countsTowards,
  detectTrips,
  HOUR_MS,
  measureContract,
  type ContractSpec,
  type DecisionRecord,
  type Outcome,
} from "@agent-authority/engine";
import { propertyOptions } from "../lattice/property-options.js";

const T0 = Date.UTC(2026, 3, 1);
const record = (at: number, outcome: Outcome, reason_code?: string, would?: Outcome): DecisionRecord => ({
  at,
  outcome,
  ...(reason_code !== undefined ? { reason_code } : {}),
  ...(would !== undefined ? { would_outcome: would } : {}),
});

/** The definition, written plainly: the status after each decision, from the window recomputed. */
function naiveTrips(history: readonly DecisionRecord[], contract: ContractSpec): number[] {
  const out: number[] = [];
  let previous = "not_demonstrated";
  history.forEach((r, i) => {
    const window = history
      .slice(0, i + 1)
      .filter((_, j) =>
        contract.window_decisions != null ? j > i - contract.window_decisions : history[j]!.at > r.at - contract.window_hours! * HOUR_MS,
      );
    const status = contractStatus(window.filter((x) => countsTowards(contract.metric, x)).length, window.length, contract.ceiling);
    if (status === "breached" && previous !== "breached") out.push(i);
    previous = status;
  });
  return out;
}

describe("countsTowards", () => {
  it("reads each metric from the enforce outcome, would_outcome first", () => {
    expect(countsTowards("refusal_rate", record(0, "gated"))).toBe(true);
    expect(countsTowards("refusal_rate", record(0, "allow"))).toBe(false);
    expect(countsTowards("refusal_rate", record(0, "allow", undefined, "exhausted"))).toBe(true);
    expect(countsTowards("deny_rate", record(0, "deny"))).toBe(true);
    expect(countsTowards("deny_rate", record(0, "exhausted"))).toBe(false);
    expect(countsTowards("gated_rate", record(0, "gated"))).toBe(true);
    expect(countsTowards("exhausted_rate", record(0, "exhausted"))).toBe(true);
    expect(countsTowards("out_of_scope_rate", record(0, "deny", "scope.out_of_scope"))).toBe(true);
    expect(countsTowards("out_of_scope_rate", record(0, "deny", "policy.deny"))).toBe(false);
  });
});

describe("detectTrips", () => {
  const contract: ContractSpec = { metric: "deny_rate", ceiling: 0.1, window_decisions: 50 };

  it("reports the entry into breached once, not every breached decision after it", () => {
    const history = Array.from({ length: 100 }, (_, i) => record(T0 + i, i >= 20 && i < 60 ? "deny" : "allow"));
    const trips = detectTrips(history, contract);
    expect(trips).toHaveLength(1);
    expect(trips[0]).toMatchObject({ index: naiveTrips(history, contract)[0], status: "breached" });
    expect(trips[0]!.lower).toBeGreaterThan(0.1);
  });

  it("reports a second trip after the status left breached", () => {
    const phase = (start: number, denies: boolean): DecisionRecord[] =>
      Array.from({ length: 60 }, (_, i) => record(T0 + start + i, denies && i % 2 === 1 ? "deny" : "allow"));
    const history = [...phase(0, true), ...phase(60, false), ...phase(120, true)];
    expect(detectTrips(history, contract).map((t) => t.index)).toEqual(naiveTrips(history, contract));
    expect(detectTrips(history, contract)).toHaveLength(2);
  });

  it("never trips on noise: a few refusals slightly above the ceiling", () => {
    // 5/40 = 12.5% against 10%, the refusals spread out (the first one comes after a few allows:
    // a refusal as the very first decision has the interval 20.7%–100% and trips on its own).
    const history = Array.from({ length: 40 }, (_, i) => record(T0 + i, i % 8 === 7 ? "deny" : "allow"));
    expect(detectTrips(history, { ...contract, window_decisions: 40 })).toEqual([]);
  });

  it("slides a window of hours", () => {
    const hourly: ContractSpec = { metric: "refusal_rate", ceiling: 0.2, window_hours: 1 };
    const history = [
      ...Array.from({ length: 30 }, (_, i) => record(T0 + i * 60_000, "deny")),
      ...Array.from({ length: 200 }, (_, i) => record(T0 + 2 * HOUR_MS + i * 1_000, "allow")),
      ...Array.from({ length: 30 }, (_, i) => record(T0 + 5 * HOUR_MS + i * 1_000, "gated")),
    ];
    expect(detectTrips(history, hourly).map((t) => t.index)).toEqual(naiveTrips(history, hourly));
    expect(detectTrips(history, hourly)).toHaveLength(2);
  });

  it("agrees with the definition on generated histories", () => {
    const outcomes = fc.constantFrom<Outcome>("allow", "allow", "allow", "deny", "gated", "exhausted");
    const historyArb = fc.array(fc.tuple(fc.integer({ min: 0, max: 20 * 60_000 }), outcomes), { maxLength: 120 }).map((steps) => {
      let at = T0;
      return steps.map(([gap, outcome]) => record((at += gap), outcome, outcome === "deny" ? "scope.out_of_scope" : undefined));
    });
    const contractArb = fc
      .record({
        metric: fc.constantFrom("refusal_rate", "deny_rate", "gated_rate", "exhausted_rate", "out_of_scope_rate" as const),
        ceiling: fc.constantFrom(0, 0.05, 0.1, 0.3, 0.5, 1),
        window: fc.oneof(
          fc.integer({ min: 1, max: 60 }).map((n) => ({ window_decisions: n })),
          fc.constantFrom(0.5, 1, 3).map((h) => ({ window_hours: h })),
        ),
      })
      .map(({ metric, ceiling, window }): ContractSpec => ({ metric, ceiling, ...window }));
    fc.assert(
      fc.property(historyArb, contractArb, (history, c) => {
        expect(detectTrips(history, c).map((t) => t.index)).toEqual(naiveTrips(history, c));
      }),
      propertyOptions(),
    );
  });

  it("trips on a first refusal when the ceiling is under the one-decision lower bound", () => {
    expect(detectTrips([record(T0, "deny")], contract).map((t) => t.index)).toEqual([0]);
    expect(detectTrips([record(T0, "deny")], { ...contract, ceiling: 0.21 })).toEqual([]);
  });

  it("refuses a history out of time order and a contract without exactly one window", () => {
    expect(() => detectTrips([record(T0 + 1, "allow"), record(T0, "allow")], contract)).toThrow(RangeError);
    expect(() => detectTrips([], { metric: "deny_rate", ceiling: 0.1 })).toThrow(RangeError);
    expect(() => detectTrips([], { metric: "deny_rate", ceiling: 0.1, window_decisions: 5, window_hours: 1 })).toThrow(RangeError);
  });

  it("replays 1,000,000 decisions in well under two seconds", () => {
    const outcomes: Outcome[] = ["allow", "allow", "allow", "allow", "deny", "allow", "gated", "allow", "exhausted", "allow"];
    const history: DecisionRecord[] = Array.from({ length: 1_000_000 }, (_, i) => ({
      at: T0 + i * 1_000,
      outcome: outcomes[(i * 7) % 10]!,
    }));
    for (const c of [
      { metric: "refusal_rate", ceiling: 0.25, window_decisions: 1_000 },
      { metric: "deny_rate", ceiling: 0.05, window_hours: 24 },
    ] satisfies ContractSpec[]) {
      const started = performance.now();
      detectTrips(history, c);
      expect(performance.now() - started).toBeLessThan(2_000);
    }
  });
});

describe("measureContract", () => {
  it("reads the window ending at now", () => {
    const history = Array.from({ length: 100 }, (_, i) => record(T0 + i * 60_000, i < 50 ? "deny" : "allow"));
    const last40 = measureContract(history, { metric: "deny_rate", ceiling: 0.1, window_decisions: 40 }, T0 + 99 * 60_000);
    expect(last40).toMatchObject({ successes: 0, n: 40, status: "within" });
    const hour = measureContract(history, { metric: "deny_rate", ceiling: 0.1, window_hours: 1 }, T0 + 99 * 60_000);
    expect(hour).toMatchObject({ n: 60, successes: 10, status: "not_demonstrated" });
    expect(measureContract([], { metric: "deny_rate", ceiling: 0.1, window_hours: 1 }, T0)).toMatchObject({
      n: 0,
      rate: null,
      status: "not_demonstrated",
    });
  });
});
