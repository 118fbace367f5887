// Hostile text from the model into the Agents SDK adapter, which reads a call's raw JSON itself: nothing runs undecided, nothing throws.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunContext, tool } from "@openai/agents";
import { z } from "zod";
import { AuthorityClient, TOOL_CALL_LIMITS } from "@agent-authority/sdk";
import { governTools } from "@agent-authority/openai-agents";
import { sendJson, startRecordingServer, type RecordingServer, TEST_SIGNING_KEYS } from "../sdk/recording-server.js";

let server: RecordingServer;
beforeAll(async () => {
  server = await startRecordingServer((request, response) => {
    if (request.url === "/v1/authorize")
      sendJson(response, 200, {
        outcome: "allow",
        ledger_id: "led_1",
        decided_by: null,
        reason_code: "allow",
        reason: "allowed",
        gates: [],
      });
    else sendJson(response, 200, { ledger_id: "led_2", amount_minor: 0 });
  });
});
afterAll(() => server.close());

describe("the Agents SDK adapter against hostile arguments", () => {
  it("decides only a JSON object, runs only what was decided and what the tool accepts, and answers every input", async () => {
    let runs = 0;
    // This server signs nothing; the adapters verify by default against the real server (docs tests).
    const authority = new AuthorityClient({
      baseUrl: server.baseUrl,
      apiKey: "aa_hostile",
      timeoutMs: 2_000,
      attempts: 1,
      signingKeys: TEST_SIGNING_KEYS,
    });
    const [refund] = governTools(
      authority,
      {
        grant: "grt_01h00000000000000000000000",
        namespace: "shop",
        tools: { refund: { amount: (args) => ({ amount_minor: args["amount_minor"], currency: "EUR" }) } },
      },
      [
        tool({
          name: "refund",
          description: "refund",
          parameters: z.object({ amount_minor: z.number().int().min(0) }),
          execute: async () => ++runs,
        }),
      ],
    );
    if (refund?.type !== "function") throw new Error("not a function tool");
    const input = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
      fc
        .record({ amount_minor: fc.oneof(fc.integer({ min: -3, max: 1_000_000 }), fc.double(), fc.string()) }, { requiredKeys: [] })
        .map((value) => JSON.stringify(value)),
    );
    await fc.assert(
      fc.asyncProperty(input, async (text) => {
        const [before, runsBefore] = [server.received.length, runs];
        const output = await refund.invoke(new RunContext(), text);
        let parsed: unknown;
        try {
          parsed = JSON.parse(text === "" ? "{}" : text);
        } catch {
          parsed = undefined;
        }
        const object =
          typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
        const amount = object?.["amount_minor"];
        const describable = object !== undefined && typeof amount === "number" && Number.isSafeInteger(amount) && amount >= 0;
        const decided = server.received.slice(before).some((request) => request.url === "/v1/authorize");
        expect(decided).toBe(describable);
        // The tool runs only under a decision; the framework's own validation may still stop it after one.
        if (!decided) {
          expect(runs).toBe(runsBefore);
          expect(output).toMatchObject({ refused: true, ledger_id: null });
          expect((output as { message: string }).message.length).toBeLessThanOrEqual(TOOL_CALL_LIMITS.refusalCharsMax);
        }
      }),
      { numRuns: 200 },
    );
  });
});
