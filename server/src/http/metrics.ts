// Prometheus metrics: requests by route and status and their latency, counted by hand on every
// request (decision 0912: prom-client costs about twenty times as much per request), and the
// process, garbage collection and event-loop metrics of prom-client, collected at each scrape.

import { collectDefaultMetrics, Registry } from "prom-client";

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

/** Label values are route templates and status codes, never ids, so the series stay bounded. */
export class HttpMetrics {
  readonly #requests = new Map<string, number>();
  readonly #durations = new Map<string, Histogram>();
  readonly #started = Date.now();

  constructor() {
    // Started with the server, so the event-loop and GC observers cover its whole life.
    processMetrics();
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

  /** The text exposition format, version 0.0.4: the HTTP series, then the process's. */
  async render(): Promise<string> {
    return `${this.#renderHttp()}${await processMetrics().metrics()}`;
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
      BUCKETS_SECONDS.forEach((bound, i) => lines.push(`authority_http_request_duration_seconds_bucket{${labels},le="${bound}"} ${h.counts[i]}`));
      lines.push(`authority_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${h.count}`);
      lines.push(`authority_http_request_duration_seconds_sum{${labels}} ${h.sum}`);
      lines.push(`authority_http_request_duration_seconds_count{${labels}} ${h.count}`);
    }
    return `${lines.join("\n")}\n`;
  }
}
