// Shrunk counterexamples found by the property suites, kept as permanent cases.
// Each entry says what it once broke; the suites run them first on every run.
import type { GrantTerms } from "@agent-authority/lattice";

export const PERMANENT_PAIRS: (readonly [GrantTerms, GrantTerms])[] = [];
