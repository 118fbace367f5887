// Shrunk counterexamples found by the engine's property suites, kept as permanent cases.
// Each entry says what it once broke; the suites run them on every run.
import type { ChainLink } from "@agent-authority/engine";
import type { GrantTerms, ParentUsage } from "@agent-authority/lattice";
import type { Action } from "./arbitraries.js";

export interface SoundnessCase {
  readonly why: string;
  readonly parent: GrantTerms;
  readonly child: GrantTerms;
  readonly usage: ParentUsage;
  readonly pair: { parent: ChainLink["usage"]; child: ChainLink["usage"] };
  readonly action: Action;
}

export const PERMANENT_SOUNDNESS: readonly SoundnessCase[] = [];
