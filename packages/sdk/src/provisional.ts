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
