// Contract metrics over a decision history, and the trip detector that replays it in one pass.

import { HOUR_MS } from "./limits.js";
import { statusOf, wilsonInterval, type ContractStatus } from "./statistics.js";
import type { Outcome } from "./types.js";

export type ContractMetric = "refusal_rate" | "deny_rate" | "gated_rate" | "exhausted_rate" | "out_of_scope_rate";

export const CONTRACT_METRICS: readonly ContractMetric[] = Object.freeze([
  "refusal_rate",
  "deny_rate",
  "gated_rate",
  "exhausted_rate",
  "out_of_scope_rate",
]);

/** What a contract states; exactly one of the two windows is set. */
export interface ContractSpec {
  readonly metric: ContractMetric;
  /** A fraction in [0, 1]. */
  readonly ceiling: number;
  /** The last N decisions. */
  readonly window_decisions?: number | null;
  /** The decisions of the last H hours, up to and including the one just made. */
  readonly window_hours?: number | null;
}

/** One decision of an agent, as the contract reads it; a history is in order of `at`. */
export interface DecisionRecord {
  readonly at: number;
  readonly outcome: Outcome;
  /** In `observe`, what enforce would have said; the contract reads this one when present. */
  readonly would_outcome?: Outcome | null;
  readonly reason_code?: string | null;
}

/** The contract's reading of a window. */
export interface ContractMeasure {
  readonly successes: number;
  readonly n: number;
  readonly rate: number | null;
  readonly lower: number;
  readonly upper: number;
  readonly status: ContractStatus;
}

/** One entry into `breached`. */
export interface Trip extends ContractMeasure {
  /** The position of the decision in the history after which the contract entered `breached`. */
  readonly index: number;
  readonly at: number;
}

/**
 * Whether a decision counts towards a metric. The outcome read is what enforce said or would have
 * said, so a grant observed before promotion is measured as it will behave.
 */
export function countsTowards(metric: ContractMetric, record: DecisionRecord): boolean {
  const outcome = record.would_outcome ?? record.outcome;
  switch (metric) {
    case "refusal_rate":
      return outcome !== "allow";
    case "deny_rate":
      return outcome === "deny";
    case "gated_rate":
      return outcome === "gated";
    case "exhausted_rate":
      return outcome === "exhausted";
    case "out_of_scope_rate":
      return outcome === "deny" && record.reason_code === "scope.out_of_scope";
  }
}

/** The contract's window, checked: a positive safe integer count or a positive number of hours. */
function windowOf(contract: ContractSpec): { kind: "decisions"; size: number } | { kind: "hours"; spanMs: number } {
  const decisions = contract.window_decisions ?? null;
  const hours = contract.window_hours ?? null;
  if ((decisions === null) === (hours === null))
    throw new RangeError("a contract has exactly one of `window_decisions` and `window_hours`");
  if (decisions !== null) {
    if (!Number.isSafeInteger(decisions) || decisions < 1) throw new RangeError("`window_decisions` must be a positive integer");
    return { kind: "decisions", size: decisions };
  }
  if (!(typeof hours === "number" && Number.isFinite(hours) && hours > 0)) throw new RangeError("`window_hours` must be a positive number");
  return { kind: "hours", spanMs: hours * HOUR_MS };
}

function measure(successes: number, n: number, ceiling: number): ContractMeasure {
  const interval = wilsonInterval(successes, n);
  return {
    successes,
    n,
    rate: n === 0 ? null : successes / n,
    ...interval,
    status: n === 0 ? "not_demonstrated" : statusOf(interval, ceiling),
  };
}

/**
 * Walks a history in order and reports every entry into `breached`, evaluated after each decision:
 * a run of breached decisions is one trip, and a new trip needs the status to leave `breached`
 * first. One pass with a sliding window: O(n) time, O(1) memory beyond the answer.
 */
export function detectTrips(history: readonly DecisionRecord[], contract: ContractSpec): Trip[] {
  const window = windowOf(contract);
  const trips: Trip[] = [];
  let tail = 0;
  let successes = 0;
  let breached = false;
  for (let i = 0; i < history.length; i += 1) {
    const record = history[i]!;
    if (i > 0 && record.at < history[i - 1]!.at) throw new RangeError(`the history is not in order of time at index ${i}`);
    if (countsTowards(contract.metric, record)) successes += 1;
    // Slide the window's tail past decisions that no longer belong to it.
    while (window.kind === "decisions" ? i - tail + 1 > window.size : history[tail]!.at <= record.at - window.spanMs) {
      if (countsTowards(contract.metric, history[tail]!)) successes -= 1;
      tail += 1;
    }
    const n = i - tail + 1;
    const now = fastStatus(successes, n, contract.ceiling);
    if (now === "breached" && !breached) trips.push({ index: i, at: record.at, ...measure(successes, n, contract.ceiling) });
    breached = now === "breached";
  }
  return trips;
}

/** The status alone, without building an object: the detector's inner loop. */
function fastStatus(successes: number, n: number, ceiling: number): ContractStatus {
  return statusOf(wilsonInterval(successes, n), ceiling);
}

/** The contract's reading at `now`: the window ending at `now` (or the last N decisions up to it). */
export function measureContract(history: readonly DecisionRecord[], contract: ContractSpec, now: number): ContractMeasure {
  const window = windowOf(contract);
  let end = history.length;
  while (end > 0 && history[end - 1]!.at > now) end -= 1;
  let start = 0;
  if (window.kind === "decisions") start = Math.max(0, end - window.size);
  else while (start < end && history[start]!.at <= now - window.spanMs) start += 1;
  let successes = 0;
  for (let i = start; i < end; i += 1) if (countsTowards(contract.metric, history[i]!)) successes += 1;
  return measure(successes, end - start, contract.ceiling);
}
