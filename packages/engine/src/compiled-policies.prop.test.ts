// The policy gate's compiled policies (decision 0151): the entry compared first, the one last given,
// is always the one a plain map by key with the same bound would give. Random texts and origins
// from small pools (one text too long for a stored policy but not for a residual), asked in random
// order of a cache that keeps one to four, against such a map.
import { compilePolicy } from "@agent-authority/language";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Compiled, type CompiledOrigin, CompiledPolicies } from "./compiled-policies.js";

const params = (runs: number): fc.Parameters<unknown> => ({ numRuns: runs, seed: Number(process.env["FC_SEED"] ?? 20261129) });

const TEXTS = [
  "amount_minor <= 50000 && (amount_minor < 10000 || approver != null)",
  'tool == "crm.read"',
  "amount_minor <",
  `${"amount_minor < 1 || ".repeat(220)}approver != null`,
];
const ORIGINS: readonly CompiledOrigin[] = ["stored", "residual"];

/** Whether each text compiles as each origin, compiled once. */
const COMPILES = new Map<string, boolean>(
  TEXTS.flatMap((t) => ORIGINS.map((o) => [`${o} ${t}`, compilePolicy(t, { origin: o }).ok] as const)),
);

const askArb = fc.record({ text: fc.constantFrom(...TEXTS), origin: fc.constantFrom(...ORIGINS) });

describe("the policy gate's compiled policies", () => {
  it("give the entry a map by text and origin, bounded the same, would give", () => {
    const seen = { last: 0, map: 0, dropped: 0 };
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(askArb, { minLength: 1, maxLength: 30 }), (max, asks) => {
        const cache = new CompiledPolicies(max);
        const model = new Map<string, Compiled>();
        const given = new Set<Compiled>();
        let previous = "";
        for (const { text, origin } of asks) {
          const key = `${origin} ${text}`;
          const entry = cache.get(text, origin);
          const kept = model.get(key);
          if (kept !== undefined) {
            expect(entry).toBe(kept);
            if (key === previous) seen.last += 1;
            else seen.map += 1;
          } else {
            // Compiled afresh, as its origin says: never an entry given before for another key.
            expect(given.has(entry)).toBe(false);
            expect(entry.result.ok).toBe(COMPILES.get(key));
            if (model.size >= max) {
              model.delete(model.keys().next().value as string);
              seen.dropped += 1;
            }
            model.set(key, entry);
            given.add(entry);
          }
          previous = key;
        }
      }),
      params(600),
    );
    // The last entry, the map and the bound each decided many answers.
    expect(Math.min(seen.last, seen.map, seen.dropped)).toBeGreaterThan(250);
  });
});
