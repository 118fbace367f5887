// The sealed ledger: every decision and settlement is one record, hash-linked to the previous record
// of the same delegation tree, and a verifier that recomputes every chain (docs/decisions.md).

import { hash } from "node:crypto";
import { recordLeaf } from "@agent-authority/sdk";
import type { DecisionStore, LedgerRow } from "../../store/decisions/index.js";
import type { Store } from "../../store/core/index.js";
import { ledgerRecord, SealedRecordError, sealedObject, sealedPosition } from "./sealed-records.js";

/** The `prev_hash` of the first record of every tree. */
export const GENESIS_HASH = "0".repeat(64);

/** How many records or trees the verifier reads per query: memory stays bounded on any ledger. */
const VERIFY_PAGE = 1_000;

/**
 * The canonical serialisation the hash covers: JSON with object keys sorted by code unit at every
 * level, no whitespace, `undefined` members left out. Two equal records always give the same text.
 *
 * The usual record is plain JSON data, mostly built with its keys in order already. Such a value
 * is handed as it is to the native `JSON.stringify`; only the objects whose keys are out of order
 * are copied, with their keys inserted sorted. A value that a copy cannot represent in that order
 * (a key that is an array index, which objects always enumerate first; `__proto__`; anything that
 * is not plain JSON data) takes the member-by-member path, which writes the same text.
 */
export function canonicalJson(value: unknown): string {
  const ordered = inKeyOrder(value, 0);
  return ordered === NOT_PLAIN ? canonicalJsonSlow(value) : (JSON.stringify(ordered) ?? "null");
}

const NOT_PLAIN: unique symbol = Symbol("not plain JSON data");
/** Deeper than this, the member-by-member path is taken. */
const ORDERED_DEPTH_MAX = 64;

/** `value` itself when its keys are in order at every level, a copy that puts them in order, or NOT_PLAIN. */
function inKeyOrder(value: unknown, depth: number): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case "string":
    case "boolean":
    case "number":
    case "undefined":
      return value;
    case "object":
      break;
    default:
      return NOT_PLAIN;
  }
  if (depth >= ORDERED_DEPTH_MAX) return NOT_PLAIN;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i += 1) {
      const member: unknown = value[i];
      const ordered = inKeyOrder(member, depth + 1);
      if (ordered === NOT_PLAIN) return NOT_PLAIN;
      if (ordered !== member && copy === undefined) copy = value.slice(0, i);
      // `undefined` and holes are written as null either way.
      if (copy !== undefined) copy.push(ordered);
    }
    return copy ?? value;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return NOT_PLAIN;
  const record = value as Record<string, unknown>;
  let sorted = true;
  let previous: string | undefined;
  let changed: Map<string, unknown> | undefined;
  for (const key of Object.keys(record)) {
    const code = key.charCodeAt(0);
    if ((code >= 48 && code <= 57) || key === "__proto__") return NOT_PLAIN;
    if (previous !== undefined && !(previous < key)) sorted = false;
    const member = record[key];
    const ordered = inKeyOrder(member, depth + 1);
    if (ordered === NOT_PLAIN) return NOT_PLAIN;
    if (ordered !== member) (changed ??= new Map()).set(key, ordered);
    previous = key;
  }
  if (sorted && changed === undefined) return value;
  // The default sort compares UTF-16 code units, which is the order this serialisation promises.
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(record).sort()) {
    const member = changed?.has(key) ? changed.get(key) : record[key];
    if (member !== undefined) copy[key] = member;
  }
  return copy;
}

/** The member-by-member canonical serialisation; `canonicalJson` gives the same text faster. */
export function canonicalJsonSlow(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i += 1) out += (i === 0 ? "" : ",") + (value[i] === undefined ? "null" : canonicalJsonSlow(value[i]));
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  // The default sort compares UTF-16 code units, which is the order this serialisation promises.
  const keys = Object.keys(record).sort();
  let out = "{";
  let first = true;
  for (const key of keys) {
    const member = record[key];
    if (member === undefined) continue;
    out += `${first ? "" : ","}${JSON.stringify(key)}:${canonicalJsonSlow(member)}`;
    first = false;
  }
  return `${out}}`;
}

/**
 * A member's value already written as canonical JSON (for example by `canonicalJson`, or by
 * `JSON.stringify` of data whose object keys are inserted in canonical order), which
 * `canonicalMerge` copies into the record as it is. Accepted as a member of the top level only.
 */
export class CanonicalText {
  constructor(readonly text: string) {}
}

/**
 * `canonicalJson({ ...body, ...fields })`, written member by member without building the merged
 * object (a record of the decision path is sealed on every request, and merging by spread costs
 * more than serialising).
 */
export function canonicalMerge(body: Readonly<Record<string, unknown>>, fields: Readonly<Record<string, unknown>>): string {
  const keys = Object.keys(body);
  for (const key of Object.keys(fields)) if (!Object.hasOwn(body, key)) keys.push(key);
  let out = "{";
  let first = true;
  for (const key of canonicalOrder(keys)) {
    const member = Object.hasOwn(fields, key) ? fields[key] : body[key];
    if (member === undefined) continue;
    // Strings and nulls, most of a record's members, are written at once.
    const text =
      typeof member === "string"
        ? JSON.stringify(member)
        : member === null
          ? "null"
          : member instanceof CanonicalText
            ? member.text
            : canonicalJson(member);
    out += `${first ? "" : ","}${quotedKey(key)}:${text}`;
    first = false;
  }
  return `${out}}`;
}

/**
 * The name lists of the last merges as given, with their canonical order, most recently used
 * first: a record's names repeat on every seal, and so do a request's, merged beside it.
 */
const ORDERS: { names: readonly string[]; order: readonly string[] }[] = [];
const ORDERS_KEPT = 4;

/** `names` sorted by code unit (the order this serialisation promises), a kept sort reused when they are the same names in the same order. */
function canonicalOrder(names: readonly string[]): readonly string[] {
  for (let i = 0; i < ORDERS.length; i += 1) {
    const kept = ORDERS[i]!;
    if (names.length !== kept.names.length || !names.every((name, j) => name === kept.names[j])) continue;
    if (i > 0) ORDERS.unshift(...ORDERS.splice(i, 1));
    return kept.order;
  }
  // The default sort compares UTF-16 code units.
  const order = [...names].sort();
  ORDERS.unshift({ names, order });
  if (ORDERS.length > ORDERS_KEPT) ORDERS.pop();
  return order;
}

/** Member names as JSON strings; a record's few names repeat on every seal. */
const QUOTED_KEYS = new Map<string, string>();
const QUOTED_KEYS_MAX = 1_024;

function quotedKey(key: string): string {
  let quoted = QUOTED_KEYS.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (QUOTED_KEYS.size >= QUOTED_KEYS_MAX) QUOTED_KEYS.clear();
    QUOTED_KEYS.set(key, quoted);
  }
  return quoted;
}

/** SHA-256 over the previous hash, a newline and the canonical record, in lower-case hex. */
export function linkHash(prevHash: string, record: string): string {
  return hash("sha256", `${prevHash}\n${record}`, "hex");
}

export interface SealInput {
  readonly id: string;
  readonly tree_id: string;
  readonly kind: LedgerRow["kind"];
  readonly grant_id: string;
  readonly agent_id: string;
  readonly outcome: string | null;
  readonly created_at: number;
  /** Everything else the record keeps; sealed with the fields above. */
  readonly body: Readonly<Record<string, unknown>>;
}

/**
 * Appends one record to its tree's chain. The caller holds the tree's lock inside a transaction
 * (INVARIANT tree-serial), so the head read here is still the head when the record is written;
 * the unique (tree_id, seq) index refuses a second writer that slipped past anyway.
 */
export async function sealRecord(
  ledger: DecisionStore,
  input: SealInput,
  known?: { seq: number; hash: string } | null,
): Promise<LedgerRow> {
  // `known`: the tree's head already read under its lock (null: the tree has none), so that the
  // record's insert is sent at once.
  const head = known === undefined ? await ledger.ledgerHead(input.tree_id) : (known ?? undefined);
  const row = sealedRow(input, head ?? null);
  await ledger.appendLedger(row);
  return row;
}

/** The record that follows `head` in its tree's chain (null: the tree has none yet); pure. */
export function sealedRow(input: SealInput, head: { readonly seq: number; readonly hash: string } | null): LedgerRow {
  const seq = (head?.seq ?? 0) + 1;
  const prevHash = head?.hash ?? GENESIS_HASH;
  const record = canonicalMerge(input.body, {
    agent_id: input.agent_id,
    created_at: input.created_at,
    grant_id: input.grant_id,
    kind: input.kind,
    ledger_id: input.id,
    outcome: input.outcome,
    seq,
    tree_id: input.tree_id,
  });
  return {
    id: input.id,
    tree_id: input.tree_id,
    seq,
    kind: input.kind,
    grant_id: input.grant_id,
    agent_id: input.agent_id,
    outcome: input.outcome,
    record,
    prev_hash: prevHash,
    hash: linkHash(prevHash, record),
    created_at: input.created_at,
  };
}

export interface LedgerBreak {
  readonly tree_id: string;
  readonly seq: number;
  readonly ledger_id: string;
  /** What does not hold, as a sentence. */
  readonly problem: string;
  /** Set when the break is in the Merkle log (decision 0621): the leaf's position; `tree_id` is then empty when the record is gone. */
  readonly position?: number;
}

export interface LedgerVerification {
  readonly ok: boolean;
  readonly trees: number;
  readonly records: number;
  /** The first broken link, in tree order then chain order; null when every chain verifies. */
  readonly broken: LedgerBreak | null;
}

/** Checks one record against its predecessor's hash and its own columns; answers what is wrong. */
export function checkLink(row: LedgerRow, expectedSeq: number, expectedPrev: string): string | null {
  if (row.seq !== expectedSeq) return `expected record \`${expectedSeq}\` of the chain, found \`${row.seq}\`: a record is missing`;
  if (row.prev_hash !== expectedPrev) return "`prev_hash` does not name the previous record's hash";
  if (linkHash(row.prev_hash, row.record) !== row.hash) return "the record does not match its hash: it was changed after sealing";
  let sealed: Record<string, unknown>;
  try {
    sealed = sealedObject(`${row.kind} \`${row.id}\``, row.record);
  } catch (error) {
    return damage(error);
  }
  if (canonicalJson(sealed) !== row.record) return "the record is not in canonical form";
  const columns: Record<string, unknown> = {
    ledger_id: row.id,
    tree_id: row.tree_id,
    seq: row.seq,
    kind: row.kind,
    grant_id: row.grant_id,
    agent_id: row.agent_id,
    outcome: row.outcome,
    created_at: row.created_at,
  };
  for (const [name, value] of Object.entries(columns)) {
    if (sealed[name] !== value) return `column \`${name === "ledger_id" ? "id" : name}\` differs from the sealed record`;
  }
  try {
    ledgerRecord(row);
  } catch (error) {
    return damage(error);
  }
  return null;
}

/** A record its decoder refuses, as the verifier reports it; anything else is not the record's fault. */
function damage(error: unknown): string {
  if (error instanceof SealedRecordError) return error.message;
  throw error;
}

/** What a tree's sealed records say each of its grants used, held and settled. */
export class UsageTally {
  readonly uses = new Map<string, number>();
  readonly settled = new Map<string, number>();
  /** The holds of counted decisions, by decision, until a settlement of the decision is read. */
  readonly holds = new Map<string, readonly { grant_id: string; amount_minor: number; expires_at: number }[]>();

  /** Counts one sealed record (already checked against its hash). */
  add(row: LedgerRow): void {
    const record = ledgerRecord(row);
    if (record.kind === "decision" && record.decision.counted) {
      const sealed = record.decision;
      for (const grant of sealed.chain) this.uses.set(grant, (this.uses.get(grant) ?? 0) + 1);
      if (sealed.holds.length > 0) this.holds.set(row.id, sealed.holds);
    } else if (record.kind === "settlement") {
      const sealed = record.settlement;
      for (const grant of sealed.grants) this.settled.set(grant, (this.settled.get(grant) ?? 0) + sealed.amount_minor);
      this.holds.delete(sealed.decision_ledger_id);
    }
  }

  /** The amount each grant holds at `now`: holds of counted decisions not settled and not expired. */
  heldAt(now: number): Map<string, number> {
    const held = new Map<string, number>();
    for (const holds of this.holds.values()) {
      for (const hold of holds) if (hold.expires_at > now) held.set(hold.grant_id, (held.get(hold.grant_id) ?? 0) + hold.amount_minor);
    }
    return held;
  }
}

/** One tree's chain recomputed, in pages: how many records were read, the last one, and the first broken link if any. */
export async function checkTreeChain(
  ledger: DecisionStore,
  treeId: string,
  tally?: UsageTally,
): Promise<{ records: number; broken: LedgerBreak | null; last: LedgerRow | undefined }> {
  let records = 0;
  let seq = 0;
  let prev = GENESIS_HASH;
  let last: LedgerRow | undefined;
  for (;;) {
    const rows = await ledger.ledgerChain(treeId, seq, VERIFY_PAGE);
    if (rows.length === 0) break;
    for (const row of rows) {
      records += 1;
      const problem = checkLink(row, seq + 1, prev);
      if (problem !== null) return { records, broken: { tree_id: treeId, seq: row.seq, ledger_id: row.id, problem }, last };
      tally?.add(row);
      seq = row.seq;
      prev = row.hash;
      last = row;
    }
  }
  return { records, broken: null, last };
}

/**
 * A grant tree's chain and its usage, read together under the tree's lock (INVARIANT tree-serial)
 * so that no decision is sealed between the two reads: the uses, live holds and settlements the
 * grants count must be exactly those their sealed records show. A record deleted from the chain's
 * end leaves the chain whole, but not the count.
 */
async function checkGrantTree(store: Store, treeId: string, now: number): Promise<{ records: number; broken: LedgerBreak | null }> {
  return store.transaction(async (tx) => {
    await tx.lockGrant(treeId);
    const tally = new UsageTally();
    const chain = await checkTreeChain(tx.decisionPath(), treeId, tally);
    if (chain.broken !== null) return chain;
    const grants = await tx.subtreeIds(treeId);
    const usage = await tx.usage(grants, now);
    const held = tally.heldAt(now);
    for (const grant of grants) {
      const counted = usage.get(grant) ?? { uses: 0, held_minor: 0, settled_minor: 0 };
      const recorded = { uses: tally.uses.get(grant) ?? 0, held_minor: held.get(grant) ?? 0, settled_minor: tally.settled.get(grant) ?? 0 };
      for (const field of ["uses", "held_minor", "settled_minor"] as const) {
        if (counted[field] === recorded[field]) continue;
        const where = chain.last === undefined ? { seq: 0, ledger_id: "" } : { seq: chain.last.seq, ledger_id: chain.last.id };
        return {
          records: chain.records,
          broken: {
            tree_id: treeId,
            ...where,
            problem: `grant \`${grant}\` counts ${field} ${counted[field]} but its sealed records show ${recorded[field]}: a record is missing from the chain, or the count was changed`,
          },
        };
      }
    }
    return chain;
  });
}

/**
 * Recomputes every chain of the ledger and reports the first broken link. Reads in pages, so it
 * runs on a live database of any size; records sealed while it runs are checked if it reaches them.
 */
export async function verifyLedger(store: Store, now: number = Date.now()): Promise<LedgerVerification> {
  const ledger = store.decisionPath();
  let trees = 0;
  let records = 0;
  let afterTree: string | null = null;
  for (;;) {
    const treeIds = await ledger.ledgerTrees(afterTree, VERIFY_PAGE);
    if (treeIds.length === 0) break;
    for (const treeId of treeIds) {
      trees += 1;
      // A grant tree's records are reconciled with its grants' usage; an agent's own chain holds
      // only decisions on grants it did not hold, which count nothing.
      const chain = treeId.startsWith("grt_") ? await checkGrantTree(store, treeId, now) : await checkTreeChain(ledger, treeId);
      records += chain.records;
      if (chain.broken !== null) return { ok: false, trees, records, broken: chain.broken };
    }
    afterTree = treeIds[treeIds.length - 1]!;
  }
  const logged = await checkLog(store);
  if (logged !== null) return { ok: false, trees, records, broken: logged };
  return { ok: true, trees, records, broken: null };
}

/**
 * Every record the Merkle log gave a position must still be in the ledger and hash to the leaf
 * logged for it, at contiguous positions (decision 0621): a logged record deleted with the
 * triggers bypassed is found here even when its chain still verifies. A witness's checkpoint
 * (`authority ledger verify --checkpoint`) also catches the log rewritten with it.
 */
async function checkLog(store: Store): Promise<LedgerBreak | null> {
  const log = store.ledgerLog();
  let next = 0;
  for (;;) {
    const rows = await log.leaves(next, VERIFY_PAGE);
    if (rows.length === 0) return null;
    for (const row of rows) {
      const at = { position: next, ledger_id: row.ledger_id };
      if (row.position !== next)
        return {
          tree_id: "",
          seq: 0,
          ...at,
          ledger_id: "",
          problem: `no record is logged at position ${next} of the Merkle log: its row was deleted`,
        };
      if (row.record === undefined)
        return {
          tree_id: "",
          seq: 0,
          ...at,
          problem: `the record logged at position ${next} of the Merkle log is missing from the ledger: it was deleted`,
        };
      if (recordLeaf(row.record.hash).toString("hex") !== row.leaf_hash) {
        const sealed = sealedPosition(row.ledger_id, row.record.record);
        return {
          tree_id: sealed.tree_id,
          seq: sealed.seq,
          ...at,
          problem: `the record does not hash to the leaf logged for it at position ${next} of the Merkle log: it was rewritten`,
        };
      }
      next += 1;
    }
  }
}
