// The store contract once more on PostgreSQL under the cockroachdb engine profile (decision 0310):
// lock rows instead of advisory locks, every transaction SERIALIZABLE, no TRUNCATE guard.
import { describe, it } from "vitest";
import { storeContract } from "./store-contract.js";
import { cockroachProfileTarget, pgProblem, PG_URL } from "./targets.js";

describe("store contract [postgres, cockroachdb profile]", () => {
  if (pgProblem === null) storeContract(cockroachProfileTarget);
  else it.skip(`skipped because PostgreSQL is unreachable at ${PG_URL}: ${pgProblem}`, () => undefined);
});
