// The analysis package's limits: every solver call is bounded, and so is the work around it.

/** Frozen limits of the symbolic analysis; units last in each name. */
export const ANALYSIS_LIMITS = Object.freeze({
  /** The time one solver call may take before its answer is `unknown`. */
  solverCallMs: 5_000,
  /** The time one whole question (a diff, a lint proof, an explanation) may take, all its calls together. */
  questionMs: 20_000,
  /** The time the proofs of one whole `authority lint` run may take, the solver's start included; past it the files left are not proved, and lint says so. */
  lintRunMs: 30_000,
  /** The memory the solver may use; over it a call answers `unknown`. */
  solverMemoryMegabytes: 1_024,
  /** The time one search may spend bringing its witness to the fewest names; past it, the fewest found so far is kept. */
  witnessMinimiseMs: 750,
  /** How many candidate witnesses a question tries before it answers `unknown` because none was confirmed. */
  witnessAttemptsMax: 4,
  /** How many operands of `&&` and `||` lint tests for redundancy, one solver call each. */
  redundancyOperandsMax: 64,
  /** The highest code point the solver's strings hold (Z3's Unicode range); a literal above it is not analysed. */
  codePointMax: 0x2ffff,
});
