// The decoders of sealed records (decision 1821): a ledger record (a decision or a settlement), the
// detail of a grant event, a family version's body and an instance's parameters, each read through
// its one decoder here, by every reader. A record edited in the database into what the server never
// seals is refused with a SealedRecordError naming the record and the field, never handed on as its
// type: over HTTP the request answers 500 `internal_error` like a damaged row (decision 0350), and the
// server goes on serving.

import { API_LIMITS } from "@agent-authority/api";
import { familyContentHash, type GrantFamilyBody } from "@agent-authority/families";
import type { LedgerRow } from "../../store/decisions/index.js";
import type { GrantEventRecord } from "../../store/core/index.js";

/** The longest sealed text decoded, in UTF-16 code units: a decision seals a request of at most 64 KiB with its gates. */
export const SEALED_CHARS_MAX = 1_048_576;
/** The deepest nesting of a sealed record: its `request` one level below the top, nested as deep as a request body may. */
export const SEALED_DEPTH_MAX = API_LIMITS.requestJsonDepthMax + 1;

/** At most this many characters of a wrong value are quoted in a SealedRecordError. */
const QUOTED_CHARS_MAX = 60;

function quoted(value: unknown): string {
  if (value === undefined) return "absent";
  let text: string;
  try {
    text =
      typeof value === "object" && value !== null
        ? Array.isArray(value)
          ? "an array"
          : "an object"
        : (JSON.stringify(value) ?? String(value));
  } catch {
    text = typeof value;
  }
  return `\`${text.length > QUOTED_CHARS_MAX ? `${text.slice(0, QUOTED_CHARS_MAX)}…` : text}\``;
}

/**
 * A sealed record is not what the server seals: not JSON, too long or too deep, a member missing
 * or of another type. Someone edited the database by hand, or it is damaged; the reader refuses it
 * rather than act on a wrong value. `record` names it (`decision led_…`, `settlement led_…`,
 * `grant event evt_…`, `family version fam_… 2`), `field` the member (`$` for the whole text).
 */
export class SealedRecordError extends Error {
  readonly record: string;
  readonly field: string;

  constructor(record: string, field: string, expected: string, value: unknown, cause?: unknown) {
    super(
      `the sealed record ${record} has \`${field}\` that is not ${expected}: ${quoted(value)}`,
      cause === undefined ? undefined : { cause },
    );
    this.name = "SealedRecordError";
    this.record = record;
    this.field = field;
  }
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Whether `value` nests arrays and objects deeper than `max` (an explicit stack, no recursion). */
function deeperThan(value: unknown, max: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (current === null || typeof current !== "object") continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(current)) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}

/** The JSON object a sealed text holds, within SEALED_CHARS_MAX and SEALED_DEPTH_MAX. */
export function sealedObject(record: string, text: unknown): Json {
  if (typeof text !== "string") throw new SealedRecordError(record, "$", "text", text);
  if (text.length > SEALED_CHARS_MAX)
    throw new SealedRecordError(record, "$", `at most ${SEALED_CHARS_MAX} characters`, `${text.length} characters`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SealedRecordError(record, "$", "JSON", text, error);
  }
  if (!isObject(value)) throw new SealedRecordError(record, "$", "a JSON object", value);
  if (deeperThan(value, SEALED_DEPTH_MAX)) throw new SealedRecordError(record, "$", `nested at most ${SEALED_DEPTH_MAX} levels`, "deeper");
  return value;
}

/** The checked members of one sealed object, each failure naming the record and the member's path. */
class Fields {
  constructor(
    readonly record: string,
    readonly value: Json,
    readonly path = "",
  ) {}

  #name(field: string): string {
    return this.path === "" ? field : `${this.path}.${field}`;
  }

  fail(field: string, expected: string): never {
    throw new SealedRecordError(this.record, this.#name(field), expected, this.value[field]);
  }

  string(field: string): string {
    const v = this.value[field];
    return typeof v === "string" ? v : this.fail(field, "a string");
  }

  stringOrNull(field: string): string | null {
    const v = this.value[field];
    return v === null || typeof v === "string" ? v : this.fail(field, "a string or null");
  }

  /** Absent, or a string. */
  optionalString(field: string): string | undefined {
    const v = this.value[field];
    return v === undefined || typeof v === "string" ? v : this.fail(field, "a string when present");
  }

  /** Absent, null, or a string. */
  optionalStringOrNull(field: string): string | null | undefined {
    const v = this.value[field];
    return v === undefined || v === null || typeof v === "string" ? v : this.fail(field, "a string or null when present");
  }

  /** A safe integer at least 0 (amounts, times, counts: decision 0001). */
  amount(field: string): number {
    const v = this.value[field];
    return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : this.fail(field, "a safe integer at least 0");
  }

  optionalAmount(field: string): number | undefined {
    return this.value[field] === undefined ? undefined : this.amount(field);
  }

  boolean(field: string): boolean {
    const v = this.value[field];
    return typeof v === "boolean" ? v : this.fail(field, "a boolean");
  }

  object(field: string): Fields {
    const v = this.value[field];
    return isObject(v) ? new Fields(this.record, v, this.#name(field)) : this.fail(field, "an object");
  }

  /** Absent, or an object. */
  optionalObject(field: string): Json | undefined {
    const v = this.value[field];
    return v === undefined || isObject(v) ? v : this.fail(field, "an object when present");
  }

  strings(field: string): string[] {
    const v = this.value[field];
    return Array.isArray(v) && v.every((item) => typeof item === "string") ? (v as string[]) : this.fail(field, "an array of strings");
  }

  /** An array of objects, each read by `read`. */
  objects<T>(field: string, read: (item: Fields) => T): T[] {
    const v = this.value[field];
    if (!Array.isArray(v)) this.fail(field, "an array of objects");
    return v.map((item: unknown, i) => {
      if (!isObject(item)) throw new SealedRecordError(this.record, `${this.#name(field)}[${i}]`, "an object", item);
      return read(new Fields(this.record, item, `${this.#name(field)}[${i}]`));
    });
  }
}

/** What the ledger's columns and the sealed text of one record say of it, for the name in an error. */
function ledgerName(row: LedgerRow, kind: LedgerRow["kind"]): string {
  return `${kind} \`${row.id}\` (tree \`${row.tree_id}\`, seq ${row.seq})`;
}

/** A decision's sealed request: the members a reader acts on, checked, and the whole request as sealed. */
export interface SealedRequest {
  readonly tool: string;
  readonly amount_minor?: number;
  readonly currency?: string;
  readonly audience?: string;
  readonly args?: Record<string, unknown>;
  readonly context?: { readonly clean?: boolean };
  readonly attestation?: { readonly manifest_hash: string; readonly content_hash: string; readonly provenance_version: string };
  /** The request as it was sealed, for the views that show it. */
  readonly sealed: Record<string, unknown>;
}

/** One gate's result as sealed: the members the replay reads; the whole gate as sealed for the views. */
export interface SealedGate {
  readonly gate: string;
  readonly result: string;
  readonly grant_id?: string;
  readonly sealed: Record<string, unknown>;
}

export interface SealedHold {
  readonly grant_id: string;
  readonly amount_minor: number;
  readonly currency: string | null;
  readonly expires_at: number;
}

/** A sealed decision (decision/decide.ts, `sealedBody`, and the fields every record has). */
export interface DecisionRecord {
  readonly ledger_id: string;
  readonly outcome: string;
  readonly request: SealedRequest;
  readonly would_outcome: string | null;
  readonly mode: string;
  readonly decided_by: string | null;
  readonly reason_code: string;
  readonly reason: string;
  readonly gates: readonly SealedGate[];
  readonly residual: string | null;
  readonly approver: string | null;
  readonly approval_id: string | null;
  readonly counted: boolean;
  readonly chain: readonly string[];
  readonly holds: readonly SealedHold[];
  /** The certificate the decision found (null: none); absent from records sealed before it was kept. */
  readonly certificate_id?: string | null;
  /** The key that asked: the agent's own, or an enforcement point's (decision 1701); null when absent. */
  readonly key_id?: string | null;
}

/** A sealed settlement (settle.ts). */
export interface SettlementRecord {
  readonly ledger_id: string;
  readonly decision_ledger_id: string;
  readonly amount_minor: number;
  readonly held_minor: number;
  readonly released_minor: number;
  readonly currency: string | null;
  readonly grants: readonly string[];
  /** The record as sealed, for the views that show it. */
  readonly sealed: Record<string, unknown>;
}

function requestOf(fields: Fields): SealedRequest {
  const request = fields.object("request");
  const attestation = request.optionalObject("attestation");
  const context = request.optionalObject("context");
  if (context !== undefined && context["clean"] !== undefined && typeof context["clean"] !== "boolean") {
    request.object("context").fail("clean", "a boolean when present");
  }
  if (attestation !== undefined) {
    const checked = request.object("attestation");
    for (const name of ["manifest_hash", "content_hash", "provenance_version"]) checked.string(name);
  }
  const out: Record<string, unknown> = { tool: request.string("tool"), sealed: request.value };
  const amount = request.optionalAmount("amount_minor");
  if (amount !== undefined) out["amount_minor"] = amount;
  for (const name of ["currency", "audience"]) {
    const value = request.optionalString(name);
    if (value !== undefined) out[name] = value;
  }
  const args = request.optionalObject("args");
  if (args !== undefined) out["args"] = args;
  if (context !== undefined) out["context"] = context;
  if (attestation !== undefined) out["attestation"] = attestation;
  return out as unknown as SealedRequest;
}

function gateOf(gate: Fields): SealedGate {
  const grantId = gate.optionalString("grant_id");
  return {
    gate: gate.string("gate"),
    result: gate.string("result"),
    ...(grantId === undefined ? {} : { grant_id: grantId }),
    sealed: gate.value,
  };
}

function holdOf(hold: Fields): SealedHold {
  return {
    grant_id: hold.string("grant_id"),
    amount_minor: hold.amount("amount_minor"),
    currency: hold.optionalStringOrNull("currency") ?? null,
    expires_at: hold.amount("expires_at"),
  };
}

/** The sealed decision of `row`, or a SealedRecordError naming the record and the field. */
export function decisionRecord(row: LedgerRow): DecisionRecord {
  const name = ledgerName(row, "decision");
  if (row.kind !== "decision") throw new SealedRecordError(name, "kind", "`decision`", row.kind);
  const fields = new Fields(name, sealedObject(name, row.record));
  const certificateId = fields.optionalStringOrNull("certificate_id");
  const keyId = fields.optionalStringOrNull("key_id");
  return {
    ledger_id: fields.string("ledger_id"),
    outcome: fields.string("outcome"),
    request: requestOf(fields),
    would_outcome: fields.stringOrNull("would_outcome"),
    mode: fields.string("mode"),
    decided_by: fields.stringOrNull("decided_by"),
    reason_code: fields.string("reason_code"),
    reason: fields.string("reason"),
    gates: fields.objects("gates", gateOf),
    residual: fields.stringOrNull("residual"),
    approver: fields.stringOrNull("approver"),
    approval_id: fields.stringOrNull("approval_id"),
    counted: fields.boolean("counted"),
    chain: fields.strings("chain"),
    holds: fields.objects("holds", holdOf),
    ...(certificateId === undefined ? {} : { certificate_id: certificateId }),
    ...(keyId === undefined ? {} : { key_id: keyId }),
  };
}

/** The sealed settlement of `row`, or a SealedRecordError naming the record and the field. */
export function settlementRecord(row: LedgerRow): SettlementRecord {
  const name = ledgerName(row, "settlement");
  if (row.kind !== "settlement") throw new SealedRecordError(name, "kind", "`settlement`", row.kind);
  const fields = new Fields(name, sealedObject(name, row.record));
  return {
    ledger_id: fields.string("ledger_id"),
    decision_ledger_id: fields.string("decision_ledger_id"),
    amount_minor: fields.amount("amount_minor"),
    held_minor: fields.amount("held_minor"),
    released_minor: fields.amount("released_minor"),
    currency: fields.stringOrNull("currency"),
    grants: fields.strings("grants"),
    sealed: fields.value,
  };
}

/** A ledger record of either kind, decoded by its kind's decoder. */
export type LedgerRecord =
  | { readonly kind: "decision"; readonly decision: DecisionRecord }
  | { readonly kind: "settlement"; readonly settlement: SettlementRecord };

export function ledgerRecord(row: LedgerRow): LedgerRecord {
  return row.kind === "settlement"
    ? { kind: "settlement", settlement: settlementRecord(row) }
    : { kind: "decision", decision: decisionRecord(row) };
}

/**
 * The tree and position a sealed text names, for a report about a record that is already known
 * to be wrong: `""` and 0 for what it does not name (not JSON, a member missing or of another type).
 */
export function sealedPosition(ledgerId: string, text: string): { tree_id: string; seq: number } {
  let sealed: Json;
  try {
    sealed = sealedObject(`record \`${ledgerId}\``, text);
  } catch (error) {
    if (error instanceof SealedRecordError) return { tree_id: "", seq: 0 };
    throw error;
  }
  const tree = sealed["tree_id"];
  const seq = sealed["seq"];
  return { tree_id: typeof tree === "string" ? tree : "", seq: typeof seq === "number" && Number.isSafeInteger(seq) ? seq : 0 };
}

/** The detail of an `approval_wait_abandoned` grant event (decision-approvals.ts). */
export interface AbandonmentDetail {
  readonly ledger_id: string;
  readonly reason: "timeout" | "cancelled";
  readonly waited_ms: number;
}

export function abandonmentDetail(event: GrantEventRecord): AbandonmentDetail {
  const fields = new Fields(`grant event \`${event.id}\` (${event.kind} of grant \`${event.grant_id}\`)`, event.detail, "detail");
  const word = fields.string("reason");
  const reason = word === "timeout" || word === "cancelled" ? word : fields.fail("reason", "`timeout` or `cancelled`");
  return { ledger_id: fields.string("ledger_id"), reason, waited_ms: fields.amount("waited_ms") };
}

/**
 * A family version's stored body: a JSON object with a string `id` (the family's name) that still
 * hashes to the version's `content_hash`. The family compiler checked the body when it was pushed
 * and the hash covers every member it reads, so a body that hashes as pushed is the body pushed.
 */
export function familyBody(row: {
  readonly id: string;
  readonly version: number;
  readonly content_hash: string;
  readonly body: string;
}): GrantFamilyBody {
  const name = `family version \`${row.id}\` ${row.version}`;
  const fields = new Fields(name, sealedObject(name, row.body));
  fields.string("id");
  if (familyContentHash(fields.value) !== row.content_hash) fields.fail("content_hash", `content hashing to \`${row.content_hash}\``);
  return fields.value as unknown as GrantFamilyBody;
}

/** An instance's stored parameters: a JSON object. */
export function instanceParameters(grantId: string, text: string): Record<string, unknown> {
  return sealedObject(`parameters of the family instance \`${grantId}\``, text);
}
