// Hostile input to the governor the framework adapters share: a model's arguments and a server's answers never run a tool that was not allowed.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthorityClient, TOOL_CALL_LIMITS, toolGovernor } from "@agent-authority/sdk";
import { sendText, settlementAnswer, startRecordingServer, type RecordingServer, TEST_SIGNING_KEYS } from "./recording-server.js";

const grant = "grt_01h00000000000000000000000";
let server: RecordingServer;
/** What the server answers to the next authorize: a status and a raw body. */
let answer: { status: number; body: string } = { status: 200, body: "{}" };

beforeAll(async () => {
  server = await startRecordingServer((request, response) => {
    const settle = request.url.endsWith("/settle");
    const { status, body } = settle ? { status: 200, body: JSON.stringify(settlementAnswer(request)) } : answer;
    sendText(response, status, body, status >= 400 && status < 500 ? "application/problem+json" : "application/json");
  });
});
afterAll(() => server.close());

function client(): AuthorityClient {
  // The scripted server signs its decisions and settlements as the real one does; the client verifies them.
  return new AuthorityClient({ baseUrl: server.baseUrl, apiKey: "aa_prop", timeoutMs: 2_000, attempts: 1, signingKeys: TEST_SIGNING_KEYS });
}

const allow = JSON.stringify({
  outcome: "allow",
  ledger_id: "led_allow",
  decided_by: null,
  reason_code: "allow",
  reason: "allowed",
  gates: [],
});

describe("the governor against hostile input", () => {
  it("runs a call only when its amount and currency read from the model's arguments are well formed, and sends exactly those", async () => {
    const governor = toolGovernor(client(), {
      grant,
      namespace: "shop",
      tools: {
        pay: {
          amount: (args) => ({ amount_minor: args["amount_minor"], currency: args["currency"] }),
          args: (args) => ({ order: args["order"] }),
        },
      },
    });
    answer = { status: 200, body: allow };
    const amount = fc.oneof(
      fc.integer({ min: -5, max: 5 }),
      fc.maxSafeNat(),
      fc.double(),
      fc.constant(Number.MAX_SAFE_INTEGER + 2),
      fc.string(),
      fc.constant(null),
    );
    const currency = fc.oneof(fc.constantFrom("EUR", "USD", "eur", "EURO", "", "E R"), fc.string({ maxLength: 4 }), fc.integer());
    await fc.assert(
      fc.asyncProperty(
        fc.record({ amount_minor: amount, currency, order: fc.jsonValue({ maxDepth: 3 }) }, { requiredKeys: [] }),
        async (args) => {
          const before = server.received.length;
          let runs = 0;
          const call = await governor.call("pay", args, () => ++runs);
          const wellFormed =
            typeof args.amount_minor === "number" &&
            Number.isSafeInteger(args.amount_minor) &&
            args.amount_minor >= 0 &&
            typeof args.currency === "string" &&
            /^[A-Z]{3}$/.test(args.currency);
          expect(call.ran).toBe(wellFormed);
          expect(runs).toBe(wellFormed ? 1 : 0);
          const sent = server.received.slice(before).filter((request) => request.url === "/v1/authorize");
          if (!wellFormed) {
            expect(sent).toEqual([]);
            return;
          }
          const body = JSON.parse(sent[0]!.body) as Record<string, unknown>;
          expect(body).toMatchObject({ grant_id: grant, tool: "shop.pay", amount_minor: args.amount_minor, currency: args.currency });
        },
      ),
      { numRuns: 150 },
    );
  });

  it("never runs a call on an answer that is not a readable allow naming its record, and never throws", async () => {
    const governor = toolGovernor(client(), { grant, namespace: "shop" });
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
      fc
        .record(
          {
            outcome: fc.constantFrom("allow", "deny", "gated", "exhausted", "ALLOW", "", 1),
            ledger_id: fc.oneof(fc.string({ maxLength: 30 }), fc.constant(null), fc.integer()),
            reason: fc.string({ maxLength: 5000 }),
          },
          { requiredKeys: [] },
        )
        .map((value) => JSON.stringify(value)),
      fc.string({ maxLength: 200 }),
    );
    const status = fc.constantFrom(200, 201, 204, 301, 400, 401, 403, 404, 409, 422, 500, 502, 503);
    await fc.assert(
      fc.asyncProperty(status, body, async (code, text) => {
        answer = { status: code, body: text };
        let runs = 0;
        const call = await governor.call("lookup", { order: "o-1" }, () => ++runs);
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        const record = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
        // Only a 200 is signed (as the real server answers a decision): any other status's allow
        // carries no signature and is refused. A 204 carries no body at all.
        const readableAllow =
          code === 200 && record["outcome"] === "allow" && typeof record["ledger_id"] === "string" && record["ledger_id"] !== "";
        expect(call.ran).toBe(readableAllow);
        expect(runs).toBe(readableAllow ? 1 : 0);
        if (!call.ran) {
          expect(call.refusal.refused).toBe(true);
          expect(call.refusal.message.length).toBeLessThanOrEqual(TOOL_CALL_LIMITS.refusalCharsMax);
        }
      }),
      { numRuns: 150, examples: [[201, JSON.stringify({ outcome: "allow", ledger_id: " " })]] },
    );
  });
});
