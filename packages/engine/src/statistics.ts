// The statistics of behavioural contracts (docs/breakers.md): the Wilson score interval and the status.

import { Z_95 } from "./limits.js";

export interface Interval {
  readonly lower: number;
  readonly upper: number;
}

export type ContractStatus = "breached" | "within" | "not_demonstrated";

/**
 * The Wilson score interval of a proportion `successes / n` without continuity correction
 * (Newcombe 1998, method 3). With no observation the interval is the whole of [0, 1]; at 0 and at
 * `n` successes the bound on that side is exactly 0 or 1.
 */
export function wilsonInterval(successes: number, n: number, z: number = Z_95): Interval {
  if (!Number.isInteger(n) || n < 0 || !Number.isInteger(successes) || successes < 0 || successes > n) {
    throw new RangeError(`wilsonInterval needs integers 0 ≤ successes ≤ n, got ${successes}/${n}`);
  }
  if (n === 0) return { lower: 0, upper: 1 };
  const p = successes / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator;
  return {
    lower: successes === 0 ? 0 : Math.max(0, centre - half),
    upper: successes === n ? 1 : Math.min(1, centre + half),
  };
}

/**
 * The status of a contract whose ceiling bounds the rate `successes / n`. A breach needs the whole
 * 95% interval above the ceiling; compliance needs it all at or below; anything else, and no
 * decision at all, has not been demonstrated either way.
 */
export function contractStatus(successes: number, n: number, ceiling: number): ContractStatus {
  if (n === 0) return "not_demonstrated";
  return statusOf(wilsonInterval(successes, n), ceiling);
}

/** The status an interval gives against a ceiling. */
export function statusOf(interval: Interval, ceiling: number): ContractStatus {
  if (interval.lower > ceiling) return "breached";
  if (interval.upper <= ceiling) return "within";
  return "not_demonstrated";
}
