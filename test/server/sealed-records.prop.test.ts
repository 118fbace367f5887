// The decoders of sealed records against random damage: any mutation of a genuine decision or
// settlement (a member replaced by any JSON value or removed, at the top or inside, the text cut or
// spliced) is either decoded to what the mutated record says, the genuine value when the JSON is the
// same, or refused with a SealedRecordError naming the record; never anything untyped (decision 1821).

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sealedRow } from "../../server/src/services/seal/index.js";
import { abandonmentDetail, decisionRecord, SealedRecordError, settlementRecord } from "../../server/src/services/seal/index.js";
import type { LedgerRow } from "../../server/src/store/decisions/index.js";

const T0 = 1_790_000_000_000;
const decisionRow = sealedRow(
  {
    id: "led_01m8j9h2et033wj65bqek0fn24",
    tree_id: "grt_01m8j9h2etx1qsj0qypx1ne6d6",
    kind: "decision",
    grant_id: "grt_01m8j9h2etx1qsj0qypx1ne6d6",
    agent_id: "agt_01m8j9h2etx1qsj0qypx1ne6d7",
    outcome: "allow",
    created_at: T0,
    body: {
      request: {
        grant_id: "grt_01m8j9h2etx1qsj0qypx1ne6d6",
        tool: "payments.send",
        amount_minor: 600,
        currency: "EUR",
        args: { to: "acme", lines: [1, 2] },
        context: { clean: true },
        attestation: { manifest_hash: "sha256:a", content_hash: "sha256:b", provenance_version: "1" },
      },
      key_id: "key_1",
      would_outcome: null,
      mode: "enforce",
      decided_by: null,
      reason_code: "decision.allow",
      reason: "every gate passed",
      gates: [
        { gate: "grant", result: "pass", code: "grant.ok", reason: "found" },
        { gate: "status", result: "pass", code: "status.ok", reason: "active", grant_id: "grt_01m8j9h2etx1qsj0qypx1ne6d6" },
      ],
      residual: null,
      approver: null,
      approval_id: null,
      approval_status: null,
      certificate_id: "crt_1",
      counted: true,
      chain: ["grt_01m8j9h2etx1qsj0qypx1ne6d6"],
      holds: [{ grant_id: "grt_01m8j9h2etx1qsj0qypx1ne6d6", amount_minor: 600, currency: "EUR", expires_at: T0 + 3_600_000 }],
    },
  },
  null,
);
const settlementRow = sealedRow(
  {
    id: "led_01m8j9h2et033wj65bqek0fn25",
    tree_id: decisionRow.tree_id,
    kind: "settlement",
    grant_id: decisionRow.grant_id,
    agent_id: decisionRow.agent_id,
    outcome: null,
    created_at: T0 + 1,
    body: {
      decision_ledger_id: decisionRow.id,
      amount_minor: 500,
      held_minor: 600,
      released_minor: 100,
      currency: "EUR",
      settled_by: "ops",
      key_id: "key_1",
      grants: [decisionRow.grant_id],
    },
  },
  { seq: 1, hash: decisionRow.hash },
);

type Json = unknown;

/** The paths of every member and element of `value`, the top excluded. */
function pathsOf(value: Json, at: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== "object") return [];
  const keys: (string | number)[] = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return keys.flatMap((k) => [[...at, k], ...pathsOf((value as Record<string | number, Json>)[k], [...at, k])]);
}

/** `value` with the member at `path` replaced (`undefined`: removed). */
function edited(value: Json, path: readonly (string | number)[], replacement: Json | undefined): Json {
  const copy = structuredClone(value) as Record<string | number, Json>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, Json>;
  const last = path[path.length - 1]!;
  if (replacement === undefined) {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else parent[last] = replacement;
  return copy;
}

/** A mutation of `text`: a member replaced or removed, the text cut, or characters spliced in. */
function mutation(text: string): fc.Arbitrary<string> {
  const value = JSON.parse(text) as Json;
  const paths = pathsOf(value);
  return fc.oneof(
    fc
      .tuple(fc.constantFrom(...paths), fc.option(fc.jsonValue(), { nil: undefined }))
      .map(([path, v]) => JSON.stringify(edited(value, path, v))),
    fc.nat(text.length).map((n) => text.slice(0, n)),
    fc.tuple(fc.nat(text.length), fc.string({ maxLength: 4 })).map(([n, s]) => text.slice(0, n) + s + text.slice(n)),
  );
}

/** Decodes, answering the value or the SealedRecordError; anything else thrown fails the property. */
function attempt<T>(decode: () => T): T | SealedRecordError {
  try {
    return decode();
  } catch (error) {
    if (error instanceof SealedRecordError) return error;
    throw error;
  }
}

function law(row: LedgerRow, decode: (row: LedgerRow) => Record<string, unknown>): void {
  const genuine = decode(row);
  fc.assert(
    fc.property(mutation(row.record), (text) => {
      const result = attempt(() => decode({ ...row, record: text }));
      if (result instanceof SealedRecordError) {
        expect(result.record).toContain(row.id);
        expect(result.message).toContain(`\`${result.field}\``);
        return;
      }
      const parsed = JSON.parse(text) as Record<string, unknown>;
      // What is decoded is what the mutated record says, member for member.
      for (const [name, member] of Object.entries(result)) {
        if (name === "sealed" || name === "request" || name === "gates" || name === "holds") continue;
        expect(member).toEqual(parsed[name]);
      }
      if (JSON.stringify(parsed) === JSON.stringify(JSON.parse(row.record))) expect(result).toEqual(genuine);
    }),
    { numRuns: 2_000 },
  );
}

describe("sealed record decoders under random damage", () => {
  it("a decision is decoded as it says, or refused with a SealedRecordError", () => {
    law(decisionRow, (row) => ({ ...decisionRecord(row) }));
  });

  it("a settlement is decoded as it says, or refused with a SealedRecordError", () => {
    law(settlementRow, (row) => ({ ...settlementRecord(row) }));
  });

  it("a decision's holds, request and gates decode to what the record holds", () => {
    const decoded = decisionRecord(decisionRow);
    expect(decoded.holds).toEqual([{ grant_id: decisionRow.grant_id, amount_minor: 600, currency: "EUR", expires_at: T0 + 3_600_000 }]);
    expect(decoded.request).toMatchObject({
      tool: "payments.send",
      amount_minor: 600,
      currency: "EUR",
      args: { to: "acme", lines: [1, 2] },
    });
    expect(decoded.gates.map((g) => [g.gate, g.result, g.grant_id])).toEqual([
      ["grant", "pass", undefined],
      ["status", "pass", decisionRow.grant_id],
    ]);
  });

  it("a record of the other kind is refused by each decoder", () => {
    expect(() => settlementRecord(decisionRow)).toThrow(SealedRecordError);
    expect(() => decisionRecord(settlementRow)).toThrow(SealedRecordError);
  });

  it("an abandonment's detail with a reason outside its words or a wait that is not a count is refused", () => {
    const event = {
      id: "evt_1",
      grant_id: "grt_1",
      kind: "approval_wait_abandoned" as const,
      actor: "agent",
      at: T0,
      detail: { ledger_id: "led_1", reason: "timeout", waited_ms: 5 },
    };
    expect(abandonmentDetail(event)).toEqual({ ledger_id: "led_1", reason: "timeout", waited_ms: 5 });
    for (const detail of [
      { ...event.detail, reason: "bored" },
      { ...event.detail, waited_ms: "5" },
      { reason: "timeout", waited_ms: 5 },
    ]) {
      const error = attempt(() => abandonmentDetail({ ...event, detail }));
      expect(error).toBeInstanceOf(SealedRecordError);
      expect((error as SealedRecordError).record).toContain("evt_1");
    }
  });
});
