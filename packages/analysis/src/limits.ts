// The analysis package's limits: every solver call is bounded, and so is the work around it.

/** Frozen limits of the symbolic analysis; units last in each name. */
export const ANALYSIS_LIMITS = Object.freeze({
  /** The work (the solver's resource units, `rlimit`) one solver call may do before its answer is `unknown`. */
  solverCallWork: 1_000_000,
  /** The work one whole question (a diff, a lint proof, an explanation) may do, all its calls together. */
  questionWork: 4_000_000,
  /** The CPU time one solver call may take (where the solver works without counting units: strings chiefly). */
  solverCallCpuMs: 5_000,
  /** The CPU time one whole question may take, all its calls together. */
  questionCpuMs: 20_000,
  /** The time one whole question may take however busy the machine: the ceiling above its work and CPU time. */
  questionMs: 120_000,
  /** The time the proofs of one whole `authority lint` run may take, the solver's start included; past it the files left are not proved, and lint says so. */
  lintRunMs: 30_000,
  /** How long closing an analyzer waits for the solver's threads to end their calls before it ends them (a command's exit, never an answer). */
  closeWaitMs: 5_000,
  /** The memory the solver may use; over it a call answers `unknown`. */
  solverMemoryMegabytes: 1_024,
  /** The work and CPU time one search may spend bringing its witness to the fewest names; past either, the fewest found so far is kept. */
  witnessMinimiseWork: 150_000,
  witnessMinimiseCpuMs: 750,
  /** How many candidate witnesses a question tries before it answers `unknown` because none was confirmed. */
  witnessAttemptsMax: 4,
  /** How many operands of `&&` and `||` lint tests for redundancy, one solver call each. */
  redundancyOperandsMax: 64,
  /** The highest code point the solver's strings hold (Z3's Unicode range); a literal above it is not analysed. */
  codePointMax: 0x2ffff,
});
