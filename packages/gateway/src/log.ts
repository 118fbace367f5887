// Structured log lines on stderr: stdout belongs to the MCP client when the gateway speaks stdio.

export type LogLevel = "info" | "warn" | "error";

export interface Log {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** One JSON object per line, with the time, the level and the message first. */
export function jsonLog(write: (line: string) => void, now: () => Date = () => new Date()): Log {
  const emit =
    (level: LogLevel) =>
    (message: string, fields: Record<string, unknown> = {}): void => {
      write(`${JSON.stringify({ time: now().toISOString(), level, msg: message, ...fields })}\n`);
    };
  return { info: emit("info"), warn: emit("warn"), error: emit("error") };
}
