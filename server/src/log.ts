// Structured logs: one JSON object per line on stdout (stderr for warnings and errors).

export type LogLevel = "debug" | "info" | "warn" | "error";
const RANK: Record<LogLevel | "silent", number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
  /** Whether `log` at this level writes anything; lets a hot path skip building the fields. Absent: yes. */
  enabled?(level: LogLevel): boolean;
}

export function jsonLogger(threshold: LogLevel | "silent", clock: () => number = Date.now): Logger {
  return {
    enabled: (level) => RANK[level] >= RANK[threshold],
    log(level, msg, fields = {}) {
      if (RANK[level] < RANK[threshold]) return;
      const line = JSON.stringify({ time: new Date(clock()).toISOString(), level, msg, ...fields });
      (RANK[level] >= RANK.warn ? process.stderr : process.stdout).write(`${line}\n`);
    },
  };
}
