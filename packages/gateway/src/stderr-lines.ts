// An upstream's standard error as JSON log lines: each of its lines is wrapped, bounded, never passed on raw.
import type { Readable } from "node:stream";
import { GATEWAY_LIMITS } from "./limits.js";
import type { Log } from "./log.js";

/**
 * Logs each line `stream` carries as `upstream stderr` with the upstream's name. A line longer than
 * the limit is logged cut (`truncated: true`) and the rest of it, up to its newline, is dropped.
 */
export function wrapStderr(stream: Readable, upstream: string, log: Log): void {
  const max = GATEWAY_LIMITS.upstreamStderrLineCharsMax;
  let pending = "";
  let skipping = false;
  const emit = (line: string, cut: boolean): void => {
    const whole = line.endsWith("\r") ? line.slice(0, -1) : line;
    const truncated = cut || whole.length > max;
    const text = truncated ? whole.slice(0, max) : whole;
    if (text.length > 0 || truncated) log.info("upstream stderr", { upstream, line: text, ...(truncated ? { truncated: true } : {}) });
  };
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    let start = 0;
    for (let newline = chunk.indexOf("\n"); newline !== -1; newline = chunk.indexOf("\n", start)) {
      if (!skipping) emit(pending + chunk.slice(start, newline), false);
      pending = "";
      skipping = false;
      start = newline + 1;
    }
    if (skipping) return;
    pending += chunk.slice(start);
    if (pending.length > max) {
      emit(pending.slice(0, max), true);
      pending = "";
      skipping = true;
    }
  });
  stream.on("end", () => {
    if (!skipping && pending.length > 0) emit(pending, false);
    pending = "";
  });
}
