// Decision vectors as data, and the adapter they run through: the engine implements it here, and
// the server over HTTP or the command line can implement it too and run the very same vectors.
import { readFileSync } from "node:fs";
import type { ChainLink, Decision, DecisionRequest, DecisionState } from "@agent-authority/engine";

/** What a vector compares of a decision: outcomes and codes, never the sentences. */
export interface ObservedDecision {
  readonly outcome: Decision["outcome"];
  readonly would_outcome?: Decision["outcome"];
  readonly decided_by: Decision["decided_by"];
  readonly reason_code: string;
  readonly residual?: string;
  readonly approver: string | null;
  readonly counted: boolean;
  readonly holds: readonly { readonly grant_id: string; readonly amount_minor: number; readonly expires_at: string }[];
  /** The grant the deciding gate's reason is about, when it names one. */
  readonly grant_id?: string;
}

export interface DecisionInput {
  readonly request: DecisionRequest;
  readonly chain: readonly ChainLink[];
  readonly state: DecisionState;
  readonly now: number;
}

export interface DecisionAdapter {
  readonly name: string;
  decide(input: DecisionInput): Promise<ObservedDecision>;
}

interface LinkSpec {
  readonly grant_id: string;
  readonly agent_id: string;
  readonly status?: ChainLink["status"];
  readonly terms?: Record<string, unknown>;
  readonly usage?: Record<string, unknown>;
}

export interface DecisionVector {
  readonly name: string;
  readonly chain?: readonly LinkSpec[];
  readonly request?: Record<string, unknown>;
  readonly state?: Record<string, unknown>;
  readonly now?: string;
  readonly expect: Partial<ObservedDecision>;
}

interface VectorFile {
  readonly description: string;
  readonly defaults: {
    now: string;
    terms: Record<string, unknown>;
    chain: readonly LinkSpec[];
    request: Record<string, unknown>;
    state: Record<string, unknown>;
  };
  readonly vectors: readonly DecisionVector[];
}

/** Keys whose values the files write as RFC 3339 times and the engine reads as epoch milliseconds. */
const TIME_KEYS = new Set(["start", "end", "expires_at", "revoked_at"]);

function withTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withTimes);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, TIME_KEYS.has(k) && typeof v === "string" ? Date.parse(v) : withTimes(v)]),
  );
}

export function loadVectors(): VectorFile {
  return JSON.parse(readFileSync(new URL("./vectors/decisions.json", import.meta.url), "utf8")) as VectorFile;
}

/** The engine's arguments for one vector: the file's defaults with the vector's changes applied. */
export function inputOf(file: VectorFile, vector: DecisionVector): DecisionInput {
  const d = file.defaults;
  const chain = (vector.chain ?? d.chain).map(
    (link) =>
      withTimes({
        grant_id: link.grant_id,
        agent_id: link.agent_id,
        status: link.status ?? "active",
        terms: { ...d.terms, ...link.terms },
        usage: { uses: 0, settled_minor: 0, holds: [], ...link.usage },
      }) as ChainLink,
  );
  return {
    chain,
    request: withTimes({ ...d.request, ...vector.request }) as DecisionRequest,
    state: withTimes({ ...d.state, ...vector.state }) as DecisionState,
    now: Date.parse(vector.now ?? d.now),
  };
}

/** Reduces a decision to what vectors compare. */
export function observeDecision(decision: Decision): ObservedDecision {
  const deciding = decision.gates.find((g) => g.result === "fail");
  return {
    outcome: decision.outcome,
    ...(decision.would_outcome !== undefined ? { would_outcome: decision.would_outcome } : {}),
    decided_by: decision.decided_by,
    reason_code: decision.reason_code,
    ...(decision.residual !== undefined ? { residual: decision.residual } : {}),
    approver: decision.approver,
    counted: decision.counted,
    holds: decision.holds.map((h) => ({
      grant_id: h.grant_id,
      amount_minor: h.amount_minor,
      expires_at: new Date(h.expires_at).toISOString(),
    })),
    ...(deciding?.grant_id !== undefined ? { grant_id: deciding.grant_id } : {}),
  };
}
