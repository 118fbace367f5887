// Checkpoints and receipts (decisions 0621, 0622): the sealed records in one global order as the
// leaves of an RFC 9162 Merkle tree, signed tree heads in the C2SP checkpoint format, consistency
// proofs between two sizes, and receipts that prove one decision and its settlements offline.

import {
  checkpointText,
  consistencyRanges,
  foldParts,
  inclusionRanges,
  MerkleFrontier,
  perfectParts,
  RECEIPT_FORMAT,
  RECEIPT_STATEMENT_TYPE,
  receiptDigest,
  recordLeaf,
  signedNote,
  type LeafRange,
  type Receipt,
  type ReceiptEntry,
} from "@agent-authority/sdk";
import type { LedgerRow } from "../../store/decisions/index.js";
import { partKey, type LedgerLogStore, type PendingRecord, type PendingScope } from "../../store/ledger/index.js";
import { idFloor } from "../../ids.js";
import type { Store } from "../../store/core/index.js";
import type { Logger } from "../../log.js";
import { Refusal } from "../common/index.js";
import type { Caller, ServiceContext } from "../common/index.js";
import { visibleDecision } from "./settle.js";

export const LEDGER_LOG_LIMITS = Object.freeze({
  /** Records given positions per transaction of the logger: short, so that the decision path (which waits for the write lock on SQLite) hardly notices. */
  batch: 250,
  /** Records a checkpoint or receipt request logs at most before it answers: its cost is bounded. */
  perRequest: 50_000,
  /** How often each replica's timer logs what was sealed since, so that requests find little to do. */
  intervalMs: 5_000,
  /**
   * A pass looks at the trees with a record made in this window before its time (decision 1941):
   * three intervals, so that a record whose transaction commits up to ten seconds after its time
   * is logged by the next pass.
   */
  windowMs: 15_000,
  /** At most this long between passes that look at every tree: a record committed later than the window is logged by one. */
  sweepEveryMs: 300_000,
});

/** Whether a pass at `now` looks at every tree: none did yet, or the last did long enough ago (either way, for a clock set back). */
function sweepDue(last: number | undefined, now: number): boolean {
  return last === undefined || Math.abs(now - last) >= LEDGER_LOG_LIMITS.sweepEveryMs;
}

const HEX64 = /^[0-9a-f]{64}$/;

/** The origin line of this server's checkpoints: the configured one, or `agent-authority/<kid of its first signing key>`. */
export function ledgerOrigin(ctx: Pick<ServiceContext, "signer" | "ledgerOrigin">): string {
  return ctx.ledgerOrigin ?? `agent-authority/${ctx.signer.firstKid() ?? "unsigned"}`;
}

/** The frontier of the logged tree, read from its stored perfect subtrees. */
async function frontierOf(log: LedgerLogStore, size: number): Promise<MerkleFrontier> {
  const shape = perfectParts({ start: 0, end: size });
  const stored = await log.nodes(shape);
  return MerkleFrontier.of(
    size,
    shape.map((part) => {
      const hash = stored.get(partKey(part.level, part.index));
      if (hash === undefined) throw new Error(`the ledger log has no subtree ${part.level}:${part.index} of its ${size} leaves`);
      return Buffer.from(hash, "hex");
    }),
  );
}

/** Which records a pass of the logger at `now` gives positions to. */
export interface LogPass {
  /** Records given positions at most; default LEDGER_LOG_LIMITS.perRequest. */
  readonly max?: number;
  /** Only these trees' records (a receipt's); default the recent window, or every tree when a sweep is due. */
  readonly trees?: readonly string[];
}

/**
 * Gives the records without a leaf theirs, under the logger's lock, until none is left or `max`
 * were logged; answers how many were taken. It reads nothing the decision path writes for it
 * (decision 1941): each tree's records after its cursor, of the trees with a record in the recent
 * window, or of every tree when a sweep is due. They are read once, in order, then logged in
 * transactions of LEDGER_LOG_LIMITS.batch, each dropping what another replica's logger took
 * meanwhile. A record deleted before it was logged has no leaf (its deletion is what the chains
 * and usage checks see).
 */
export async function logPending(store: Store, now: number, pass: LogPass = {}): Promise<number> {
  const max = pass.max ?? LEDGER_LOG_LIMITS.perRequest;
  const { scope, pending } = await store.transaction(async (tx) => {
    const log = tx.ledgerLog();
    await log.lock();
    const scope: PendingScope =
      pass.trees !== undefined
        ? { trees: pass.trees }
        : sweepDue(await log.lastSweep(), now)
          ? "all"
          : { sinceId: idFloor("led", now - LEDGER_LOG_LIMITS.windowMs) };
    return { scope, pending: await log.pending(scope, max) };
  });
  let taken = 0;
  for (let i = 0; i < pending.length; i += LEDGER_LOG_LIMITS.batch)
    taken += await store.transaction((tx) => logRecords(tx.ledgerLog(), pending.slice(i, i + LEDGER_LOG_LIMITS.batch)));
  // A sweep that saw every waiting record is done until the next one is due.
  if (scope === "all" && pending.length < max)
    await store.transaction(async (tx) => {
      await tx.ledgerLog().lock();
      await tx.ledgerLog().swept(now);
    });
  return taken;
}

/** Logs these records, each tree's in `seq` order, past what the trees' cursors say was logged meanwhile; answers how many. */
async function logRecords(log: LedgerLogStore, records: readonly PendingRecord[]): Promise<number> {
  await log.lock();
  const logged = await log.cursors([...new Set(records.map((r) => r.tree_id))]);
  const fresh = records.filter((r) => r.seq > (logged.get(r.tree_id) ?? 0));
  if (fresh.length === 0) return 0;
  const frontier = await frontierOf(log, await log.size());
  const leaves: { position: number; ledger_id: string; leaf_hash: string }[] = [];
  const nodes: { level: number; index: number; hash: string }[] = [];
  const cursors = new Map<string, number>();
  for (const record of fresh) {
    cursors.set(record.tree_id, record.seq);
    if (record.hash === null || !HEX64.test(record.hash)) continue;
    const leaf = recordLeaf(record.hash);
    leaves.push({ position: frontier.size, ledger_id: record.ledger_id, leaf_hash: leaf.toString("hex") });
    for (const node of frontier.push(leaf)) nodes.push({ level: node.level, index: node.index, hash: node.hash.toString("hex") });
  }
  await log.append(
    leaves,
    nodes,
    [...cursors].map(([tree_id, seq]) => ({ tree_id, seq })),
  );
  return fresh.length;
}

export interface LedgerLogger {
  /** Stops the timer and waits for a pass under way. */
  stop(): Promise<void>;
}

/**
 * Logs what was sealed since, every `intervalMs`, at most LEDGER_LOG_LIMITS.perRequest records a
 * pass (sooner again while more waits), so that a checkpoint keeps up with a busy ledger. A failed
 * pass is logged and tried again; the timer never keeps the process alive.
 */
export function startLedgerLogger(store: Store, logger: Logger, intervalMs: number = LEDGER_LOG_LIMITS.intervalMs): LedgerLogger {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const pass = async (): Promise<void> => {
    let delayMs = intervalMs;
    try {
      const logged = await logPending(store, Date.now());
      if (logged >= LEDGER_LOG_LIMITS.perRequest) delayMs = 0;
      if (logged > 0) logger.log("debug", "sealed records logged in the ledger's Merkle tree", { logged });
    } catch (error) {
      logger.log("error", "logging sealed records in the ledger's Merkle tree failed", {
        error: error instanceof Error ? error.message : String(error),
      });
    }
    if (!stopped) schedule(delayMs);
  };
  const schedule = (delayMs: number): void => {
    timer = setTimeout(() => {
      running = pass();
    }, delayMs);
    timer.unref();
  };
  schedule(intervalMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/** The hashes of RFC 9162 ranges of the logged tree, each folded from its stored perfect subtrees. */
async function rangeHashes(log: LedgerLogStore, ranges: readonly LeafRange[]): Promise<Buffer[]> {
  const shapes = ranges.map((range) => perfectParts(range));
  const stored = await log.nodes(shapes.flat());
  return shapes.map((shape) =>
    foldParts(
      shape.map((part) => {
        const hash = stored.get(partKey(part.level, part.index));
        if (hash === undefined) throw new Error(`the ledger log has no subtree ${part.level}:${part.index}`);
        return Buffer.from(hash, "hex");
      }),
    ),
  );
}

/** The logged tree's size and root hash. */
export async function treeHead(store: Store): Promise<{ size: number; root: Buffer }> {
  const log = store.ledgerLog();
  const size = await log.size();
  const [root] = await rangeHashes(log, [{ start: 0, end: size }]);
  return { size, root: root! };
}

/** A tree head as a signed note in the C2SP checkpoint format, with the kid of the JWKS key that signed it. */
function signedCheckpoint(ctx: ServiceContext, head: { size: number; root: Buffer }): { note: string; kid: string } {
  const origin = ledgerOrigin(ctx);
  const text = checkpointText({ origin, size: head.size, root: head.root });
  const signed = ctx.signer.signText(text);
  return { note: signedNote(text, origin, Buffer.from(signed.x, "base64url"), signed.signature), kid: signed.kid };
}

/** `GET /v1/ledger/checkpoint`: the records sealed so far logged (at most LEDGER_LOG_LIMITS.perRequest of them), then the signed tree head. */
export async function ledgerCheckpoint(ctx: ServiceContext): Promise<string> {
  await logPending(ctx.store, ctx.now());
  return signedCheckpoint(ctx, await treeHead(ctx.store)).note;
}

function treeSize(name: string, text: string | undefined): number {
  if (text === undefined) throw new Refusal("invalid_query", `\`${name}\` is required: a tree size`);
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text) || !Number.isSafeInteger(Number(text)))
    throw new Refusal("invalid_query", `\`${name}\` is a tree size, a decimal integer`);
  return Number(text);
}

/** `GET /v1/ledger/consistency?first=M&second=N`: the RFC 9162 proof that the tree of M leaves is a prefix of the tree of N. */
export async function ledgerConsistency(
  ctx: ServiceContext,
  firstText: string | undefined,
  secondText: string | undefined,
): Promise<{ first: number; second: number; proof: string[] }> {
  const first = treeSize("first", firstText);
  const second = treeSize("second", secondText);
  if (first > second) throw new Refusal("invalid_query", "`first` is at most `second`");
  const log = ctx.store.ledgerLog();
  const size = await log.size();
  if (second > size)
    throw new Refusal(
      "invalid_query",
      `\`second\` is at most the logged tree's size, ${size}: GET /v1/ledger/checkpoint logs what was sealed since`,
    );
  const proof = await rangeHashes(log, consistencyRanges(first, second));
  return { first, second, proof: proof.map((hash) => hash.toString("base64")) };
}

/** The settlement records of a decision (a decision is settled at most once). */
async function settlementsOf(store: Store, ledgerId: string): Promise<LedgerRow[]> {
  const ledger = store.decisionPath();
  const ids = new Set<string>();
  for (const charge of await ledger.chargesOf(ledgerId)) if (charge.settlement_ledger_id !== null) ids.add(charge.settlement_ledger_id);
  const rows: LedgerRow[] = [];
  for (const id of [...ids].sort()) {
    const row = await ledger.getLedger(id);
    if (row !== undefined) rows.push(row);
  }
  return rows;
}

/**
 * `GET /v1/decisions/{ledger_id}/receipt`: the sealed decision and its settlements, each with its
 * leaf and inclusion proof in a tree whose signed checkpoint is included, signed as a whole so that
 * no member can be changed, added or left out (docs/verification.md).
 */
export async function decisionReceipt(ctx: ServiceContext, caller: Caller, ledgerId: string): Promise<Receipt> {
  const decision = await visibleDecision(ctx.store, caller, ledgerId);
  const settlements = await settlementsOf(ctx.store, decision.id);
  const rows = [decision, ...settlements];
  const log = ctx.store.ledgerLog();
  await logPending(ctx.store, ctx.now());
  // A record committed later than the window is logged here, by its own tree's cursor.
  const unlogged: string[] = [];
  for (const row of rows) if ((await log.positionOf(row.id)) === undefined) unlogged.push(row.tree_id);
  if (unlogged.length > 0) await logPending(ctx.store, ctx.now(), { trees: [...new Set(unlogged)] });
  const positions: number[] = [];
  for (const row of rows) {
    const position = await log.positionOf(row.id);
    if (position === undefined)
      throw new Refusal(
        "unavailable",
        `record \`${row.id}\` is not in the ledger's Merkle log yet (more than ${LEDGER_LOG_LIMITS.perRequest} records waited for a position): ask again`,
      );
    positions.push(position);
  }
  const head = await treeHead(ctx.store);
  const proofs = await Promise.all(
    positions.map(async (position) => (await rangeHashes(log, inclusionRanges(position, head.size))).map((h) => h.toString("base64"))),
  );
  const entry = (row: LedgerRow, i: number): ReceiptEntry => ({
    leaf_index: positions[i]!,
    prev_hash: row.prev_hash,
    hash: row.hash,
    record: row.record,
    inclusion_proof: proofs[i]!,
  });
  // The checkpoint and the receipt are signed one after the other without a pause, so by one key.
  const checkpoint = signedCheckpoint(ctx, head);
  const body = {
    format: RECEIPT_FORMAT,
    ledger_id: decision.id,
    kid: checkpoint.kid,
    checkpoint: checkpoint.note,
    record: entry(decision, 0),
    settlements: settlements.map((row, i) => entry(row, i + 1)),
  } as const;
  const statement = { ledger_id: decision.id, receipt_sha256: receiptDigest(body), type: RECEIPT_STATEMENT_TYPE } as const;
  const signature = ctx.signer.sign(statement);
  return { ...body, signature: { alg: "EdDSA", kid: signature.kid, statement, value: signature.value } };
}
