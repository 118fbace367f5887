// Sliding windows of an agent's decision signals, kept up to date after every decision in constant
// work: the new decision is added, the decisions that left each window are subtracted, and the
// result is stored with the cursor of each window's oldest decision. Counting a window afresh
// scans every decision in it (a thousand-decision window costs a thousand index entries per
// decision); the incremental step reads one or two index entries per window.

import { HOUR_MS } from "@agent-authority/engine";
import {
  SIGNAL_COUNT,
  type BreakerStore,
  type ContractRow,
  type SignalCounts,
  type SignalKey,
  type WindowState,
} from "../../store/breakers/index.js";
import { windowKey } from "./contracts.js";

/** The decision just sealed, as the windows see it. */
export interface NewSignal {
  readonly agent_id: string;
  readonly at: number;
  /** Where the signal was written (`insertSignal`'s answer). */
  readonly seq: number;
  readonly signal: number;
}

const same = (a: SignalKey | null, b: SignalKey | null): boolean => a !== null && b !== null && a[0] === b[0] && a[1] === b[1];

/** Counts a window ending at the decision from scratch, with the cursor of its oldest decision. */
async function recount(store: BreakerStore, contract: ContractRow, d: NewSignal): Promise<WindowState["windows"][string]> {
  if (contract.window_decisions !== null) {
    const counts = await store.countLastDecisions(d.agent_id, contract.window_decisions, d.at);
    return {
      n: counts.reduce((a, b) => a + b, 0),
      counts: [...counts],
      tail: await store.oldestOfLast(d.agent_id, contract.window_decisions, d.at),
    };
  }
  const from = d.at - contract.window_hours! * HOUR_MS;
  const counts = await store.countBetween(d.agent_id, from, d.at);
  return { n: counts.reduce((a, b) => a + b, 0), counts: [...counts], tail: await store.firstAfter(d.agent_id, from) };
}

/** A window's oldest decision and the one after it (none when it is the agent's last), from `tail` on. */
type TailReader = (tail: SignalKey) => Promise<readonly Signal[]>;

type Signal = { readonly at: number; readonly seq: number; readonly signal: number };

/** Signals read at once past a window's tail when its windows are carried through a transaction. */
const READ_AHEAD = 32;

/** Adds the new decision to a window and subtracts every decision that left it. */
async function advance(
  readTail: TailReader,
  store: BreakerStore,
  contract: ContractRow,
  w: WindowState["windows"][string],
  d: NewSignal,
): Promise<WindowState["windows"][string]> {
  const counts = [...w.counts];
  let n = w.n + 1;
  counts[d.signal] = (counts[d.signal] ?? 0) + 1;
  let tail: SignalKey | null = w.tail ?? [d.at, d.seq];
  if (contract.window_decisions !== null) {
    // Bounded: each step removes one decision, and at most the window's excess is removed.
    while (n > contract.window_decisions && tail !== null) {
      const [gone, next] = await readTail(tail);
      if (gone === undefined) break;
      counts[gone.signal] = counts[gone.signal]! - 1;
      n -= 1;
      tail = next === undefined ? null : [next.at, next.seq];
    }
  } else {
    const cutoff = d.at - contract.window_hours! * HOUR_MS;
    if (tail !== null && tail[0] <= cutoff) {
      const gone = await store.countFromUntil(d.agent_id, tail, cutoff);
      for (let code = 0; code < SIGNAL_COUNT; code += 1) {
        counts[code] = counts[code]! - gone[code]!;
        n -= gone[code]!;
      }
      tail = await store.firstAfter(d.agent_id, cutoff);
    }
  }
  return { n, counts, tail };
}

/**
 * The windows of the agents whose decisions one transaction evaluates, as each agent's last
 * evaluated decision left them: read from the store at an agent's first decision, carried in
 * memory through the rest, and written once per agent by `flush` before the transaction ends
 * (a batch of decisions, decision 1943).
 */
export class CarriedWindows {
  readonly #states = new Map<string, WindowState>();
  /** Per agent and window: the signals read from its tail on and not yet left behind. */
  readonly #ahead = new Map<string, readonly Signal[]>();
  readonly #lastBefore: ReadonlyMap<string, SignalKey | null>;

  /**
   * `lastBefore`: each agent's last signal (null for none) as the transaction read it under the
   * agent's breaker locks before writing any signal of its own: the signal before the agent's first
   * decision in the transaction, so that decision's state is checked without reading it again.
   */
  constructor(lastBefore: ReadonlyMap<string, SignalKey | null> = new Map()) {
    this.#lastBefore = lastBefore;
  }

  /** The agent's last signal before this transaction's, if the caller read it (null: it had none); undefined when unknown. */
  lastSignalBefore(agentId: string): SignalKey | null | undefined {
    return this.#lastBefore.has(agentId) ? this.#lastBefore.get(agentId)! : undefined;
  }

  /** The agent's windows as this transaction last left them, if it evaluated the agent. */
  get(agentId: string): WindowState | undefined {
    return this.#states.get(agentId);
  }

  set(agentId: string, state: WindowState): void {
    this.#states.set(agentId, state);
  }

  /**
   * The window's oldest decision and the one after it, as `signalsFrom(tail, 2)` answers them, from
   * signals read READ_AHEAD at a time. A signal once written never changes, and none is written
   * between two others while the transaction holds the agent's breaker rows (INVARIANT
   * breaker-lock-first), so two signals read together stay consecutive. The one after is always a
   * signal read after the tail: the last signal of a read is never taken for the agent's last
   * (one written since would follow it), and is read again with those after it.
   */
  async tailOf(store: BreakerStore, agentId: string, window: string, tail: SignalKey): Promise<readonly Signal[]> {
    const slot = `${agentId}\u0000${window}`;
    let read = this.#ahead.get(slot);
    if (read === undefined || read.length < 2 || read[0]!.at !== tail[0] || read[0]!.seq !== tail[1])
      read = await store.signalsFrom(agentId, tail, READ_AHEAD);
    this.#ahead.set(slot, read.slice(1));
    return read.slice(0, 2);
  }

  /** Writes each agent's windows as its last decision left them. */
  async flush(store: BreakerStore): Promise<void> {
    for (const [agentId, state] of this.#states) await store.putWindowState(agentId, state);
    this.#states.clear();
    this.#ahead.clear();
  }
}

/**
 * Whether the stored state continues from the agent's previous decision. A state this transaction
 * carries does: its head is the agent's previous signal, which this transaction wrote while it
 * held the agent's breaker rows (INVARIANT breaker-lock-first), and every later signal of the
 * agent is a decision it evaluates after. At the agent's first decision of the transaction, the
 * previous signal is the last one before the transaction's, when the caller read it under those
 * locks (decision 1954); otherwise it is read here.
 */
async function startingState(store: BreakerStore, d: NewSignal, carried: CarriedWindows | undefined): Promise<WindowState | undefined> {
  const held = carried?.get(d.agent_id);
  if (held !== undefined) return held;
  const state = await store.windowState(d.agent_id);
  if (state === undefined) return undefined;
  const known = carried?.lastSignalBefore(d.agent_id);
  const previous = known !== undefined ? known : await store.previousSignal(d.agent_id, [d.at, d.seq]);
  return (previous === null ? state.head === null : same(state.head, previous)) ? state : undefined;
}

/**
 * The counts of every window the contracts use, ending at the decision just sealed (its signal is
 * already stored), keyed by `windowKey`. The stored state is advanced when it ends exactly at the
 * agent's previous decision; otherwise (the first evaluation, a new window, decisions made while
 * the agent had no breaker, or a decision sealed out of time order) the windows are counted afresh,
 * so the state can never drift from the sealed signals. With `carried`, the state moves on in
 * memory and is written when the caller flushes it; without, it is written here.
 */
export async function windowCounts(
  store: BreakerStore,
  contracts: readonly ContractRow[],
  d: NewSignal,
  carried?: CarriedWindows,
): Promise<Map<string, SignalCounts>> {
  const state = await startingState(store, d, carried);
  const windows: Record<string, WindowState["windows"][string]> = {};
  const answer = new Map<string, SignalCounts>();
  for (const contract of contracts) {
    const key = windowKey(contract);
    if (answer.has(key)) continue;
    const stored = state?.windows[key];
    const readTail: TailReader =
      carried === undefined ? (tail) => store.signalsFrom(d.agent_id, tail, 2) : (tail) => carried.tailOf(store, d.agent_id, key, tail);
    const next = stored === undefined ? await recount(store, contract, d) : await advance(readTail, store, contract, stored, d);
    windows[key] = next;
    answer.set(key, next.counts);
  }
  const after: WindowState = { head: [d.at, d.seq], windows };
  if (carried === undefined) await store.putWindowState(d.agent_id, after);
  else carried.set(d.agent_id, after);
  return answer;
}
