// The grant model of the lattice: the terms that bound a grant's authority, and the canonical bottom.

/** Enforcement modes, least strict first: `observe` records but never refuses, `enforce` refuses. */
export type EnforcementMode = "observe" | "enforce";

/** Who a grant acts for. */
export interface Principal {
  readonly type: "human" | "team" | "service";
  readonly id: string;
}

/**
 * The terms of one grant: everything the lattice orders. Values are immutable; every operation of
 * this package returns a new value and never changes its arguments.
 */
export interface GrantTerms {
  /** Tool names; an entry `ns.*` covers every name that starts with `ns.`. */
  readonly scope: { readonly tool: readonly string[] };
  /** `issued_at` and `expires_at` in epoch milliseconds; a time `t` is inside when start ≤ t < end. */
  readonly window: { readonly start: number; readonly end: number };
  /** The amount budget in minor units; 0 means no spending. */
  readonly budget_amount_minor: number;
  readonly budget_currency: string | null;
  /** The number of allowed decisions; `null` means no use limit. */
  readonly budget_count: number | null;
  readonly conditions: { readonly clean_context: boolean };
  readonly enforcement_mode: EnforcementMode;
  readonly audience: string | null;
  readonly principal: Principal;
  readonly delegation_policy: "none" | "attenuating";
  /** How many further levels of delegation are allowed below this grant; `null` means no cap. */
  readonly delegation_depth_max: number | null;
  /** This grant's own policy expression; `null` is the policy `true`. */
  readonly policy: string | null;
}

/** What has been used of a parent at the moment of delegation. */
export interface ParentUsage {
  /** Allowed decisions so far under the parent (its subtree included). */
  readonly uses: number;
  /** Live holds plus settled amounts, in minor units. */
  readonly spent_minor: number;
}

/** The modes in order of strictness; a larger rank is stricter. */
export const ENFORCEMENT_MODES: readonly EnforcementMode[] = Object.freeze(["observe", "enforce"]);

/** The strictness rank of a mode: `observe` is 0, `enforce` is 1. */
export function modeRank(mode: EnforcementMode): number {
  return ENFORCEMENT_MODES.indexOf(mode);
}

/**
 * The canonical grant that authorizes nothing: no tool, an empty window, no budget, in `enforce`.
 * Every void grant (see `isVoid`) is equivalent to it, and `meet` answers it when two grants have
 * no authority in common (for example different audiences).
 */
export const BOTTOM: GrantTerms = deepFreeze({
  scope: { tool: [] },
  window: { start: 0, end: 0 },
  budget_amount_minor: 0,
  budget_currency: null,
  budget_count: 0,
  conditions: { clean_context: true },
  enforcement_mode: "enforce",
  audience: null,
  principal: { type: "service", id: "" },
  delegation_policy: "none",
  delegation_depth_max: 0,
  policy: "false",
});

/** The window contains no instant: it ends at or before its start. */
export function isEmptyWindow(window: GrantTerms["window"]): boolean {
  return window.start >= window.end;
}

/**
 * A grant is void when it can allow nothing: its window is empty (no decision falls inside it, in
 * any mode), or it is in `enforce` and has no tool or a use budget of zero. An `observe` grant with
 * a window is never void, because `observe` does not refuse on the grant's other terms.
 */
export function isVoid(terms: GrantTerms): boolean {
  if (isEmptyWindow(terms.window)) return true;
  if (terms.enforcement_mode !== "enforce") return false;
  return terms.scope.tool.length === 0 || terms.budget_count === 0;
}

/** Freezes a value and everything reachable from it; used for the values this package builds. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
