// The policy gate's compiled policies by text, each with the verdicts last made from it.

import { compilePolicy, type CompileResult } from "@agent-authority/language";
import { PolicyVerdicts } from "./policy-verdicts.js";

/** A policy compiled, and the verdicts last made from it (policy-verdicts.ts). */
export interface Compiled {
  readonly result: CompileResult;
  readonly verdicts: PolicyVerdicts;
}

/** How a text is compiled: as a grant's stored policy, or as a residual under its own bound (decision 0131). */
export type CompiledOrigin = "stored" | "residual";

/**
 * Compiled policies by text, at most `max` of them, the first compiled dropped first: compiling is
 * the costly step and policies repeat across decisions. The entry last given is compared first, by
 * its key, before the map is asked: a gate mostly decides one policy many times in turn, and the
 * lookup by text was a twentieth of threshold's decision (decision 0151). The last entry given is
 * always one the map holds (one just found or just added), so it is the one the map would give.
 *
 * The cache holds no state that changes a decision: the same text always compiles the same way,
 * and a verdict kept is the one the same quotes would build.
 */
export class CompiledPolicies {
  private readonly byKey = new Map<string, Compiled>();
  private lastKey: string | undefined;
  private last: Compiled | undefined;

  constructor(private readonly max: number) {}

  /** `text` compiled as `origin` says, from the cache when it is there. */
  get(text: string, origin: CompiledOrigin): Compiled {
    // A residual is keyed apart: it compiles under its own bound, not the policy text limit.
    const key = origin === "residual" ? `\u0000residual\u0000${text}` : text;
    if (key === this.lastKey) return this.last!;
    const entry = this.byKey.get(key) ?? this.add(key, text, origin);
    this.lastKey = key;
    this.last = entry;
    return entry;
  }

  private add(key: string, text: string, origin: CompiledOrigin): Compiled {
    const entry = { result: compilePolicy(text, { origin }), verdicts: new PolicyVerdicts() };
    if (this.byKey.size >= this.max) this.byKey.delete(this.byKey.keys().next().value as string);
    this.byKey.set(key, entry);
    return entry;
  }
}
