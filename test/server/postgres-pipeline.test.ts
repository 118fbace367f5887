// The decision path's reads sent together on PostgreSQL (decision 0311): the statements after the
// tree's lock read what its holder committed, and a grant the agent does not hold waits for no lock.

import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GrantRecord } from "@agent-authority/server";
import { grantRecord, T0 } from "./store-records.js";
import { openTestStore, pgProblem, PG_URL, postgresTarget, type TestStore } from "./targets.js";

/** Polls for a waiting backend at most this many times, 10 ms apart. */
const POLLS_MAX = 1_000;

const grant = (id: string, agentId: string): GrantRecord => grantRecord(agentId, { id });

describe("pipelined decision reads on PostgreSQL", () => {
  if (pgProblem !== null) {
    it.skip(`skipped because PostgreSQL is unreachable at ${PG_URL}: ${pgProblem}`, () => undefined);
    return;
  }
  let db: TestStore;
  const clients: pg.Client[] = [];
  const client = async (): Promise<pg.Client> => {
    const c = new pg.Client({ connectionString: db.url, options: `-c search_path=${db.schema}` });
    await c.connect();
    clients.push(c);
    return c;
  };
  beforeAll(async () => {
    db = await openTestStore(postgresTarget, T0);
  });
  afterAll(async () => {
    for (const c of clients) await c.end();
    await db?.close();
  });

  it("reads the chain's usage after the tree's lock, as its holder committed it; a grant not held waits for no lock", async () => {
    const holder = (
      await db.store.createAgentIfAbsent({
        id: "agt_0000000000pipelineholder0",
        name: "pipeline-holder",
        description: null,
        created_at: T0,
        created_by: "admin",
      })
    ).agent;
    const stranger = (
      await db.store.createAgentIfAbsent({
        id: "agt_000000000pipelinestranger0",
        name: "pipeline-stranger",
        description: null,
        created_at: T0,
        created_by: "admin",
      })
    ).agent;
    const g = grant("grt_0000000000000pipelinegrant0", holder.id);
    await db.store.insertGrant(g);
    const locker = await client();
    const watcher = await client();
    await locker.query("BEGIN");
    await locker.query("SELECT id FROM grants WHERE id = $1 FOR UPDATE", [g.id]);
    await locker.query("INSERT INTO grant_totals (grant_id, uses, settled_minor) VALUES ($1, 3, 250)", [g.id]);
    // Not held: answered while the tree stays locked.
    expect((await db.store.batchedTransaction((tx) => tx.heldTree(g.id, stranger.id, "development", T0))).chain).toEqual([]);
    const reading = db.store.batchedTransaction((tx) => tx.heldTree(g.id, holder.id, "development", T0));
    const lockerPid = (await locker.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
    let waiting = 0;
    for (let poll = 0; poll < POLLS_MAX && waiting === 0; poll += 1) {
      waiting = (await watcher.query("SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", [lockerPid]))
        .rows[0].n as number;
      if (waiting === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(waiting).toBe(1);
    await locker.query("COMMIT");
    expect((await reading).usage.get(g.id)).toEqual({ uses: 3, held_minor: 0, settled_minor: 250 });
  });
});
