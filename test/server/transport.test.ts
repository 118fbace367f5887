// The transport bounds at their edge, with a real socket: a client that sends its headers too
// slowly is cut off once the configured headers timeout has passed, and one just in time is served.
// The timeout is configured short here so the test stays short; the default is 10 s.

import { connect } from "node:net";
import { loadConfig, TRANSPORT_LIMITS } from "@agent-authority/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./http-harness.js";
import { forEachStore } from "./targets.js";

const HEADERS_TIMEOUT_MS = 400;
/** How far past the timeout a cut may come: the server's checking interval, with room for a busy machine. */
const CUT_LAG_MS_MAX = 5_000;

interface SlowClient { readonly answer: string; readonly closedAfterMs: number }

/** Sends a request line, then one header line every `dripMs` for `lines` lines, then ends the headers. */
function slowClient(url: URL, dripMs: number, lines: number): Promise<SlowClient> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(Number(url.port), url.hostname);
    let answer = "";
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => { answer += chunk; });
    socket.on("error", reject);
    socket.on("close", () => {
      clearInterval(timer);
      resolve({ answer, closedAfterMs: performance.now() - started });
    });
    socket.write("GET /v1/health HTTP/1.1\r\nHost: authority\r\n");
    timer = setInterval(() => {
      if (socket.destroyed) return;
      if (sent < lines) {
        sent += 1;
        socket.write(`X-Slow-${sent}: a\r\n`);
      } else {
        clearInterval(timer);
        socket.write("Connection: close\r\n\r\n");
      }
    }, dripMs);
  });
}

forEachStore("transport bounds", (target) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(target, { headersTimeoutMs: HEADERS_TIMEOUT_MS });
  });
  afterAll(async () => {
    await t?.close();
  });

  describe("headers timeout", () => {
    it("cuts a client whose headers are still coming when the timeout passes, and not before", async () => {
      const slow = await slowClient(new URL(t.baseUrl), 50, 1_000);
      expect(slow.answer).toMatch(/^HTTP\/1\.1 408/);
      expect(slow.closedAfterMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS);
      expect(slow.closedAfterMs).toBeLessThan(HEADERS_TIMEOUT_MS + CUT_LAG_MS_MAX);
    });

    it("serves a client whose headers arrive in time", async () => {
      const prompt = await slowClient(new URL(t.baseUrl), 20, 3);
      expect(prompt.answer).toMatch(/^HTTP\/1\.1 200/);
    });
  });
});

describe("transport defaults", () => {
  it("are the documented ones: headers within 10 s, the whole request within 30 s", () => {
    const config = loadConfig({});
    expect(config.headersTimeoutMs).toBe(10_000);
    expect(config.requestTimeoutMs).toBe(30_000);
    expect(TRANSPORT_LIMITS.headersTimeoutMsDefault).toBe(10_000);
    expect(loadConfig({ AUTHORITY_HEADERS_TIMEOUT_MS: "2500" }).headersTimeoutMs).toBe(2_500);
    expect(() => loadConfig({ AUTHORITY_HEADERS_TIMEOUT_MS: "99" })).toThrow(/AUTHORITY_HEADERS_TIMEOUT_MS/);
  });
});
