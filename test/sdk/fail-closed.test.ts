// The client fails closed: a platform that is down, failing or stalled yields a refusal, never an allow or a throw.
import { afterEach, describe, expect, it } from "vitest";
import { AuthorityClient, AuthorityProblemError, AuthorityUnavailableError, type RequestEvent } from "@agent-authority/sdk";
import { closedPortUrl, sendJson, startRecordingServer, type RecordingServer, TEST_SIGNING_KEYS } from "./recording-server.js";

const apiKey = "aa_test_secret_do_not_print_0123456789";
const action = { grant_id: "grt_01h00000000000000000000000", tool: "payments.refund", amount_minor: 1_500, currency: "EUR" };
const servers: RecordingServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(...args: Parameters<typeof startRecordingServer>): Promise<RecordingServer> {
  const server = await startRecordingServer(...args);
  servers.push(server);
  return server;
}

function client(baseUrl: string, options: Partial<ConstructorParameters<typeof AuthorityClient>[0]> = {}): AuthorityClient {
  return clientOf(baseUrl, options);
}

function clientOf(baseUrl: string, options: Partial<ConstructorParameters<typeof AuthorityClient>[0]> = {}): AuthorityClient {
  // The scripted server signs its decisions and settlements as the real one does; the client verifies them.
  return new AuthorityClient({
    baseUrl,
    apiKey,
    timeoutMs: 2_000,
    attempts: 3,
    retryDelayMs: 10,
    signingKeys: TEST_SIGNING_KEYS,
    ...options,
  });
}

/** The server's answer when its database stayed too busy for the request: nothing was written. */
const CONTENTION = {
  type: "urn:agent-authority:problem:contention",
  title: "the request met contention",
  status: 409,
  code: "contention",
  detail: "nothing was written",
};

/** The two ways the client sends a request (exchange.ts): Node.js's HTTP client by default, or a `fetch` given. */
const SENDERS: [string, Partial<ConstructorParameters<typeof AuthorityClient>[0]>][] = [
  ["Node.js's HTTP client (the default)", {}],
  ["a fetch given", { fetch: globalThis.fetch }],
];

describe.each(SENDERS)("authorize fails closed, sent through %s", (_name, sender) => {
  const client = (baseUrl: string, options: Partial<ConstructorParameters<typeof AuthorityClient>[0]> = {}): AuthorityClient =>
    clientOf(baseUrl, { ...sender, ...options });

  it("refuses when the connection closes in the middle of the body", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": "400" });
      response.write('{"outcome":"allow",');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const result = await client(server.baseUrl, { attempts: 2 }).authorize(action);
    expect(result).toMatchObject({ outcome: "deny", unavailable: { cause: "network", attempts: 2 } });
    expect(server.received).toHaveLength(2);
  });

  it("refuses an answer whose declared length is over the limit without reading it", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": String(9 * 1024 * 1024) });
      response.write("{");
    });
    const result = await client(server.baseUrl, { timeoutMs: 5_000 }).authorize(action);
    expect(result).toMatchObject({ outcome: "deny", unavailable: { cause: "unreadable_response" } });
  });

  it("refuses when nothing listens on the port", async () => {
    const result = await client(await closedPortUrl()).authorize(action);
    expect(result.outcome).toBe("deny");
    expect(result.ledger_id).toBeNull();
    expect(result.unavailable).toMatchObject({ cause: "network", attempts: 3 });
    expect(result.reason).toMatch(/^platform unavailable \(network\)/);
  });

  it("refuses when the server answers 500 on every attempt, after retrying", async () => {
    const server = await serve((_request, response) =>
      sendJson(
        response,
        500,
        { type: "about:blank", title: "the server failed", status: 500, code: "internal_error" },
        "application/problem+json",
      ),
    );
    const result = await client(server.baseUrl).authorize(action);
    expect(result.outcome).toBe("deny");
    expect(result.unavailable).toMatchObject({ cause: "server_error", status: 500, attempts: 3 });
    expect(server.received).toHaveLength(3);
  });

  it("refuses when the server hangs past the timeout", async () => {
    const server = await serve(() => {
      // Never answers.
    });
    const started = Date.now();
    const result = await client(server.baseUrl, { timeoutMs: 150, attempts: 2 }).authorize(action);
    expect(result.outcome).toBe("deny");
    expect(result.unavailable).toMatchObject({ cause: "timeout", attempts: 2 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(server.received).toHaveLength(2);
  });

  it("refuses when the server stalls in the middle of the body", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"outcome":"allow",');
    });
    const result = await client(server.baseUrl, { timeoutMs: 150, attempts: 1 }).authorize(action);
    expect(result).toMatchObject({ outcome: "deny", unavailable: { cause: "timeout" } });
  });

  it("refuses a 200 that is not a recorded decision", async () => {
    const server = await serve((_request, response, index) =>
      index === 0 ? sendJson(response, 200, { outcome: "allow" }) : sendJson(response, 200, { outcome: "maybe", ledger_id: "led_x" }),
    );
    const noLedger = await client(server.baseUrl).authorize(action);
    expect(noLedger).toMatchObject({ outcome: "deny", unavailable: { cause: "unreadable_response" } });
    const unknownOutcome = await client(server.baseUrl).authorize(action);
    expect(unknownOutcome).toMatchObject({ outcome: "deny", unavailable: { cause: "unreadable_response" } });
  });

  it("refuses a redirect rather than following it with the key", async () => {
    const target = await serve((_request, response) =>
      sendJson(response, 200, { outcome: "allow", ledger_id: "led_elsewhere", gates: [], reason: "" }),
    );
    const server = await serve((_request, response) => {
      response.writeHead(307, { location: `${target.baseUrl}/authorize` });
      response.end();
    });
    const result = await client(server.baseUrl, { attempts: 1 }).authorize(action);
    expect(result.outcome).toBe("deny");
    expect(target.received).toHaveLength(0);
  });

  it("refuses when the caller abandons the call, and survives an observer that throws", async () => {
    const controller = new AbortController();
    // Never answers; the caller gives up once the request has arrived.
    const server = await serve(() => controller.abort());
    const throwing = client(server.baseUrl, {
      timeoutMs: 5_000,
      onRequest: () => {
        throw new Error("observer failed");
      },
    });
    const result = await throwing.authorize(action, { signal: controller.signal });
    expect(result).toMatchObject({ outcome: "deny", unavailable: { cause: "aborted" } });
    expect(server.received).toHaveLength(1);
  });

  it("allows on unavailability only with the explicit failOpen option", async () => {
    const url = await closedPortUrl();
    const open = await client(url, { failOpen: true, attempts: 1 }).authorize(action);
    expect(open).toMatchObject({ outcome: "allow", ledger_id: null, unavailable: { cause: "network" } });
    expect(open.reason).toContain("failOpen");
    const perCall = await client(url, { attempts: 1 }).authorize(action, { failOpen: true });
    expect(perCall.outcome).toBe("allow");
    const closedAgain = await client(url, { failOpen: true, attempts: 1 }).authorize(action, { failOpen: false });
    expect(closedAgain.outcome).toBe("deny");
  });

  it("returns the platform's refusal as a value with its ledger id", async () => {
    const server = await serve((_request, response) =>
      sendJson(response, 200, {
        outcome: "exhausted",
        ledger_id: "led_01h00000000000000000000001",
        gates: [{ gate: "budget", passed: false }],
        reason: "amount budget exhausted",
        later_field: 1,
      }),
    );
    const result = await client(server.baseUrl).authorize(action);
    expect(result).toMatchObject({ outcome: "exhausted", ledger_id: "led_01h00000000000000000000001", unavailable: null, later_field: 1 });
    expect(server.received).toHaveLength(1);
  });

  it("refuses after a 409 `contention` on every attempt: retried with the same key, waiting the server's Retry-After", async () => {
    const server = await serve((_request, response) => {
      response.setHeader("retry-after", "1");
      sendJson(response, 409, CONTENTION, "application/problem+json");
    });
    const started = Date.now();
    const result = await client(server.baseUrl, { attempts: 2 }).authorize(action);
    expect(result).toMatchObject({ outcome: "deny", ledger_id: null, unavailable: { cause: "contention", status: 409, attempts: 2 } });
    expect(result.reason).toMatch(/^platform unavailable \(contention\)/);
    expect(server.received).toHaveLength(2);
    expect(new Set(server.received.map((request) => request.headers["idempotency-key"])).size).toBe(1);
    // The second attempt waited the server's second, not the client's 10 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it("waits the Retry-After of a 503 `unavailable` (a failover) and takes the decision of the retry under the same key", async () => {
    const server = await serve((_request, response, index) => {
      if (index > 0) return sendJson(response, 200, { outcome: "allow", ledger_id: "led_after_failover", gates: [], reason: "ok" });
      response.setHeader("retry-after", "1");
      sendJson(
        response,
        503,
        { type: "urn:agent-authority:problem:unavailable", title: "unavailable", status: 503, code: "unavailable" },
        "application/problem+json",
      );
    });
    const started = Date.now();
    const result = await client(server.baseUrl, { attempts: 2 }).authorize(action);
    expect(result).toMatchObject({ outcome: "allow", ledger_id: "led_after_failover", unavailable: null });
    expect(new Set(server.received.map((request) => request.headers["idempotency-key"])).size).toBe(1);
    // The second attempt waited the server's second, not the client's 10 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it("bounds the wait a hostile Retry-After asks for, and ignores one that is no number of seconds", async () => {
    for (const asked of ["soon", "-5", "Infinity", "1e400", "Wed, 21 Oct 2099 07:28:00 GMT", ""]) {
      const server = await serve((_request, response) => {
        response.setHeader("retry-after", asked);
        sendJson(response, 409, CONTENTION, "application/problem+json");
      });
      const started = Date.now();
      const result = await client(server.baseUrl, { attempts: 2 }).authorize(action);
      expect(result).toMatchObject({ outcome: "deny", unavailable: { cause: "contention", attempts: 2 } });
      // The client's own 10 ms, not the header's.
      expect(Date.now() - started, asked).toBeLessThan(1_000);
    }
    // The same for a 503's Retry-After.
    for (const asked of ["soon", "-5", "Infinity", "1e400", "Wed, 21 Oct 2099 07:28:00 GMT", ""]) {
      const server = await serve((_request, response) => {
        response.setHeader("retry-after", asked);
        sendJson(
          response,
          503,
          { type: "urn:agent-authority:problem:unavailable", title: "unavailable", status: 503, code: "unavailable" },
          "application/problem+json",
        );
      });
      const started = Date.now();
      const result = await client(server.baseUrl, { attempts: 2 }).authorize(action);
      expect(result).toMatchObject({ outcome: "deny", unavailable: { cause: "server_error", status: 503, attempts: 2 } });
      expect(Date.now() - started, asked).toBeLessThan(1_000);
    }
    // A wait of a year is cut to the client's longest wait between attempts (5 s).
    const server = await serve((_request, response) => {
      response.setHeader("retry-after", String(365 * 24 * 3_600));
      sendJson(response, 409, CONTENTION, "application/problem+json");
    });
    const started = Date.now();
    const result = await client(server.baseUrl, { attempts: 2, timeoutMs: 2_000 }).authorize(action);
    expect(result).toMatchObject({ outcome: "deny", unavailable: { cause: "contention", attempts: 2 } });
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(5_000);
    expect(waited).toBeLessThan(8_000);
  }, 20_000);

  it("takes the decision of a retry that follows a 409 `contention`", async () => {
    const server = await serve((_request, response, index) =>
      index === 0
        ? sendJson(response, 409, CONTENTION, "application/problem+json")
        : sendJson(response, 200, { outcome: "allow", ledger_id: "led_after_contention", gates: [], reason: "ok" }),
    );
    const result = await client(server.baseUrl).authorize(action);
    expect(result).toMatchObject({ outcome: "allow", ledger_id: "led_after_contention", unavailable: null });
    expect(server.received).toHaveLength(2);
  });

  it("throws typed problem details for a 4xx and does not retry it", async () => {
    const problem = {
      type: "urn:agent-authority:problem:unauthenticated",
      title: "a valid API key is required",
      status: 401,
      code: "unauthenticated",
    };
    const server = await serve((_request, response) => sendJson(response, 401, problem, "application/problem+json"));
    const failure = await client(server.baseUrl)
      .authorize(action)
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AuthorityProblemError);
    expect(failure).toMatchObject({ status: 401, code: "unauthenticated", problem });
    expect(server.received).toHaveLength(1);
  });
});

describe("retries reuse one Idempotency-Key", () => {
  it("sends the same key on every attempt of one call and a new key for the next call", async () => {
    const server = await serve((_request, response, index) =>
      index < 2
        ? sendJson(response, 503, { status: 503 })
        : sendJson(response, 200, { outcome: "allow", ledger_id: `led_${index}`, gates: [], reason: "ok" }),
    );
    const c = client(server.baseUrl);
    const first = await c.authorize(action);
    expect(first).toMatchObject({ outcome: "allow", ledger_id: "led_2" });
    const keys = server.received.map((request) => request.headers["idempotency-key"]);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(server.received.every((request) => request.body === server.received[0]!.body)).toBe(true);
    await c.authorize(action);
    expect(server.received[3]!.headers["idempotency-key"]).not.toBe(keys[0]);
  });

  it("does not spend twice when the first attempt landed but its answer was lost", async () => {
    // The server holds the amount on the first attempt and stalls; the retry with the same key replays it.
    const replies = new Map<string, unknown>();
    let holds = 0;
    const server = await serve((request, response, index) => {
      const key = String(request.headers["idempotency-key"]);
      if (!replies.has(key)) {
        holds += 1;
        replies.set(key, { outcome: "allow", ledger_id: `led_hold_${holds}`, gates: [], reason: "held" });
      }
      if (index === 0) return; // The answer to the first attempt is lost.
      sendJson(response, 200, replies.get(key));
    });
    const result = await client(server.baseUrl, { timeoutMs: 400 }).authorize(action);
    expect(result).toMatchObject({ outcome: "allow", ledger_id: "led_hold_1" });
    expect(server.received.length).toBeGreaterThanOrEqual(2);
    expect(new Set(server.received.map((request) => request.headers["idempotency-key"])).size).toBe(1);
    expect(holds).toBe(1);
  });

  it("presents the client's attestation unless the call names its own", async () => {
    const server = await serve((_request, response) =>
      sendJson(response, 200, { outcome: "allow", ledger_id: "led_1", gates: [], reason: "ok" }),
    );
    const attestation = { manifest_hash: "sha256:aa", content_hash: "sha256:bb", provenance_version: "model-1" };
    const attested = client(server.baseUrl, { attestation });
    await attested.authorize(action);
    await attested.authorize({ ...action, attestation: { ...attestation, provenance_version: "model-2" } });
    expect(JSON.parse(server.received[0]!.body).attestation).toEqual(attestation);
    expect(JSON.parse(server.received[1]!.body).attestation.provenance_version).toBe("model-2");
  });

  it("refuses an answer larger than the response limit without reading it all", async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      const chunk = "x".repeat(1024 * 1024);
      for (let i = 0; i < 9; i += 1) response.write(chunk);
      response.end();
    });
    const result = await client(server.baseUrl, { timeoutMs: 5_000 }).authorize(action);
    expect(result).toMatchObject({ outcome: "deny", unavailable: { cause: "unreadable_response" } });
  });

  it("uses a caller's own key when one is given", async () => {
    const server = await serve((_request, response) =>
      sendJson(response, 200, { outcome: "deny", ledger_id: "led_1", gates: [], reason: "no" }),
    );
    await client(server.baseUrl).authorize(action, { idempotencyKey: "order-4711-refund" });
    expect(server.received[0]!.headers["idempotency-key"]).toBe("order-4711-refund");
  });
});

describe("a fetch given that ignores the attempt's signal", () => {
  it("still refuses at the attempt's timeout, and never takes a cut-off body for a whole one", async () => {
    // A body that starts a decision and never ends, and a fetch that does not tie it to the signal.
    const stalled: typeof globalThis.fetch = async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"outcome":"allow","ledger_id":"led_x",'));
          },
        }),
        { status: 200, headers: { "content-type": "application/json" } },
      );
    const result = await client("http://127.0.0.1:9/v1", { fetch: stalled, timeoutMs: 150, attempts: 1 }).authorize(action);
    expect(result).toMatchObject({ outcome: "deny", unavailable: { cause: "timeout" } });
  });
});

describe("other calls", () => {
  it("throw AuthorityUnavailableError when the platform is down, after the same retries", async () => {
    const failure = await client(await closedPortUrl(), { attempts: 2 })
      .grants.get("grt_x")
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AuthorityUnavailableError);
    expect(failure).toMatchObject({ kind: "network", attempts: 2 });
  });

  it("throw AuthorityUnavailableError of kind `contention` after a 409 `contention` on every attempt; another 409 is a problem, not retried", async () => {
    const server = await serve((request, response) =>
      request.url.endsWith("/revoke")
        ? sendJson(
            response,
            409,
            {
              type: "urn:agent-authority:problem:grant_already_revoked",
              title: "the grant is already revoked",
              status: 409,
              code: "grant_already_revoked",
            },
            "application/problem+json",
          )
        : sendJson(response, 409, CONTENTION, "application/problem+json"),
    );
    const failure = await client(server.baseUrl, { attempts: 3 })
      .grants.get("grt_x")
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AuthorityUnavailableError);
    expect(failure).toMatchObject({ kind: "contention", status: 409, attempts: 3 });
    expect(server.received).toHaveLength(3);
    const revoked = await client(server.baseUrl, { attempts: 3 })
      .grants.revoke("grt_x")
      .catch((error: unknown) => error);
    expect(revoked).toBeInstanceOf(AuthorityProblemError);
    expect(revoked).toMatchObject({ status: 409, code: "grant_already_revoked" });
    expect(server.received).toHaveLength(4);
  });

  it("throw AuthorityProblemError with the problem details, and build one from a body that is not", async () => {
    const problem = {
      type: "urn:agent-authority:problem:delegation_widens",
      title: "the delegated grant would be wider than its parent",
      status: 422,
      code: "delegation_widens",
      widenings: [{ axis: "budget_count" }],
    };
    const server = await serve((_request, response, index) => {
      if (index === 0) sendJson(response, 422, problem, "application/problem+json");
      else {
        response.writeHead(404, { "content-type": "text/plain" });
        response.end("not here");
      }
    });
    const widened = await client(server.baseUrl)
      .grants.delegate("grt_parent", { agent_id: "agt_child" })
      .catch((error: unknown) => error);
    expect(widened).toMatchObject({ status: 422, code: "delegation_widens", problem: { widenings: [{ axis: "budget_count" }] } });
    const plain = await client(server.baseUrl)
      .grants.get("grt_missing")
      .catch((error: unknown) => error);
    expect(plain).toBeInstanceOf(AuthorityProblemError);
    expect(plain).toMatchObject({ status: 404, problem: { type: "about:blank", status: 404 } });
  });

  it("send Bearer by default, x-api-key on the breaker paths, and content-type on POST", async () => {
    const server = await serve((_request, response) => sendJson(response, 200, {}));
    const c = client(server.baseUrl);
    await c.grants.get("grt_a");
    await c.breakers.arm("brk_a", { basis: "reviewed the 90-day replay", expecting_trips: 2 });
    await c.breakers.counterfactual("agt_a", { breaker_id: "brk_a" });
    const [grant, arm, counterfactual] = server.received;
    expect(grant!.headers["authorization"]).toBe(`Bearer ${apiKey}`);
    expect(grant!.headers["x-api-key"]).toBeUndefined();
    expect(grant!.headers["idempotency-key"]).toBeUndefined();
    expect(arm).toMatchObject({ method: "POST", url: "/v1/breakers/brk_a/arm" });
    expect(arm!.headers["x-api-key"]).toBe(apiKey);
    expect(arm!.headers["authorization"]).toBeUndefined();
    expect(arm!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(arm!.body)).toEqual({ basis: "reviewed the 90-day replay", expecting_trips: 2 });
    expect(counterfactual!.url).toBe("/v1/agents/agt_a/breakers/counterfactual?breaker_id=brk_a");
    expect(counterfactual!.headers["x-api-key"]).toBe(apiKey);
  });

  it("send x-api-key everywhere when asked, and encode ids as one path segment", async () => {
    const server = await serve((_request, response) => sendJson(response, 200, {}));
    await client(server.baseUrl, { keyHeader: "x-api-key" }).grants.get("../keys");
    expect(server.received[0]!.url).toBe("/v1/grants/..%2Fkeys");
    expect(server.received[0]!.headers["x-api-key"]).toBe(apiKey);
  });
});

describe("the key is never logged", () => {
  it("appears in no request event, no error and no printed client", async () => {
    const { inspect } = await import("node:util");
    const events: RequestEvent[] = [];
    const server = await serve((_request, response, index) =>
      index === 0
        ? sendJson(response, 500, {})
        : sendJson(response, 403, { type: "t", title: "forbidden", status: 403, code: "forbidden" }),
    );
    const c = client(server.baseUrl, { onRequest: (event) => events.push(event) });
    const failure = await c.keys.list().catch((error: unknown) => error);
    const down = await client(await closedPortUrl(), { onRequest: (event) => events.push(event), attempts: 1 }).authorize(action);
    expect(events.map((event) => event.result)).toEqual(["response", "response", "network"]);
    const printed = [
      JSON.stringify(events),
      inspect(failure, { depth: 10 }),
      String(failure),
      JSON.stringify(down),
      inspect(c, { depth: 10, showHidden: true }),
      JSON.stringify(c),
    ];
    for (const text of printed) expect(text).not.toContain(apiKey);
  });

  it("refuses programmer errors at construction", () => {
    expect(() => new AuthorityClient({ baseUrl: "http://127.0.0.1:8080", apiKey })).toThrow(/\/v1/);
    expect(() => new AuthorityClient({ baseUrl: "http://user:pw@127.0.0.1:8080/v1", apiKey })).toThrow(/credentials/);
    expect(() => new AuthorityClient({ baseUrl: "http://127.0.0.1:8080/v1", apiKey: "" })).toThrow(/apiKey/);
    expect(() => new AuthorityClient({ baseUrl: "http://127.0.0.1:8080/v1", apiKey, attempts: 0 })).toThrow(/attempts/);
  });
});
