// Closing an analyzer: the solver's threads end their calls before they are ended, so that no timer of theirs keeps the process alive.
import { describe, expect, it } from "vitest";
import { check, createAnalyzer, meterFor } from "./solver.js";

/** The timers that keep this process alive (an unreferenced one does not). */
function liveTimers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
}

describe("closing an analyzer", () => {
  it("closed while a call runs, it stops the call and leaves no timer that keeps the process alive", async () => {
    // The clock lowered so that a call whose thread was ended under it still answers, within the test's time.
    const analyzer = await createAnalyzer({ questionMs: 3_000 });
    const c = analyzer.ctx;
    const [x, y] = [c.Int.const("x"), c.Int.const("y")];
    const solver = new c.Solver();
    // Factoring the product of two Mersenne primes (2^61 − 1 and 2^89 − 1): far past a fifth of a second of the solver.
    solver.add(x.gt(1), y.gt(1), x.mul(y).eq(c.Int.val("1427247692705959880439315947500961989719490561")));
    const before = liveTimers();
    const call = check(c, solver, meterFor(analyzer));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await analyzer.close();
    expect((await call).kind).toBe("unknown");
    expect(liveTimers()).toBe(before);
  });
});
