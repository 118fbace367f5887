// The gates of a decision as JSON, twice: for the answer, each gate's members in the engine's order
// (`gate`, `result`, `code`, `reason`, then `outcome` and `grant_id` when present), and for the
// sealed record, in canonical order (sorted by code unit). Both are written on every decision, and
// the gates of one agent's decisions repeat (the same reasons, naming the same ids), so each gate's
// two texts are kept by its reason and used again only when every member is the same.

import type { GateResult } from "@agent-authority/engine";

/** Every member of a gate, in canonical (code unit) order. */
const GATE_MEMBERS = ["code", "gate", "grant_id", "outcome", "reason", "result"] as const satisfies readonly (keyof GateResult)[];
/** Compiles only while GATE_MEMBERS names every member of GateResult: a new member must be written, and compared, too. */
const everyGateMember: Exclude<keyof GateResult, (typeof GATE_MEMBERS)[number]> extends never ? true : never = true;
void everyGateMember;

interface GateTexts {
  readonly gate: GateResult;
  readonly answer: string;
  readonly sealed: string;
}

/** Kept texts by reason; when full, it starts over. */
const KEPT = new Map<string, GateTexts>();
const KEPT_MAX = 4_096;
/** A longer reason (one that quotes much of a request) is written every time, never kept: the kept texts stay within a few MiB. */
const KEPT_REASON_MAX = 512;

function sameGate(a: GateResult, b: GateResult): boolean {
  return (
    a.reason === b.reason &&
    a.code === b.code &&
    a.gate === b.gate &&
    a.result === b.result &&
    a.outcome === b.outcome &&
    a.grant_id === b.grant_id
  );
}

function written(g: GateResult): GateTexts {
  // A copy in the engine's order: what the answer shows, and what later gates are compared with.
  const gate: GateResult = Object.freeze({
    gate: g.gate,
    result: g.result,
    code: g.code,
    reason: g.reason,
    ...(g.outcome === undefined ? {} : { outcome: g.outcome }),
    ...(g.grant_id === undefined ? {} : { grant_id: g.grant_id }),
  });
  const sealed = JSON.stringify({
    code: g.code,
    gate: g.gate,
    ...(g.grant_id === undefined ? {} : { grant_id: g.grant_id }),
    ...(g.outcome === undefined ? {} : { outcome: g.outcome }),
    reason: g.reason,
    result: g.result,
  });
  return { gate, answer: JSON.stringify(gate), sealed };
}

function textsOf(g: GateResult): GateTexts {
  if (g.reason.length > KEPT_REASON_MAX) return written(g);
  const kept = KEPT.get(g.reason);
  if (kept !== undefined && sameGate(kept.gate, g)) return kept;
  const texts = written(g);
  if (KEPT.size >= KEPT_MAX) KEPT.clear();
  KEPT.set(g.reason, texts);
  return texts;
}

/**
 * The gates as JSON arrays: `answer` is `JSON.stringify` of gates whose members were inserted in the
 * engine's order; `sealed` is their canonical JSON (`canonicalJson`).
 */
export function gateTexts(gates: readonly GateResult[]): { readonly answer: string; readonly sealed: string } {
  let answer = "[";
  let sealed = "[";
  for (let i = 0; i < gates.length; i += 1) {
    const texts = textsOf(gates[i]!);
    answer += i === 0 ? texts.answer : `,${texts.answer}`;
    sealed += i === 0 ? texts.sealed : `,${texts.sealed}`;
  }
  return { answer: `${answer}]`, sealed: `${sealed}]` };
}
