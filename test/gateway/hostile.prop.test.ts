// Hostile input crossing into the gateway: the model's tool arguments and the configuration text.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { actionOf, parseGatewayConfig, spendOf } from "@agent-authority/gateway";

const GRANT = "grt_01jc0000000000000000000000";
const config = parseGatewayConfig(
  `authority:\n  url: http://127.0.0.1:8080/v1\n  key_env: K\n  grant_id: ${GRANT}\nupstreams:\n  pay:\n    command: x\ntools:\n  pay.send:\n    amount: /amount\n    currency: /currency\n    args: {to: /to, note: /meta/note}\n    cost: /structuredContent/cost\n`,
  "gateway.yaml",
);
if (!config.ok) throw new Error(JSON.stringify(config.diagnostics));
const mapping = config.config.tools.get("pay.send")!;

describe("hostile input", () => {
  it("tool arguments: an action is either refused or carries a safe, non-negative amount and a currency code", () => {
    const value = fc.jsonValue();
    const args = fc.record(
      {
        amount: fc.oneof(value, fc.integer(), fc.double()),
        currency: fc.oneof(value, fc.constantFrom("EUR", "eur", "")),
        to: value,
        meta: value,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(args, (callArgs) => {
        const action = actionOf("pay.send", mapping, callArgs as Record<string, unknown>);
        if (!action.ok) return;
        expect(Number.isSafeInteger(action.body.amount_minor) && action.body.amount_minor! >= 0).toBe(true);
        expect(action.body.currency).toMatch(/^[A-Z]{3}$/);
        expect(action.heldMinor).toBe(action.body.amount_minor);
        const spend = spendOf(mapping, action.heldMinor, { structuredContent: { cost: callArgs["amount"] } }, false);
        expect(spend.amountMinor >= 0 && spend.amountMinor <= action.heldMinor).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("configuration text: never throws, and every error has a position inside the file", () => {
    const yamlish = fc.stringMatching(/^[ a-z_:\-[\]{}/&*!|>'"#%@`,.?0-9\n]{0,200}$/);
    fc.assert(
      fc.property(fc.oneof(yamlish, fc.string({ unit: "binary", maxLength: 200 })), (text) => {
        const result = parseGatewayConfig(text, "g.yaml");
        if (result.ok) return;
        const lines = text.split("\n").length;
        for (const d of result.diagnostics) expect(d.line >= 1 && d.line <= lines + 1 && d.column >= 1).toBe(true);
      }),
      { numRuns: 1_000 },
    );
  });
});
