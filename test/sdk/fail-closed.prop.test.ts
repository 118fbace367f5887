// Property: whatever a server answers, authorize never throws for a 2xx or 5xx and never allows without a recorded allow.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthorityClient } from "@agent-authority/sdk";
import { startRecordingServer, type RecordingServer, TEST_SIGNING_KEYS } from "./recording-server.js";

interface Answer {
  readonly status: number;
  readonly body: string;
}

let next: Answer = { status: 200, body: "" };
let server: RecordingServer;

beforeAll(async () => {
  server = await startRecordingServer((_request, response) => {
    response.writeHead(next.status, { "content-type": "application/json" });
    response.end(next.body);
  });
});

afterAll(() => server.close());

const outcome = fc.constantFrom("allow", "deny", "exhausted", "gated", "ALLOW", "permit", "");
const decisionBody = fc.record(
  {
    outcome,
    ledger_id: fc.oneof(fc.constant("led_1"), fc.constant(""), fc.constant(null), fc.integer()),
    gates: fc.anything(),
    reason: fc.anything(),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  decisionBody.map((value) => JSON.stringify(value)),
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.string(),
  decisionBody.map((value) => JSON.stringify(value).slice(0, -1)),
);
const status = fc.oneof(
  fc.constantFrom(200, 201, 204, 500, 502, 503, 504),
  fc.integer({ min: 500, max: 599 }),
  fc.integer({ min: 200, max: 299 }),
);

/** The only answers that may yield `allow`: a 2xx JSON object with outcome `allow` and a non-empty string ledger id. */
function isRecordedAllow(answer: Answer): boolean {
  if (answer.status < 200 || answer.status > 299) return false;
  try {
    const value = JSON.parse(answer.body) as unknown;
    return (
      typeof value === "object" &&
      value !== null &&
      (value as Record<string, unknown>)["outcome"] === "allow" &&
      typeof (value as Record<string, unknown>)["ledger_id"] === "string" &&
      (value as Record<string, unknown>)["ledger_id"] !== ""
    );
  } catch {
    return false;
  }
}

describe("authorize against arbitrary answers", () => {
  it("never throws and never allows without a recorded allow", async () => {
    const client = new AuthorityClient({
      baseUrl: server.baseUrl,
      apiKey: "k",
      attempts: 1,
      timeoutMs: 2_000,
      signingKeys: TEST_SIGNING_KEYS,
    });
    await fc.assert(
      fc.asyncProperty(status, body, async (code, text) => {
        next = { status: code, body: code === 204 ? "" : text };
        const result = await client.authorize({ grant_id: "grt_1", tool: "t" });
        if (result.outcome === "allow") expect(isRecordedAllow(next)).toBe(true);
        if (code >= 500) expect(result).toMatchObject({ outcome: "deny", unavailable: { cause: "server_error" } });
        if (!isRecordedAllow(next) && result.unavailable === null) expect(result.outcome).not.toBe("allow");
      }),
      { numRuns: 150 },
    );
  });
});
