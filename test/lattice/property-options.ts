// Shared fast-check settings: at least 1,000 runs per property, and seeds that can be replayed.
//
// A failing property prints its seed and path. Replay it with
//   AUTHORITY_FC_SEED=<seed> AUTHORITY_FC_PATH=<path> npm test -- test/lattice
// then add the shrunk counterexample to the permanent cases of the suite.
import type fc from "fast-check";

export function propertyOptions<T>(examples: T[] = []): fc.Parameters<T> {
  const runs = Number(process.env.AUTHORITY_FC_RUNS ?? "1000");
  const seed = process.env.AUTHORITY_FC_SEED;
  const path = process.env.AUTHORITY_FC_PATH;
  return {
    numRuns: Math.max(runs, 1),
    examples,
    ...(seed !== undefined ? { seed: Number(seed) } : {}),
    ...(path !== undefined ? { path } : {}),
  };
}
