// The callers the main thread parks while the authorize worker decides: every caller is settled
// exactly once, with its own answer, and the slots never outnumber the most callers that waited at
// once, however long the server runs (a table that grew with every request was the old form).

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Waiters } from "../../server/src/http/waiters.js";

type Step =
  | { readonly kind: "add" }
  | { readonly kind: "resolve" | "reject"; readonly pick: number }
  | { readonly kind: "stale"; readonly id: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.constant({ kind: "add" as const }),
  fc.record({ kind: fc.constantFrom("resolve" as const, "reject" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("stale" as const), id: fc.nat({ max: 40 }) }),
);

describe("Waiters", () => {
  it("settles each caller once with its own value or error, ignores ids that hold none, and keeps no more slots than callers ever waited at once", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200 }), (steps) => {
        const waiters = new Waiters<string>();
        // caller number -> what it heard; id -> the caller that holds it now
        const heard: string[][] = [];
        const holder = new Map<number, number>();
        let most = 0;
        for (const s of steps) {
          if (s.kind === "add") {
            const caller = heard.length;
            heard.push([]);
            const id = waiters.add(
              (v) => heard[caller]!.push(`value ${v}`),
              (e) => heard[caller]!.push(`error ${String(e)}`),
            );
            expect(holder.has(id)).toBe(false);
            holder.set(id, caller);
            most = Math.max(most, holder.size);
            // An id is a slot: never beyond the most callers that have waited at once.
            expect(id).toBeLessThan(most);
          } else if (s.kind === "stale") {
            if (holder.has(s.id)) continue;
            const before = heard.map((h) => h.length);
            waiters.resolve(s.id, "stale");
            waiters.reject(s.id, "stale");
            expect(heard.map((h) => h.length)).toEqual(before);
          } else if (holder.size > 0) {
            const ids = [...holder.keys()];
            const id = ids[s.pick % ids.length]!;
            const caller = holder.get(id)!;
            holder.delete(id);
            if (s.kind === "resolve") waiters.resolve(id, `for ${caller}`);
            else waiters.reject(id, `for ${caller}`);
            expect(heard[caller]).toEqual([s.kind === "resolve" ? `value for ${caller}` : `error for ${caller}`]);
            // Settled once: a second answer under the same id reaches nobody until the id is handed out again.
            waiters.resolve(id, "again");
            expect(heard[caller]).toHaveLength(1);
          }
        }
        waiters.rejectAll("stopped");
        for (const [, caller] of holder) expect(heard[caller]).toEqual(["error stopped"]);
        for (const h of heard) expect(h.length).toBeLessThanOrEqual(1);
        // Every slot is free again: the next caller takes the first.
        expect(
          waiters.add(
            () => undefined,
            () => undefined,
          ),
        ).toBe(0);
      }),
      { numRuns: 500 },
    );
  });

  it("uses the same slot again and again for callers that wait one at a time", () => {
    const waiters = new Waiters<number>();
    const ids = new Set<number>();
    for (let i = 0; i < 10_000; i += 1) {
      const id = waiters.add(
        () => undefined,
        () => undefined,
      );
      ids.add(id);
      waiters.resolve(id, i);
    }
    expect([...ids]).toEqual([0]);
  });
});
