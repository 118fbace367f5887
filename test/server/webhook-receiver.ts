// A real receiving HTTP server for webhook tests: records every request, verifies nothing itself
// (the tests verify with the `standardwebhooks` package, as a receiver would), and can answer
// with any status, hang, or be down.

import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly at: number;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** The status answered; `hang` holds the request open until the receiver closes. */
  mode: { status: number } | "hang";
  /** Requests being answered at this moment, and the most at once so far. */
  readonly inFlight: { now: number; max: number };
  /** How long each answer waits before it is sent, in milliseconds. */
  delayMs: number;
  waitFor(predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const inFlight = { now: 0, max: 0 };
  const held = new Set<() => void>();
  const receiver: Receiver = {
    url: "",
    received,
    mode: { status: 204 },
    inFlight,
    delayMs: 0,
    async waitFor(predicate, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > until) throw new Error(`receiver: timed out with ${received.length} requests`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      for (const release of held) release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      inFlight.now += 1;
      inFlight.max = Math.max(inFlight.max, inFlight.now);
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
      const answer = () => {
        inFlight.now -= 1;
        const mode = receiver.mode;
        if (mode === "hang") return;
        res.statusCode = mode.status;
        res.end();
      };
      if (receiver.mode === "hang") {
        held.add(() => {
          inFlight.now -= 1;
          res.destroy();
        });
        return;
      }
      setTimeout(answer, receiver.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  (receiver as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}
