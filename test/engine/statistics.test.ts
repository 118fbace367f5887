// The contract statistics of docs/breakers.md against published values and at their edges.
import { describe, expect, it } from "vitest";
import { contractStatus, wilsonInterval, Z_95 } from "@agent-authority/engine";

const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;

describe("wilsonInterval", () => {
  // Newcombe, R. G. (1998). Two-sided confidence intervals for the single proportion: comparison of
  // seven methods. Statistics in Medicine 17, 857-872. Table I, method 3 (score interval without
  // continuity correction). The same values follow from the closed form with z = 1.959964.
  const published: [number, number, number, number][] = [
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0.0, 0.1611],
    [1, 29, 0.0061, 0.1718],
    [29, 29, 0.883, 1.0],
    [0, 1, 0.0, 0.7935],
  ];
  for (const [r, n, lower, upper] of published) {
    it(`reproduces Newcombe (1998) method 3 for ${r}/${n}: ${lower}–${upper}`, () => {
      const interval = wilsonInterval(r, n);
      expect(round4(interval.lower)).toBe(lower);
      expect(round4(interval.upper)).toBe(upper);
    });
  }

  it("uses z = 1.959964 by default", () => {
    expect(Z_95).toBe(1.959964);
    expect(wilsonInterval(81, 263)).toEqual(wilsonInterval(81, 263, 1.959964));
  });

  it("is the whole unit interval with no observation", () => {
    expect(wilsonInterval(0, 0)).toEqual({ lower: 0, upper: 1 });
  });

  it("touches 0 exactly at 0 successes and 1 exactly at n successes", () => {
    expect(wilsonInterval(0, 50).lower).toBe(0);
    expect(wilsonInterval(50, 50).upper).toBe(1);
    expect(wilsonInterval(1, 50).lower).toBeGreaterThan(0);
    expect(wilsonInterval(49, 50).upper).toBeLessThan(1);
  });

  it("always contains the observed rate and stays inside [0, 1]", () => {
    for (let n = 1; n <= 60; n += 1) {
      for (let r = 0; r <= n; r += 1) {
        const { lower, upper } = wilsonInterval(r, n);
        expect(lower).toBeGreaterThanOrEqual(0);
        expect(upper).toBeLessThanOrEqual(1);
        expect(lower).toBeLessThanOrEqual(r / n);
        expect(upper).toBeGreaterThanOrEqual(r / n);
      }
    }
  });

  it("refuses counts that are not a proportion", () => {
    expect(() => wilsonInterval(3, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(-1, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(1.5, 2)).toThrow(RangeError);
  });
});

describe("contractStatus", () => {
  it("is not demonstrated for forty decisions measured slightly above the ceiling", () => {
    // 5/40 = 12.5% against a 10% ceiling: the interval 5.46%–26.11% straddles it.
    expect(contractStatus(5, 40, 0.1)).toBe("not_demonstrated");
    expect(contractStatus(3, 40, 0.05)).toBe("not_demonstrated");
  });

  it("is breached only when the whole interval lies above the ceiling", () => {
    // 81/263: 25.53%–36.62%.
    expect(contractStatus(81, 263, 0.25)).toBe("breached");
    expect(contractStatus(81, 263, 0.2553)).toBe("not_demonstrated");
    expect(contractStatus(1000, 4000, 0.2)).toBe("breached");
  });

  it("is within when the whole interval lies at or below the ceiling", () => {
    expect(contractStatus(81, 263, 0.37)).toBe("within");
    expect(contractStatus(0, 20, 0.17)).toBe("within");
    expect(contractStatus(0, 20, 0.16)).toBe("not_demonstrated");
  });

  it("is not demonstrated with no decision, whatever the ceiling", () => {
    for (const ceiling of [0, 0.1, 0.5, 1]) expect(contractStatus(0, 0, ceiling)).toBe("not_demonstrated");
  });

  it("handles a ceiling of 0: any observed event is a breach, none is never proof of compliance", () => {
    expect(contractStatus(1, 29, 0)).toBe("breached");
    expect(contractStatus(0, 10_000, 0)).toBe("not_demonstrated");
  });

  it("handles a ceiling of 1: every rate is within it and nothing can be breached", () => {
    expect(contractStatus(29, 29, 1)).toBe("within");
    expect(contractStatus(0, 29, 1)).toBe("within");
  });

  it("handles all and no events", () => {
    expect(contractStatus(29, 29, 0.5)).toBe("breached");
    expect(contractStatus(0, 29, 0.5)).toBe("within");
  });
});
