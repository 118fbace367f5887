// Every bound of the engine in one frozen object; units come last in each name.

export const HOUR_MS = 3_600_000;

export const ENGINE_LIMITS = Object.freeze({
  /** The longest chain the engine decides on; deeper chains are refused. */
  chainLinksMax: 64,
  /** Compiled policies kept in memory, keyed by their text. */
  compiledPoliciesMax: 4096,
});

/** A hold lives with the grant, and at most this long unless the state configures otherwise. */
export const DEFAULT_HOLD_LIFETIME_MS = 24 * HOUR_MS;

/** The two-sided 95% normal quantile used by the contract statistics (docs/breakers.md). */
export const Z_95 = 1.959964;
