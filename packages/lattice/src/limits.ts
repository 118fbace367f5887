// Every bound of the lattice in one frozen object; units come last in each name.

export const LATTICE_LIMITS = Object.freeze({
  /** Characters of one policy text the conjunct scanner reads; a longer text is one conjunct. */
  policyScanCharsMax: 1 << 20,
  /** Nesting of parenthesised conjunctions the scanner splits; deeper ones stay whole. */
  conjunctDepthMax: 64,
});
