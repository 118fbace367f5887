// The texts of an authorize decision written without serialising its gates twice: the gates'
// answer and sealed texts (kept per reason and used again only for the same gate), and the answer
// written member by member around them, byte for byte what plain serialisation gives; the
// signature members written as text, byte for byte the members' serialisation; the args' canonical
// text written once for the statement and the sealed request.

import { createHash, randomBytes } from "node:crypto";
import type { Decision, GateResult } from "@agent-authority/engine";
import { SigningKeyring, signedStatement } from "@agent-authority/sdk";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { canonicalJson, openStore, Signer } from "@agent-authority/server";
import { iso } from "../../server/src/services/common/index.js";
import {
  argsCanonicalText,
  decisionAnswerText,
  decisionOutcomeFields,
  decisionStatement,
  gateTexts,
  requestText,
} from "../../server/src/services/decisions/index.js";

const GATES = ["grant", "status", "window", "audience", "certification", "scope", "conditions", "policy", "budget"] as const;
const OUTCOMES = ["allow", "deny", "exhausted", "gated"] as const;

/** A gate as the engine builds one: `gate`, `result`, `code`, `reason`, then `outcome` and `grant_id` when present. */
const gate: fc.Arbitrary<GateResult> = fc
  .record({
    gate: fc.constantFrom(...GATES),
    result: fc.constantFrom("pass", "fail", "skipped", "not_reached" as const),
    code: fc.oneof(fc.constantFrom("scope.covered", "budget.fits"), fc.string({ maxLength: 6 })),
    // A small pool of reasons, so that gates that differ only in another member share one.
    reason: fc.oneof(
      fc.constantFrom(
        "every condition of the chain holds",
        'tool `a"b` is in scope',
        "é \u2028 \\ </script>",
        "x".repeat(512),
        "y".repeat(513),
      ),
      fc.string({ maxLength: 12 }),
    ),
    outcome: fc.option(fc.constantFrom(...OUTCOMES), { nil: undefined }),
    grant_id: fc.option(fc.constantFrom("grt_a", "grt_b"), { nil: undefined }),
  })
  .map(({ gate, result, code, reason, outcome, grant_id }) => ({
    gate,
    result,
    code,
    reason,
    ...(outcome === undefined ? {} : { outcome }),
    ...(grant_id === undefined ? {} : { grant_id }),
  }));

describe("gateTexts", () => {
  it("writes JSON.stringify of the engine's gates for the answer and their canonical JSON for the record, however often a reason comes back", () => {
    fc.assert(
      fc.property(fc.array(gate, { maxLength: 12 }), (gates) => {
        const texts = gateTexts(gates);
        expect(texts.answer).toBe(JSON.stringify(gates));
        expect(texts.sealed).toBe(canonicalJson(gates));
      }),
      { numRuns: 1_000 },
    );
  });
});

describe("decisionAnswerText", () => {
  const decision: fc.Arbitrary<Decision> = fc.record(
    {
      outcome: fc.constantFrom(...OUTCOMES),
      would_outcome: fc.option(fc.constantFrom(...OUTCOMES), { nil: undefined }),
      mode: fc.constantFrom("enforce", "observe" as const),
      decided_by: fc.option(fc.constantFrom(...GATES), { nil: null }),
      reason_code: fc.string({ maxLength: 8 }),
      reason: fc.string({ maxLength: 16 }),
      gates: fc.array(gate, { maxLength: 9 }),
      residual: fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
      approver: fc.option(fc.string({ maxLength: 8 }), { nil: null }),
      approval_id: fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
      counted: fc.boolean(),
      holds: fc.array(
        fc.record({
          grant_id: fc.constantFrom("grt_a", "grt_b"),
          amount_minor: fc.nat(),
          currency: fc.option(fc.constantFrom("EUR"), { nil: null }),
          expires_at: fc.integer({ min: 0, max: 4_102_444_800_000 }),
        }),
        { maxLength: 3 },
      ),
    },
    { requiredKeys: ["outcome", "mode", "decided_by", "reason_code", "reason", "gates", "approver", "counted", "holds"] },
  ) as fc.Arbitrary<Decision>;

  /** The answer as a value, in API order: what the text must be the serialisation of. */
  const answer = (ledgerId: string, d: Decision, now: number) => ({
    ledger_id: ledgerId,
    ...decisionOutcomeFields(d),
    ...(d.approval_id === undefined ? {} : { approval_id: d.approval_id }),
    holds: d.holds.map((h) => ({
      grant_id: h.grant_id,
      amount_minor: h.amount_minor,
      currency: h.currency,
      expires_at: new Date(h.expires_at).toISOString(),
    })),
    decided_at: new Date(now).toISOString(),
  });

  it("is JSON.stringify of the answer's value, the gates written by gateTexts", () => {
    fc.assert(
      fc.property(decision, fc.integer({ min: 0, max: 4_102_444_800_000 }), (d, now) => {
        expect(decisionAnswerText("led_x", d, now, gateTexts(d.gates).answer)).toBe(JSON.stringify(answer("led_x", d, now)));
      }),
      { numRuns: 500 },
    );
  });

  it("ends with the signature when there is one, as JSON.stringify writes it", () => {
    const signature = fc.record({
      v: fc.constant(2 as const),
      alg: fc.constant("EdDSA" as const),
      kid: fc.string({ maxLength: 8 }),
      statement: fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.constant(null))),
      tree_size: fc.integer({ min: 1, max: 256 }),
      leaf_index: fc.nat(255),
      path: fc.array(fc.base64String({ maxLength: 8 }), { maxLength: 8 }),
      root: fc.base64String({ maxLength: 8 }),
      value: fc.base64String({ maxLength: 20 }),
    });
    fc.assert(
      fc.property(decision, fc.integer({ min: 0, max: 4_102_444_800_000 }), signature, (d, now, sig) => {
        const text = decisionAnswerText("led_y", d, now, gateTexts(d.gates).answer, JSON.stringify(sig));
        expect(text).toBe(JSON.stringify({ ...answer("led_y", d, now), signature: sig }));
      }),
      { numRuns: 300 },
    );
  });
});

describe("decisionStatement", () => {
  // The signer writes a statement with JSON.stringify, trusting its members to be in canonical
  // order already (decision 1901): that order is the one the verifier's canonical JSON gives.
  const text = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('a"b\\c', "é \u2028 </script>", "\ud800", "~"));
  const body = fc.record(
    {
      grant_id: text,
      tool: text,
      amount_minor: fc.integer({ min: -1, max: Number.MAX_SAFE_INTEGER }),
      currency: text,
      args: fc.jsonValue({ maxDepth: 3 }),
      nonce: text,
    },
    { requiredKeys: ["grant_id", "tool"] },
  );
  it("is written by JSON.stringify exactly as its canonical JSON, whatever the request carries", () => {
    fc.assert(
      fc.property(body, text, fc.constantFrom("allow", "deny", "gated"), fc.integer({ min: 0, max: 4e12 }), (request, id, outcome, now) => {
        const statement = decisionStatement(`led_${id}`, outcome, `agt_${id}`, request as never, now);
        expect(JSON.stringify(statement)).toBe(canonicalJson(statement));
      }),
      { numRuns: 1_000 },
    );
  });

  // A request's members in any order, with members the statement does not carry and names that
  // canonical JSON writes apart (array indices, `__proto__`).
  const anyOrder = fc
    .tuple(
      body,
      fc.dictionary(fc.constantFrom("audience", "context", "approval_id", "10", "9", "__proto__", "é"), fc.jsonValue({ maxDepth: 2 })),
      fc.nat(),
    )
    .map(([request, extra, seed]) => {
      const entries = [...Object.entries(extra), ...Object.entries(request)];
      const out: Record<string, unknown> = {};
      for (let i = 0; entries.length > 0; i += 1) {
        const [name, value] = entries.splice((seed + i * 7) % entries.length, 1)[0]!;
        Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
      }
      return out;
    });

  it("hashes the args' canonical text given, the one the sealed request is written with: canonicalJson of the request", () => {
    fc.assert(
      fc.property(anyOrder, fc.integer({ min: 0, max: 4e12 }), (request, now) => {
        const argsText = argsCanonicalText(request as never);
        expect(argsText).toBe(request["args"] === undefined ? undefined : canonicalJson(request["args"]));
        const statement = decisionStatement("led_x", "allow", "agt_x", request as never, now, argsText);
        expect(statement).toEqual(decisionStatement("led_x", "allow", "agt_x", request as never, now));
        expect(statement.args_sha256).toBe(argsText === undefined ? null : createHash("sha256").update(argsText).digest("hex"));
        expect(requestText(request as never, argsText).text).toBe(canonicalJson(request));
      }),
      { numRuns: 1_000 },
    );
  });
});

describe("Signer.signAnswerTexts", () => {
  const signer = new Signer(randomBytes(32));
  beforeAll(async () => {
    const store = openStore(":memory:");
    await store.migrate(Date.now());
    await signer.load(store, Date.now());
    await store.close();
  });

  const value = fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.constantFrom('a"b\\c', "é \u2028 </script>", "\ud800"),
    fc.integer(),
    fc.constant(null),
  );
  const statement = fc.dictionary(fc.string({ maxLength: 6 }), value, { maxKeys: 12 });

  it("writes each member as JSON.stringify writes the member signAnswers gives, for batches of any size", () => {
    fc.assert(
      fc.property(fc.array(statement, { minLength: 1, maxLength: 70 }), (statements) => {
        const texts = signer.signAnswerTexts(statements);
        // Ed25519 is deterministic: the same statements signed again carry the same signature.
        expect(texts).toEqual(signer.signAnswers(statements).map((field) => JSON.stringify(field)));
      }),
      { numRuns: 200 },
    );
    expect(signer.signAnswerTexts([])).toEqual([]);
  });

  it("writes members that the SDK verifies, each alone", async () => {
    const statements = Array.from({ length: 13 }, (_, i) =>
      decisionStatement(`led_${i}`, "allow", "agt_a", { grant_id: "grt_a", tool: "t", args: { i }, nonce: `n${i}` } as never, 1e12),
    );
    const keyring = new SigningKeyring(signer.jwks() as never);
    for (const [i, text] of signer.signAnswerTexts(statements).entries())
      expect(await signedStatement({ signature: JSON.parse(text) }, keyring)).toEqual({ statement: statements[i] });
  });
});

describe("iso", () => {
  it("writes every instant as toISOString does, an instant repeated or not", () => {
    const instant = fc.integer({ min: -8.64e15, max: 8.64e15 });
    fc.assert(
      fc.property(fc.array(fc.oneof(instant, fc.constant(0)), { maxLength: 20 }), (instants) => {
        for (const ms of instants) expect(iso(ms)).toBe(new Date(ms).toISOString());
      }),
    );
    expect(() => iso(Number.NaN)).toThrow(RangeError);
  });
});
