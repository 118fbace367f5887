// A small server-sent events client for tests: opens GET /v1/events with a key, parses each event
// and comment as it arrives, and can be cut off at any moment, as a real client's network would.

import { request, type IncomingMessage } from "node:http";
import type { Event, Problem } from "@agent-authority/sdk";

export interface SseEvent {
  readonly id: string | undefined;
  readonly event: string | undefined;
  readonly data: Event;
}

export interface SseStream {
  readonly status: number;
  readonly headers: IncomingMessage["headers"];
  readonly events: SseEvent[];
  readonly comments: string[];
  /** The body of a refusal (a problem), when the status is not 200. */
  readonly problem: Problem | undefined;
  /** Resolves once at least `n` events arrived (or rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  waitForComment(text: string, timeoutMs?: number): Promise<void>;
  /** Resolves when the server ended the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

export function openStream(baseUrl: string, key: string, query = "", headers: Record<string, string> = {}): Promise<SseStream> {
  const url = new URL(`${baseUrl}/events${query}`);
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${key}`, accept: "text/event-stream", ...headers } }, (res) => {
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const listeners = new Set<() => void>();
      let buffer = "";
      let problemText = "";
      let endResolve: () => void = () => undefined;
      const ended = new Promise<void>((r) => {
        endResolve = r;
      });
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        if (res.statusCode !== 200) {
          problemText += chunk;
          return;
        }
        buffer += chunk;
        let split: number;
        while ((split = buffer.indexOf("\n\n")) !== -1) {
          const block = buffer.slice(0, split);
          buffer = buffer.slice(split + 2);
          const fields: Record<string, string> = {};
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) comments.push(line.slice(1).trim());
            else {
              const colon = line.indexOf(":");
              fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, "");
            }
          }
          if (fields["data"] !== undefined) events.push({ id: fields["id"], event: fields["event"], data: JSON.parse(fields["data"]) });
        }
        for (const listener of [...listeners]) listener();
      });
      const finish = () => {
        endResolve();
        for (const listener of [...listeners]) listener();
      };
      res.on("end", finish);
      res.on("close", finish);
      res.on("error", finish);
      const until = (check: () => boolean, what: string, timeoutMs: number) =>
        new Promise<void>((ok, fail) => {
          if (check()) return ok();
          const timer = setTimeout(() => {
            listeners.delete(listener);
            fail(new Error(`timed out waiting for ${what}; got ${events.length} events`));
          }, timeoutMs);
          const listener = () => {
            if (!check()) return;
            clearTimeout(timer);
            listeners.delete(listener);
            ok();
          };
          listeners.add(listener);
        });
      const stream: SseStream = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        comments,
        get problem() {
          return problemText === "" ? undefined : JSON.parse(problemText);
        },
        waitFor: (n, timeoutMs = 10_000) => until(() => events.length >= n, `${n} events`, timeoutMs),
        waitForComment: (text, timeoutMs = 10_000) => until(() => comments.includes(text), `comment ${text}`, timeoutMs),
        ended,
        close: () => {
          req.destroy();
          res.destroy();
        },
      };
      if (res.statusCode !== 200) res.on("end", () => resolve(stream));
      else resolve(stream);
    });
    req.on("error", reject);
    req.end();
  });
}
