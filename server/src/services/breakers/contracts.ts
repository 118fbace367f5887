// Behavioural contracts (docs/breakers.md): declared by a named human, measured live from the signals of
// the agent's sealed decisions with the engine's statistics (the Wilson interval and the status).

import type { ContractCreateBody } from "@agent-authority/api";
import {
  contractStatus,
  countsTowards,
  HOUR_MS,
  wilsonInterval,
  type ContractSpec,
  type ContractStatus,
  type DecisionRecord,
} from "@agent-authority/engine";
import { Refusal } from "../common/index.js";
import { newId } from "../../ids.js";
import { SIGNAL, SIGNAL_COUNT, type BreakerStore, type ContractRow, type SignalCounts } from "../../store/breakers/index.js";
import type { Caller, ServiceContext } from "../common/index.js";
import { visibleAgent } from "../agents/index.js";
import { iso } from "../common/index.js";

/**
 * One representative decision per signal code: a contract reads a signal exactly as the engine's
 * `countsTowards` reads the decision it stands for, so the server never restates the metrics.
 */
export const SIGNAL_RECORDS: readonly DecisionRecord[] = Object.freeze([
  { at: 0, outcome: "allow" },
  { at: 0, outcome: "deny" },
  { at: 0, outcome: "deny", reason_code: "scope.out_of_scope" },
  { at: 0, outcome: "gated" },
  { at: 0, outcome: "exhausted" },
] satisfies DecisionRecord[]);

/** The signal of a sealed decision: its `would_outcome` when it has one, else its outcome. */
export function signalOf(outcome: string, wouldOutcome: string | null | undefined, reasonCode: string | null | undefined): number {
  switch (wouldOutcome ?? outcome) {
    case "allow":
      return SIGNAL.allow;
    case "deny":
      return reasonCode === "scope.out_of_scope" ? SIGNAL.out_of_scope : SIGNAL.deny;
    case "gated":
      return SIGNAL.gated;
    default:
      return SIGNAL.exhausted;
  }
}

export function contractSpec(contract: ContractRow): ContractSpec {
  return {
    metric: contract.metric,
    ceiling: contract.ceiling,
    window_decisions: contract.window_decisions,
    window_hours: contract.window_hours,
  };
}

/** A key naming a contract's window, so that contracts sharing a window are counted once. */
export function windowKey(contract: ContractRow): string {
  return contract.window_decisions !== null ? `d:${contract.window_decisions}` : `h:${contract.window_hours}`;
}

/** Counts the window of a contract ending at `at`. */
export function countWindow(store: BreakerStore, contract: ContractRow, agentId: string, at: number): Promise<SignalCounts> {
  if (contract.window_decisions !== null) return store.countLastDecisions(agentId, contract.window_decisions, at);
  return store.countBetween(agentId, at - contract.window_hours! * HOUR_MS, at);
}

export interface Measure {
  readonly successes: number;
  readonly n: number;
  readonly status: ContractStatus;
}

/** The contract's reading of a counted window, with the engine's definitions. */
export function measureCounts(contract: ContractRow, counts: SignalCounts): Measure {
  let successes = 0;
  let n = 0;
  for (let code = 0; code < SIGNAL_COUNT; code += 1) {
    const c = counts[code] ?? 0;
    n += c;
    if (countsTowards(contract.metric, SIGNAL_RECORDS[code]!)) successes += c;
  }
  return { successes, n, status: contractStatus(successes, n, contract.ceiling) };
}

export function contractView(contract: ContractRow, measure: Measure, now: number): Record<string, unknown> {
  const interval = wilsonInterval(measure.successes, measure.n);
  return {
    id: contract.id,
    agent_id: contract.agent_id,
    metric: contract.metric,
    ceiling: contract.ceiling,
    window_decisions: contract.window_decisions,
    window_hours: contract.window_hours,
    description: contract.description,
    declared_by: contract.declared_by,
    declared_by_email: contract.declared_by_email,
    declared_at: iso(contract.declared_at),
    status: measure.status,
    n: measure.n,
    successes: measure.successes,
    rate: measure.n === 0 ? null : measure.successes / measure.n,
    interval: { lower: interval.lower, upper: interval.upper },
    measured_at: iso(now),
  };
}

/** `POST /v1/agents/{agent_id}/contracts`: the calling human declares it and is named on its trips. */
export async function declareContract(
  ctx: ServiceContext,
  caller: Caller,
  agentId: string,
  body: ContractCreateBody,
): Promise<Record<string, unknown>> {
  if ((body.window_decisions === undefined) === (body.window_hours === undefined)) {
    throw new Refusal("invalid_body", "name exactly one of `window_decisions` and `window_hours`");
  }
  await visibleAgent(ctx.store, caller, agentId);
  const now = ctx.now();
  const contract: ContractRow = {
    id: newId("ctr", now),
    agent_id: agentId,
    metric: body.metric,
    ceiling: body.ceiling,
    window_decisions: body.window_decisions ?? null,
    window_hours: body.window_hours ?? null,
    description: body.description ?? null,
    declared_by: caller.identity,
    declared_by_email: caller.email,
    declared_at: now,
  };
  const paths = ctx.store.breakerPath();
  await paths.insertContract(contract);
  return contractView(contract, measureCounts(contract, await countWindow(paths, contract, agentId, now)), now);
}

/** `GET /v1/agents/{agent_id}/contracts`: every contract of the agent with its live reading. */
export async function listContracts(
  ctx: ServiceContext,
  caller: Caller,
  agentId: string,
): Promise<{ contracts: Record<string, unknown>[] }> {
  await visibleAgent(ctx.store, caller, agentId);
  const now = ctx.now();
  const paths = ctx.store.breakerPath();
  const contracts = await paths.listContracts(agentId);
  const views: Record<string, unknown>[] = [];
  for (const contract of contracts)
    views.push(contractView(contract, measureCounts(contract, await countWindow(paths, contract, agentId, now)), now));
  return { contracts: views };
}
