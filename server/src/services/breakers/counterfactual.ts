// The counterfactual of breakers (docs/breakers.md): replays the last 90 days of an agent's sealed
// decisions through each breaker's contract with the engine's one-pass trip detector.

import { detectTrips, type DecisionRecord } from "@agent-authority/engine";
import { Refusal } from "../common/index.js";
import type { SignalKey, WatchedBreaker } from "../../store/breakers/index.js";
import type { Store } from "../../store/core/index.js";
import { visibleAgent } from "../agents/index.js";
import type { Caller, ServiceContext } from "../common/index.js";
import { contractSpec, SIGNAL_RECORDS } from "./contracts.js";
import { findBreaker } from "./breaker-reads.js";
import { iso } from "../common/index.js";

export const COUNTERFACTUAL_DAYS = 90;
const DAY_MS = 86_400_000;
/** Signals read per query: memory for raw rows stays bounded while the history is built. */
const PAGE = 250_000;

/** The agent's decisions of the window (`from`, `to`] as the contracts read them, in order. */
export async function signalHistory(store: Store, agentId: string, from: number, to: number): Promise<DecisionRecord[]> {
  const paths = store.breakerPath();
  const history: DecisionRecord[] = [];
  let after: SignalKey | null = null;
  for (;;) {
    const page = await paths.signalPage(agentId, from, to, after, PAGE);
    for (const row of page) {
      const proto = SIGNAL_RECORDS[Number(row.signal)]!;
      history.push(
        proto.reason_code === undefined
          ? { at: Number(row.at), outcome: proto.outcome }
          : { at: Number(row.at), outcome: proto.outcome, reason_code: proto.reason_code },
      );
    }
    if (page.length < PAGE) return history;
    const last = page[page.length - 1]!;
    after = [Number(last.at), Number(last.seq)];
  }
}

export interface BreakerCount {
  readonly breaker_id: string;
  readonly trip_times: readonly number[];
}

/**
 * The trips each breaker would have made over the last 90 days. The replay starts with no decision
 * before the window and the contract not breached, so a trip counted here is an entry into
 * `breached` seen inside the window.
 */
export async function countTrips(store: Store, agentId: string, breakers: readonly WatchedBreaker[], now: number): Promise<BreakerCount[]> {
  const history = await signalHistory(store, agentId, now - COUNTERFACTUAL_DAYS * DAY_MS, now);
  return breakers.map(({ breaker, contract }) => ({
    breaker_id: breaker.id,
    trip_times: detectTrips(history, contractSpec(contract)).map((t) => t.at),
  }));
}

/** `GET /v1/agents/{agent_id}/breakers/counterfactual`, narrowed by `?breaker_id=`. */
export async function breakerCounterfactual(
  ctx: ServiceContext,
  caller: Caller,
  agentId: string,
  breakerId: string | undefined,
): Promise<Record<string, unknown>> {
  await visibleAgent(ctx.store, caller, agentId);
  let watched = await ctx.store.breakerPath().watchedBreakers(agentId, false);
  if (breakerId !== undefined) {
    const breaker = await findBreaker(ctx.store, breakerId);
    if (breaker.agent_id !== agentId) throw new Refusal("breaker_not_found", `no breaker \`${breakerId}\` of agent \`${agentId}\``);
    watched = watched.filter((w) => w.breaker.id === breakerId);
  }
  const counts = watched.length === 0 ? [] : await countTrips(ctx.store, agentId, watched, ctx.now());
  return {
    window_days: COUNTERFACTUAL_DAYS,
    breakers: counts.map((c) => ({ breaker_id: c.breaker_id, trips: c.trip_times.length, trip_times: c.trip_times.map(iso) })),
  };
}
