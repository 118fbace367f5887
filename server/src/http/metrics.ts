// Prometheus metrics: requests by route and status and their latency, counted by hand on every
// request (decision 0912: prom-client costs about twenty times as much per request); what the
// decision path does (decisions by outcome and gate, gated decisions waiting, approval latency,
// breaker trips, ledger records, group-commit batches, database errors; decision 0921), counted by
// hand too; and the process, garbage collection and event-loop metrics of prom-client, collected
// at each scrape.

import { GATES, type GateName, type Outcome } from "@agent-authority/engine";
import { collectDefaultMetrics, Registry } from "prom-client";
import type { DecidedAnswer, ServiceObserver } from "../services/common/index.js";
import { BATCH_SIZE_BUCKETS, DATABASE_ERROR_KINDS, StoreObservations } from "../store/sql/index.js";

/** The process's own metrics (CPU, memory, handles, GC, event-loop delay): one registry per process. */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

const BUCKETS_SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] as const;

interface Histogram {
  readonly counts: number[];
  sum: number;
  count: number;
}

export const METRICS_LIMITS = Object.freeze({
  /** Gated decisions counted at most per scrape: past it the gauge says this many (the count is one bounded query). */
  gatedWaitingCountMax: 100_000,
  /** How long one reading of the gated decisions serves scrapes: /v1/metrics is unauthenticated, so scrapes cannot make the database work more often. */
  gatedWaitingCacheMs: 1_000,
});

/** From a gated decision to its approval, in seconds: a human's pace, from a second to a day. */
const APPROVAL_BUCKETS_SECONDS = [1, 5, 15, 30, 60, 300, 900, 1800, 3600, 14400, 86400] as const;
const OUTCOMES: readonly Outcome[] = ["allow", "deny", "exhausted", "gated"];
/** The gate label: each gate, and `none` when every gate passed. */
const GATE_LABELS: readonly string[] = [...GATES, "none"];
const GATE_INDEX = new Map<GateName | null, number>([...GATES.map((g, i): [GateName, number] => [g, i]), [null, GATES.length]]);
const TRIP_LABELS = [
  ["notify", "observe"],
  ["notify", "armed"],
  ["revoke", "observe"],
  ["revoke", "armed"],
] as const;
const LEDGER_KINDS = ["decision", "settlement"] as const;

/** The gated decisions waiting for an approval, read at scrape time: how many and when the oldest was made. */
export type WaitingReader = () => Promise<{ count: number; oldestAt: number | null }>;

/** Cumulative bucket lines of a histogram kept per bucket (not cumulative). */
function histogramLines(
  name: string,
  bounds: readonly number[],
  perBucket: readonly number[],
  sum: number,
  count: number,
  last: "+Inf" | "none",
): string[] {
  const lines: string[] = [];
  let running = 0;
  bounds.forEach((bound, i) => {
    running += perBucket[i]!;
    lines.push(`${name}_bucket{le="${bound}"} ${running}`);
  });
  if (last === "+Inf") lines.push(`${name}_bucket{le="+Inf"} ${count}`);
  lines.push(`${name}_sum ${sum}`, `${name}_count ${count}`);
  return lines;
}

/** Label values are route templates, status codes and fixed names, never ids, so the series stay bounded. */
export class HttpMetrics implements ServiceObserver {
  readonly #requests = new Map<string, number>();
  readonly #durations = new Map<string, Histogram>();
  readonly #started = Date.now();
  /** Decisions per outcome (row) and gate (column, `none` last). */
  readonly #decisions = new Float64Array(OUTCOMES.length * GATE_LABELS.length);
  readonly #trips = new Float64Array(TRIP_LABELS.length);
  readonly #ledger = new Float64Array(LEDGER_KINDS.length);
  readonly #approvals = { buckets: APPROVAL_BUCKETS_SECONDS.map(() => 0), sum: 0, count: 0 };
  /** What the store counts: the main connection's, and the authorize worker's as it reports it. */
  readonly observations = new StoreObservations();
  #waiting: WaitingReader | undefined;
  #now: () => number = Date.now;
  #lastWaiting: { at: number; value: { count: number; oldestAt: number | null } } | undefined;

  constructor() {
    // Started with the server, so the event-loop and GC observers cover its whole life.
    processMetrics();
  }

  /** Reads the waiting gated decisions at scrape time (the server's store), with the server's clock. */
  watchWaiting(reader: WaitingReader, now: () => number): void {
    this.#waiting = reader;
    this.#now = now;
  }

  decided(answer: DecidedAnswer): void {
    const outcome = answer.outcome === undefined ? -1 : OUTCOMES.indexOf(answer.outcome);
    if (outcome < 0) return;
    this.#decisions[outcome * GATE_LABELS.length + GATE_INDEX.get(answer.gate ?? null)!]! += 1;
    this.#ledger[0]! += 1;
    if (answer.trips === undefined) return;
    for (const trip of answer.trips) {
      const i = TRIP_LABELS.findIndex(([action, mode]) => action === trip.action && mode === trip.mode);
      if (i >= 0) this.#trips[i]! += 1;
    }
  }

  decisionApproved(latencyMs: number): void {
    const seconds = Math.max(0, latencyMs) / 1000;
    const i = APPROVAL_BUCKETS_SECONDS.findIndex((bound) => seconds <= bound);
    if (i >= 0) this.#approvals.buckets[i]! += 1;
    this.#approvals.sum += seconds;
    this.#approvals.count += 1;
  }

  sealed(kind: "settlement"): void {
    this.#ledger[LEDGER_KINDS.indexOf(kind)]! += 1;
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `method="${method}",route="${route}",status="${status}"`;
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
    const routeKey = `method="${method}",route="${route}"`;
    let histogram = this.#durations.get(routeKey);
    if (histogram === undefined) {
      histogram = { counts: BUCKETS_SECONDS.map(() => 0), sum: 0, count: 0 };
      this.#durations.set(routeKey, histogram);
    }
    BUCKETS_SECONDS.forEach((bound, i) => {
      if (seconds <= bound) histogram.counts[i]! += 1;
    });
    histogram.sum += seconds;
    histogram.count += 1;
  }

  /**
   * A recorder for one route, for a hot path: the route's histogram and the counter key of each
   * status are made once, so a request costs two map reads and a few additions, no allocation.
   */
  recorder(method: string, route: string): (status: number, seconds: number) => void {
    const routeKey = `method="${method}",route="${route}"`;
    let histogram = this.#durations.get(routeKey);
    if (histogram === undefined) {
      histogram = { counts: BUCKETS_SECONDS.map(() => 0), sum: 0, count: 0 };
      this.#durations.set(routeKey, histogram);
    }
    const h = histogram;
    const keys = new Map<number, string>();
    const requests = this.#requests;
    return (status, seconds) => {
      let key = keys.get(status);
      if (key === undefined) {
        key = `${routeKey},status="${status}"`;
        keys.set(status, key);
      }
      requests.set(key, (requests.get(key) ?? 0) + 1);
      for (let i = 0; i < BUCKETS_SECONDS.length; i += 1) if (seconds <= BUCKETS_SECONDS[i]!) h.counts[i]! += 1;
      h.sum += seconds;
      h.count += 1;
    };
  }

  /** The text exposition format, version 0.0.4: the HTTP series, the decision path's, then the process's. */
  async render(): Promise<string> {
    return `${this.#renderHttp()}${this.#renderDecisions()}${await this.#renderWaiting()}${this.#renderStore()}${await processMetrics().metrics()}`;
  }

  #renderDecisions(): string {
    const lines: string[] = [
      "# HELP authority_decisions_total Decisions answered by POST /v1/authorize (replays not counted), by outcome and the gate that decided (none: every gate passed).",
      "# TYPE authority_decisions_total counter",
    ];
    for (const [o, outcome] of OUTCOMES.entries()) {
      for (const [g, gate] of GATE_LABELS.entries()) {
        lines.push(`authority_decisions_total{outcome="${outcome}",gate="${gate}"} ${this.#decisions[o * GATE_LABELS.length + g]}`);
      }
    }
    lines.push(
      "# HELP authority_decision_approval_latency_seconds From a gated decision to its approval by a human.",
      "# TYPE authority_decision_approval_latency_seconds histogram",
      ...histogramLines(
        "authority_decision_approval_latency_seconds",
        APPROVAL_BUCKETS_SECONDS,
        this.#approvals.buckets,
        this.#approvals.sum,
        this.#approvals.count,
        "+Inf",
      ),
      "# HELP authority_breaker_trips_total Breaker trips, by the breaker's action and mode (observe: what it would have done).",
      "# TYPE authority_breaker_trips_total counter",
      ...TRIP_LABELS.map(([action, mode], i) => `authority_breaker_trips_total{action="${action}",mode="${mode}"} ${this.#trips[i]}`),
      "# HELP authority_ledger_records_total Records this process sealed into the ledger, by kind.",
      "# TYPE authority_ledger_records_total counter",
      ...LEDGER_KINDS.map((kind, i) => `authority_ledger_records_total{kind="${kind}"} ${this.#ledger[i]}`),
    );
    return `${lines.join("\n")}\n`;
  }

  /** The gated decisions waiting, read from the database at most once per `gatedWaitingCacheMs`; nothing when it cannot be read. */
  async #renderWaiting(): Promise<string> {
    if (this.#waiting === undefined) return "";
    const now = this.#now();
    if (this.#lastWaiting === undefined || now - this.#lastWaiting.at >= METRICS_LIMITS.gatedWaitingCacheMs || now < this.#lastWaiting.at) {
      try {
        this.#lastWaiting = { at: now, value: await this.#waiting() };
      } catch {
        // The database's failure shows in authority_database_errors_total and readiness; the scrape still answers.
        return "";
      }
    }
    const { count, oldestAt } = this.#lastWaiting.value;
    return [
      "# HELP authority_gated_decisions_waiting Gated decisions of live grants that no one has approved yet (counted up to 100000).",
      "# TYPE authority_gated_decisions_waiting gauge",
      `authority_gated_decisions_waiting ${count}`,
      "# HELP authority_gated_decision_oldest_age_seconds How long the oldest waiting gated decision has waited; 0 when none waits.",
      "# TYPE authority_gated_decision_oldest_age_seconds gauge",
      `authority_gated_decision_oldest_age_seconds ${oldestAt === null ? 0 : Math.max(0, (now - oldestAt) / 1000)}`,
      "",
    ].join("\n");
  }

  #renderStore(): string {
    const o = this.observations;
    return [
      "# HELP authority_group_commit_batch_size Transactions committed together by one group commit.",
      "# TYPE authority_group_commit_batch_size histogram",
      ...histogramLines("authority_group_commit_batch_size", BATCH_SIZE_BUCKETS, o.batchBuckets, o.batchSum, o.batchCount, "+Inf"),
      "# HELP authority_database_errors_total Database errors: transactions run again after a transient failure (retried), given up as contention (HTTP 409), or failed.",
      "# TYPE authority_database_errors_total counter",
      ...DATABASE_ERROR_KINDS.map((kind, i) => `authority_database_errors_total{kind="${kind}"} ${o.errors[i]}`),
      "",
    ].join("\n");
  }

  #renderHttp(): string {
    const lines: string[] = [
      "# HELP authority_up Whether the server is serving.",
      "# TYPE authority_up gauge",
      "authority_up 1",
      "# HELP authority_start_time_seconds When the server started, in Unix seconds.",
      "# TYPE authority_start_time_seconds gauge",
      `authority_start_time_seconds ${Math.floor(this.#started / 1000)}`,
      "# HELP authority_http_requests_total HTTP requests answered, by route template and status.",
      "# TYPE authority_http_requests_total counter",
    ];
    for (const [labels, value] of this.#requests) lines.push(`authority_http_requests_total{${labels}} ${value}`);
    lines.push(
      "# HELP authority_http_request_duration_seconds Time to answer an HTTP request.",
      "# TYPE authority_http_request_duration_seconds histogram",
    );
    for (const [labels, h] of this.#durations) {
      for (const [i, bound] of BUCKETS_SECONDS.entries())
        lines.push(`authority_http_request_duration_seconds_bucket{${labels},le="${bound}"} ${h.counts[i]}`);
      lines.push(`authority_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${h.count}`);
      lines.push(`authority_http_request_duration_seconds_sum{${labels}} ${h.sum}`);
      lines.push(`authority_http_request_duration_seconds_count{${labels}} ${h.count}`);
    }
    return `${lines.join("\n")}\n`;
  }
}
