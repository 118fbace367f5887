// The transport bounds at their edge, with a real socket: a client that sends its headers too
// slowly is cut off once the configured headers timeout has passed, and one just in time is served.
// The timeout is configured short here so the test stays short; the default is 10 s. What the HTTP
// parser refuses before any handler (408, 431, a malformed request line) is a problem too, with the
// headers every answer carries (decision 0608).

import { maxHeaderSize } from "node:http";
import { connect } from "node:net";
import { problemTypeUri, PROBLEM_CODES, type ProblemCode } from "@agent-authority/api";
import { loadConfig, TRANSPORT_LIMITS } from "@agent-authority/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./http-harness.js";
import { forEachStore } from "./targets.js";

const HEADERS_TIMEOUT_MS = 400;
/** How far past the timeout a cut may come: the server's checking interval, with room for a busy machine. */
const CUT_LAG_MS_MAX = 5_000;

interface SlowClient {
  readonly answer: string;
  readonly closedAfterMs: number;
}

/** Sends a request line, then one header line every `dripMs` for `lines` lines, then ends the headers. */
function slowClient(url: URL, dripMs: number, lines: number): Promise<SlowClient> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(Number(url.port), url.hostname);
    let answer = "";
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      answer += chunk;
    });
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

/** Writes `request` on a fresh socket and reads until the server closes it. */
function rawExchange(url: URL, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      answer += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(answer));
    socket.write(request);
  });
}

/** Checks that a raw answer is the problem `code`, as problem+json with both safety headers, and closes. */
function expectParserProblem(answer: string, code: ProblemCode): void {
  const { status, title } = PROBLEM_CODES[code];
  const cut = answer.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = answer.slice(0, cut).split("\r\n");
  expect(statusLine, answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
  expect(headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
  expect(headers.get("cache-control")).toBe("no-store");
  expect(headers.get("x-content-type-options")).toBe("nosniff");
  expect(headers.get("connection")).toBe("close");
  const body = answer.slice(cut + 4);
  expect(Number(headers.get("content-length"))).toBe(Buffer.byteLength(body));
  expect(JSON.parse(body)).toEqual({ type: problemTypeUri(code), title, status, code });
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
      expectParserProblem(slow.answer, "request_timeout");
      expect(slow.closedAfterMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS);
      expect(slow.closedAfterMs).toBeLessThan(HEADERS_TIMEOUT_MS + CUT_LAG_MS_MAX);
    });

    it("serves a client whose headers arrive in time", async () => {
      const prompt = await slowClient(new URL(t.baseUrl), 20, 3);
      expect(prompt.answer).toMatch(/^HTTP\/1\.1 200/);
    });
  });

  describe("answers of the HTTP parser", () => {
    it("a malformed request line is 400 `malformed_request`", async () => {
      expectParserProblem(await rawExchange(new URL(t.baseUrl), "NOT A REQUEST\r\n\r\n"), "malformed_request");
    });

    it("a header line that is not a header is 400 `malformed_request`", async () => {
      expectParserProblem(
        await rawExchange(new URL(t.baseUrl), "GET /v1/health HTTP/1.1\r\nHost: authority\r\nno colon here\r\n\r\n"),
        "malformed_request",
      );
    });

    it("headers over Node's limit are 431 `headers_too_large`, and headers just under it are served", async () => {
      const url = new URL(t.baseUrl);
      const head = (size: number) =>
        `GET /v1/health HTTP/1.1\r\nHost: authority\r\nConnection: close\r\nX-Fill: ${"a".repeat(size)}\r\n\r\n`;
      expectParserProblem(await rawExchange(url, head(maxHeaderSize)), "headers_too_large");
      expect(await rawExchange(url, head(maxHeaderSize - 200))).toMatch(/^HTTP\/1\.1 200 /);
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
