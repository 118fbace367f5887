// Replicas starting together on a PostgreSQL schema that does not exist yet: the schema is created
// and every migration applied exactly once, whichever start comes first.

import { describe, expect, it } from "vitest";
import { MIGRATIONS, openStore } from "@agent-authority/server";
import { pgProblem, PG_URL, postgresTarget } from "./targets.js";

describe("several starts on an empty PostgreSQL schema", () => {
  if (pgProblem !== null) {
    it.skip(`skipped because PostgreSQL is unreachable at ${PG_URL}: ${pgProblem}`, () => undefined);
    return;
  }

  it("create the schema and apply each migration once, however many race", async () => {
    for (let round = 0; round < 3; round += 1) {
      const db = await postgresTarget.create();
      // Each start has its own pool, as separate processes do.
      const replicas = Array.from({ length: 6 }, () => openStore(db.url, { schema: db.schema! }));
      try {
        const applied = await Promise.all(replicas.map((replica) => replica.migrate(Date.now())));
        expect(applied.filter((versions) => versions.length > 0)).toEqual([MIGRATIONS.map((m) => m.version)]);
        expect(await replicas[0]!.countKeys()).toBe(0);
      } finally {
        await Promise.all(replicas.map((replica) => replica.close()));
        await db.dispose();
      }
    }
  });
});
