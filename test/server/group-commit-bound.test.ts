// The group commit's bound, at its edge, with real transactions on SQLite: a lane admits exactly
// GROUP_COMMIT_LIMITS.queuedMax transactions not yet answered, refuses the next at once with
// GroupCommitFull (HTTP 409 `contention` with Retry-After, nothing written), and admits again as
// soon as answers free room (decision 0352).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ContentionError, GROUP_COMMIT_LIMITS, GroupCommitFull } from "@agent-authority/server";
import { GroupCommit, type BatchOpener } from "../../server/src/store/drivers/index.js";
import { SqliteConnection } from "../../server/src/store/drivers/index.js";
import { problemAnswer } from "../../server/src/http/problem.js";

const LIMIT = GROUP_COMMIT_LIMITS.queuedMax;

describe("the group commit's queue bound [sqlite]", () => {
  let dir: string;
  let connection: SqliteConnection;
  /** One batch at a time on the one connection, as SqliteDriver's lock gives it. */
  let open: BatchOpener;
  const failures: unknown[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "authority-group-bound-"));
    const db = new Database(join(dir, "bound.db"));
    db.exec("CREATE TABLE t (n INTEGER NOT NULL, lane TEXT)");
    connection = new SqliteConnection(db);
    let tail: Promise<void> = Promise.resolve();
    open = (work) => {
      const run = tail.then(() => work(connection));
      tail = run.catch(() => undefined);
      return run;
    };
    failures.length = 0;
  });

  afterEach(async () => {
    await connection.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (group: GroupCommit, n: number, order?: string): Promise<number> =>
    group.submit((tx) => tx.run("INSERT INTO t (n, lane) VALUES (?, ?)", [n, order ?? null]), order);
  const rows = async (): Promise<number> => Number((await connection.get("SELECT COUNT(*) AS c FROM t"))!["c"]);

  it("admits exactly the limit, refuses the next at once, and admits again once they are answered", async () => {
    expect(LIMIT).toBe(1_024);
    const group = new GroupCommit(open, { onFailure: (error) => failures.push(error) });
    const accepted = Array.from({ length: LIMIT }, (_, i) => insert(group, i));
    let settledSoFar = 0;
    for (const p of accepted)
      void p.then(() => {
        settledSoFar += 1;
      });
    let refusedAt: number | undefined;
    const refused = insert(group, LIMIT).catch((error: unknown) => {
      refusedAt = settledSoFar;
      return error;
    });
    const error = await refused;
    // Refused before any batch committed: at once, not after waiting its turn.
    expect(refusedAt).toBe(0);
    expect(error).toBeInstanceOf(GroupCommitFull);
    expect(error).toBeInstanceOf(ContentionError);
    expect(String(error)).toContain(`holds ${LIMIT} transactions`);
    expect(failures).toEqual([error]);

    expect(await Promise.all(accepted)).toEqual(Array.from({ length: LIMIT }, () => 1));
    // The refused one wrote nothing; every admitted one was committed.
    expect(await rows()).toBe(LIMIT);
    const values = (await connection.all("SELECT n FROM t ORDER BY n")).map((r) => Number(r["n"]));
    expect(values).toEqual(Array.from({ length: LIMIT }, (_, i) => i));

    // Drained: the full limit is admitted again, and the next refused again.
    const again = Array.from({ length: LIMIT }, (_, i) => insert(group, LIMIT + i));
    await expect(insert(group, 2 * LIMIT)).rejects.toBeInstanceOf(GroupCommitFull);
    await Promise.all(again);
    expect(await rows()).toBe(2 * LIMIT);
  });

  it("frees one place for each answer, a failed one included, while the rest still wait", async () => {
    const group = new GroupCommit(open, { queuedMax: 3 });
    const failing = group.submit(async (tx) => {
      await tx.run("INSERT INTO t (n) VALUES (?)", [-1]);
      throw new Error("refused by its own check");
    });
    const waiting = [insert(group, 1), insert(group, 2)];
    await expect(insert(group, 3)).rejects.toBeInstanceOf(GroupCommitFull);
    await expect(failing).rejects.toThrow("refused by its own check");
    await Promise.all(waiting);
    // Three answered: three places free; the failed one's row was undone with it.
    const next = [insert(group, 4), insert(group, 5), insert(group, 6)];
    await expect(insert(group, 7)).rejects.toBeInstanceOf(GroupCommitFull);
    await Promise.all(next);
    expect((await connection.all("SELECT n FROM t ORDER BY n")).map((r) => Number(r["n"]))).toEqual([1, 2, 4, 5, 6]);
  });

  it("bounds each lane on its own", async () => {
    const group = new GroupCommit(open, { lanes: 2, queuedMax: 2 });
    // Orders chosen to hash to different lanes (FNV-1a): one lane full does not refuse the other.
    const [a, b] = twoLanes(2);
    const first = [insert(group, 1, a), insert(group, 2, a)];
    await expect(insert(group, 3, a)).rejects.toBeInstanceOf(GroupCommitFull);
    const other = [insert(group, 4, b), insert(group, 5, b)];
    await expect(insert(group, 6, b)).rejects.toBeInstanceOf(GroupCommitFull);
    await Promise.all([...first, ...other]);
    expect(await rows()).toBe(4);
  });

  it("answers 409 `contention` with Retry-After over HTTP, never a 5xx", () => {
    const answer = problemAnswer(new GroupCommitFull(LIMIT), "/v1/authorize");
    expect(answer.status).toBe(409);
    expect(JSON.parse(answer.text).code).toBe("contention");
    expect(answer.headers["retry-after"]).toBe("1");
    expect(answer.keepable).toBe(false);
  });
});

/** Two order strings that fall in different lanes of `lanes`, by the group commit's own hash. */
function twoLanes(lanes: number): [string, string] {
  const laneOf = (text: string): number => {
    let hash = 0x811c9dc5;
    for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
    return (hash >>> 0) % lanes;
  };
  const first = "tree-0";
  for (let i = 1; i < 100; i += 1) if (laneOf(`tree-${i}`) !== laneOf(first)) return [first, `tree-${i}`];
  throw new Error("no two lanes found");
}
