// Types of the endpoints whose schemas @agent-authority/api does not define yet, written from DESIGN.md,
// and names derived from generated types.
// Each is replaced by its generated type once the schema appears (docs/decisions/0501-sdk-types.md).
import type { AuthorizeBody, Decision } from "./generated/types.js";

/** The outcome of a decision: `allow`, or one of the refusals `deny`, `exhausted`, `gated`. */
export type Outcome = Decision["outcome"];

/** What an agent presents about itself, in the certificate's own field names (DESIGN.md §5, gate 5). */
export type Attestation = NonNullable<AuthorizeBody["attestation"]>;

/** The body of `POST /v1/grant-families`, as `authority compile` writes it. */
export interface GrantFamilyBody {
  readonly id: string;
  readonly version: number;
  readonly reviewed_by: readonly string[];
  readonly description?: string;
  readonly parameters: { readonly [name: string]: unknown };
  readonly grant: { readonly [field: string]: unknown };
  readonly approval?: { readonly required?: boolean; readonly above_budget_minor?: number; readonly reason?: string };
  readonly examples?: readonly unknown[];
  readonly content_hash: string;
}

/** A stored family: its reviewed body plus whatever the server records about it. */
export interface GrantFamily extends GrantFamilyBody {
  readonly created_at?: string;
}

export interface GrantFamilyList {
  readonly families: readonly GrantFamily[];
}

/** The body of `POST /v1/grant-families/{family_id}/instantiate`. */
export interface FamilyInstantiateBody {
  readonly parameters: { readonly [name: string]: number | string | boolean };
  /** Absent: the family's current version. */
  readonly version?: number;
}

export type ContractMetric = "refusal_rate" | "deny_rate" | "gated_rate" | "exhausted_rate" | "out_of_scope_rate";

/** A behavioural contract: a ceiling on a per-decision rate of one agent (DESIGN.md §8). */
export interface ContractBody {
  readonly agent_id: string;
  readonly metric: ContractMetric;
  readonly ceiling: number;
  readonly window_decisions?: number;
  readonly window_hours?: number;
}

export interface Contract extends ContractBody {
  readonly id: string;
  readonly declared_by: string;
  readonly status?: "breached" | "within" | "not_demonstrated";
}

export interface BreakerBody {
  readonly contract_id: string;
  readonly action: "notify" | "revoke";
}

export interface Breaker extends BreakerBody {
  readonly id: string;
  readonly mode: "observe" | "armed";
}

/** The body of `POST /v1/breakers/{breaker_id}/arm`, fixed by the specification. */
export interface BreakerArmBody {
  readonly basis: string;
  readonly expecting_trips: number;
}

/** The answer of `GET /v1/agents/{agent_id}/breakers/counterfactual` (DESIGN.md §8). */
export interface Counterfactual {
  readonly window_days: number;
  readonly breakers: readonly { readonly breaker_id: string; readonly trips: number; readonly trip_times: readonly string[] }[];
}

/** A finding raised by a breaker trip with action `notify`. */
export interface Finding {
  readonly id: string;
  readonly agent_id: string;
  readonly breaker_id?: string;
  readonly contract_id?: string;
  readonly declared_by?: string;
  readonly raised_at?: string;
  readonly [field: string]: unknown;
}

export interface FindingList {
  readonly findings: readonly Finding[];
}
