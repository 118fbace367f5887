// A witness's check (decision 0621): the database's ledger against a checkpoint saved earlier. The
// first N records of the log are hashed again from the ledger itself and their tree compared with
// the signed root; a difference is located by descending the subtrees the log stored.

import {
  nodeHash,
  perfectParts,
  recordLeaf,
  sealedHash,
  treeHash,
  verifyCheckpoint,
  type CheckpointFault,
  type CheckpointKey,
  type LeafRange,
} from "@agent-authority/sdk";
import { partKey, type LedgerLogStore, type LoggedLeaf } from "../../store/ledger/index.js";
import type { Store } from "../../store/core/index.js";

/** Leaves read per query. */
const PAGE = 1_000;
/** Stands for a leaf whose record cannot be hashed (deleted, rewritten): equal to no real leaf hash. */
const UNKNOWN_LEAF: Buffer = Buffer.alloc(32);

export class CheckpointRefused extends Error {
  constructor(
    readonly fault: CheckpointFault,
    message: string,
  ) {
    super(message);
  }
}

export interface CheckpointBreak {
  /** The first leaf index (0-based position in the global order) that differs from the checkpoint. */
  readonly position: number;
  /** The last position of the smallest subtree the difference is known to lie in (= position when exact). */
  readonly through: number;
  /** The record logged at `position`, when one is. */
  readonly ledger_id: string | null;
  readonly problem: string;
}

export interface CheckpointVerification {
  readonly ok: boolean;
  readonly origin: string;
  readonly size: number;
  readonly kid: string;
  /** Leaves the database's log holds (records sealed after the checkpoint included). */
  readonly logged: number;
  readonly broken: CheckpointBreak | null;
}

/** The public keys the database lists, as JWKS keys: what a check without `--keys` trusts. */
export async function databaseKeys(store: Store): Promise<CheckpointKey[]> {
  return (await store.signingKeys().list()).map((row) => ({ kty: "OKP", crv: "Ed25519", x: row.public_key, kid: row.kid }));
}

/** A leaf's local fault: what the ledger holds at a position does not hash to what was logged there. */
interface LocalFault {
  readonly position: number;
  readonly ledger_id: string | null;
  readonly problem: string;
}

/**
 * Where the recomputed leaves first differ from the tree the log stored, found by descending its
 * stored subtrees from the top: into the first part whose recomputed hash differs, then into the
 * first child that does, as long as the stored children hash to their stored parent. Answers the
 * smallest range found, or null when every stored part equals its recomputed hash (the stored
 * subtrees were rewritten with the records). When the stored top parts make the checkpoint's root,
 * the range is the one the signed tree says differs.
 */
async function locate(log: LedgerLogStore, leaves: readonly Buffer[], size: number): Promise<LeafRange | null> {
  const computed = (range: LeafRange): Buffer | undefined =>
    range.end <= leaves.length ? treeHash(leaves.slice(range.start, range.end)) : undefined;
  const span = (level: number, index: number): LeafRange => ({ start: index * 2 ** level, end: (index + 1) * 2 ** level });
  const top = perfectParts({ start: 0, end: size });
  const stored = await log.nodes(top);
  for (const part of top) {
    const hash = stored.get(partKey(part.level, part.index));
    if (hash === undefined) return span(part.level, part.index);
    let level = part.level;
    let index = part.index;
    let trusted = Buffer.from(hash, "hex");
    if (computed(span(level, index))?.equals(trusted) === true) continue;
    while (level > 0) {
      const children = [
        { level: level - 1, index: index * 2 },
        { level: level - 1, index: index * 2 + 1 },
      ];
      const found = await log.nodes(children);
      const [left, right] = children.map((c) => found.get(partKey(c.level, c.index)));
      if (left === undefined) return span(level, index);
      // The right part's log was cut: it is the difference when the left part still agrees.
      if (right === undefined)
        return computed(span(children[0]!.level, children[0]!.index))?.equals(Buffer.from(left, "hex")) === true
          ? span(children[1]!.level, children[1]!.index)
          : span(level, index);
      // Below here the stored subtrees were rewritten too: they vouch for nothing smaller.
      if (!nodeHash(Buffer.from(left, "hex"), Buffer.from(right, "hex")).equals(trusted)) return span(level, index);
      const goLeft = computed(span(children[0]!.level, children[0]!.index))?.equals(Buffer.from(left, "hex")) !== true;
      const next = goLeft ? children[0]! : children[1]!;
      trusted = Buffer.from(goLeft ? left : right, "hex");
      level = next.level;
      index = next.index;
    }
    return span(0, index);
  }
  return null;
}

/** The first `size` leaves as hashed again from the ledger, the record id at each, and the first local fault. */
interface RecomputedLeaves {
  readonly leaves: Buffer[];
  readonly ids: (string | null)[];
  fault: LocalFault | undefined;
}

/** One logged row's leaf, hashed again from its sealed record; a record gone or rewritten is a fault. */
function recomputedLeaf(row: LoggedLeaf, position: number): { leaf: Buffer; fault?: LocalFault } {
  const at = { position, ledger_id: row.ledger_id };
  if (row.record === undefined) {
    return { leaf: UNKNOWN_LEAF, fault: { ...at, problem: "the record logged here is missing from the ledger: it was deleted" } };
  }
  if (sealedHash(row.record.prev_hash, row.record.record) !== row.record.hash) {
    return { leaf: UNKNOWN_LEAF, fault: { ...at, problem: "the record does not match its hash: it was rewritten after sealing" } };
  }
  const leaf = recordLeaf(row.record.hash) as Buffer;
  if (leaf.toString("hex") !== row.leaf_hash) {
    return { leaf, fault: { ...at, problem: "the record is not the one logged at this position: it was rewritten or moved" } };
  }
  return { leaf };
}

/** Reads the log page by page up to `size` leaves; a position the log skips had its row deleted. */
async function recomputeLeaves(log: LedgerLogStore, size: number): Promise<RecomputedLeaves> {
  const out: RecomputedLeaves = { leaves: [], ids: [], fault: undefined };
  let next = 0;
  while (next < size) {
    const rows = await log.leaves(next, PAGE);
    if (rows.length === 0) break;
    for (const row of rows) {
      if (row.position >= size) break;
      for (; next < row.position; next += 1) {
        out.fault ??= {
          position: next,
          ledger_id: null,
          problem: "no record is logged at this position: its row was deleted from the log",
        };
        out.leaves.push(UNKNOWN_LEAF);
        out.ids.push(null);
      }
      const { leaf, fault } = recomputedLeaf(row, next);
      if (fault !== undefined) out.fault ??= fault;
      out.leaves.push(leaf);
      out.ids.push(row.ledger_id);
      next += 1;
    }
    if (rows[rows.length - 1]!.position >= size - 1) break;
  }
  return out;
}

/**
 * Where the log departs from the checkpoint, the first of: a leaf's local fault, the smallest
 * stored subtree that differs, the point the log was cut at, or (when the stored subtrees were
 * rewritten with the records, so the root alone says the tree differs) the whole range.
 */
async function firstBreak(log: LedgerLogStore, recomputed: RecomputedLeaves, size: number): Promise<CheckpointBreak> {
  const { leaves, ids, fault } = recomputed;
  const range = await locate(log, leaves, size);
  const candidates: CheckpointBreak[] = [];
  if (fault !== undefined) candidates.push({ ...fault, through: fault.position });
  if (range !== null && range.start < leaves.length) {
    const exact = range.end - range.start === 1;
    candidates.push({
      position: range.start,
      through: range.end - 1,
      ledger_id: ids[range.start] ?? null,
      problem: exact
        ? "the record at this position is not the one the checkpoint's tree holds: it was rewritten, moved, or a record before it was deleted"
        : `the records at positions ${range.start} to ${range.end - 1} are not those the checkpoint's tree holds: one was rewritten, moved or deleted`,
    });
  }
  if (leaves.length < size) {
    candidates.push({
      position: leaves.length,
      through: size - 1,
      ledger_id: null,
      problem: `the log holds ${leaves.length} of the checkpoint's ${size} records: it was cut from this position on`,
    });
  }
  if (candidates.length === 0) {
    candidates.push({
      position: 0,
      through: size - 1,
      ledger_id: ids[0] ?? null,
      problem: `the records do not make the checkpoint's tree, and the log's stored subtrees were rewritten to match them: the difference lies in positions 0 to ${size - 1}`,
    });
  }
  candidates.sort((a, b) => a.position - b.position || a.through - b.through);
  return candidates[0]!;
}

/**
 * Checks the database against a checkpoint: its signature with `keys` (the JWKS the witness holds;
 * the database's own keys when absent), then the tree of the first N logged records, each hashed
 * again from its sealed text. Reports the first position that differs: a record deleted, rewritten
 * or moved, a log cut short. Holds 32 bytes per record of the checkpoint in memory.
 */
export async function verifyCheckpointAgainst(
  store: Store,
  note: string,
  keys?: readonly CheckpointKey[],
): Promise<CheckpointVerification> {
  const checked = verifyCheckpoint(note, keys ?? (await databaseKeys(store)));
  if (!checked.ok) throw new CheckpointRefused(checked.fault, checked.message);
  const { origin, size, root, kid } = checked;
  const log = store.ledgerLog();
  const logged = await log.size();
  const recomputed = await recomputeLeaves(log, size);
  const result = { origin, size, kid, logged };
  const { leaves, fault } = recomputed;
  if (fault === undefined && leaves.length === size && treeHash(leaves).equals(root)) return { ok: true, ...result, broken: null };
  return { ok: false, ...result, broken: await firstBreak(log, recomputed, size) };
}
