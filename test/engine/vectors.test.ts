// The decision vectors of test/engine/vectors, run through the engine's adapter.
import { describe, expect, it } from "vitest";
import { decide } from "@agent-authority/engine";
import { inputOf, loadVectors, observeDecision, type DecisionAdapter } from "./vectors.js";

const engineAdapter: DecisionAdapter = {
  name: "engine",
  async decide({ request, chain, state, now }) {
    return observeDecision(decide(request, chain, state, now));
  },
};

const file = loadVectors();

describe(`decision vectors (${engineAdapter.name})`, () => {
  it("are many and uniquely named", () => {
    expect(file.vectors.length).toBeGreaterThanOrEqual(40);
    expect(new Set(file.vectors.map((v) => v.name)).size).toBe(file.vectors.length);
  });

  for (const vector of file.vectors) {
    it(vector.name, async () => {
      const observed = await engineAdapter.decide(inputOf(file, vector));
      expect(observed).toMatchObject(vector.expect);
      if (vector.expect.would_outcome === undefined)
        expect(observed.would_outcome === undefined || observed.outcome === "allow").toBe(true);
    });
  }
});
