// The ledger logger's pass reads each tree only up to as many waiting records as it takes (decision
// 1951): on random ledgers of several trees, with cursors anywhere, gaps in `seq` and limits smaller
// and larger than the backlog, a pass's records are those of the order over every waiting record.
import fc from "fast-check";
import { expect, it } from "vitest";
import { forEachStore, storeForSuite } from "./targets.js";

interface Row {
  readonly tree: string;
  readonly seq: number;
  readonly at: number;
}

/** The pass over every waiting record: each tree's after its cursor, by the latest time along the tree, then tree and `seq`. */
function reference(rows: readonly Row[], cursors: ReadonlyMap<string, number>, limit: number): string[] {
  const waiting = rows
    .filter((r) => r.seq > (cursors.get(r.tree) ?? 0))
    .sort((a, b) => (a.tree === b.tree ? a.seq - b.seq : a.tree < b.tree ? -1 : 1));
  const sealed = new Map<Row, number>();
  let tree = "";
  let latest = 0;
  for (const row of waiting) {
    latest = row.tree === tree ? Math.max(latest, row.at) : row.at;
    tree = row.tree;
    sealed.set(row, latest);
  }
  const order = (a: Row, b: Row): number => sealed.get(a)! - sealed.get(b)! || (a.tree < b.tree ? -1 : a.tree > b.tree ? 1 : a.seq - b.seq);
  return [...waiting]
    .sort(order)
    .slice(0, limit)
    .map((r) => `${r.tree}#${r.seq}`);
}

const ledgerArb = fc
  .array(
    fc.record({
      // Rising `seq`s with gaps of up to three.
      steps: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 12 }),
      times: fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 12, maxLength: 12 }),
      cursor: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
    }),
    { minLength: 1, maxLength: 4 },
  )
  .map((trees) => {
    const rows: Row[] = [];
    const cursors = new Map<string, number>();
    trees.forEach((t, i) => {
      let seq = 0;
      t.steps.forEach((step, j) => {
        seq += step;
        rows.push({ tree: `t${i}`, seq, at: t.times[j]! });
      });
      if (t.cursor !== undefined) cursors.set(`t${i}`, t.cursor);
    });
    return { rows, cursors };
  });

forEachStore("the ledger logger's pending records", (target) => {
  const testStore = storeForSuite(target);

  it("are, for any limit, the first of the order over every waiting record", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(ledgerArb, fc.integer({ min: 1, max: 40 }), async (ledger, limit) => {
        // Records are never deleted: each run has trees of its own, and leaves them all logged.
        run += 1;
        const rename = (tree: string): string => `r${run}${tree}`;
        const rows = ledger.rows.map((r) => ({ ...r, tree: rename(r.tree) }));
        const cursors = new Map([...ledger.cursors].map(([tree, seq]) => [rename(tree), seq]));
        const values = rows.map(() => "(?, ?, ?, 'decision', 'grt_x', 'agt_x', '{}', 'p', 'h', ?)").join(", ");
        await testStore().raw(
          `INSERT INTO ledger (id, tree_id, seq, kind, grant_id, agent_id, record, prev_hash, hash, created_at) VALUES ${values}`,
          rows.flatMap((r) => [`led_${r.tree}_${r.seq}`, r.tree, r.seq, r.at]),
        );
        if (cursors.size > 0)
          await testStore().raw(
            `INSERT INTO ledger_log_trees (tree_id, seq) VALUES ${[...cursors].map(() => "(?, ?)").join(", ")}`,
            [...cursors].flat(),
          );
        const expected = reference(rows, cursors, limit);
        const trees = [...new Set(rows.map((r) => r.tree))];
        try {
          const all = await testStore().store.ledgerLog().pending("all", limit);
          expect(all.map((r) => `${r.tree_id}#${r.seq}`)).toEqual(expected);
          const named = await testStore().store.ledgerLog().pending({ trees }, limit);
          expect(named.map((r) => `${r.tree_id}#${r.seq}`)).toEqual(expected);
        } finally {
          // Every record of the run logged, so that the next run's sweep sees its own alone (a failed run's too, while shrinking).
          await testStore().raw(`DELETE FROM ledger_log_trees WHERE tree_id IN (${trees.map(() => "?").join(", ")})`, trees);
          await testStore().raw(
            `INSERT INTO ledger_log_trees (tree_id, seq) VALUES ${trees.map(() => "(?, ?)").join(", ")}`,
            trees.flatMap((tree) => [tree, Math.max(...rows.filter((r) => r.tree === tree).map((r) => r.seq))]),
          );
        }
      }),
      { numRuns: 40, seed: Number(process.env["FC_SEED"] ?? 20261129) },
    );
  }, 120_000);
});
