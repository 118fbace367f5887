// What the store counts for /v1/metrics, on the real SQLite driver: the size of each group-commit
// batch, and database errors told apart from the refusals a transaction throws on purpose.

import { describe, expect, it } from "vitest";
import { ContentionError } from "../../server/src/store/sql/index.js";
import { BATCH_SIZE_BUCKETS, observeFailure, StoreObservations } from "../../server/src/store/sql/index.js";
import { SqliteDriver } from "../../server/src/store/drivers/index.js";

describe("store observations", () => {
  it("counts one batch of the transactions of one event-loop turn, in the bucket of its size", async () => {
    const observations = new StoreObservations();
    const driver = new SqliteDriver(":memory:", { observations });
    await driver.run("CREATE TABLE t (n INTEGER)");
    await Promise.all([1, 2, 3].map((n) => driver.groupTransaction((tx) => tx.run("INSERT INTO t (n) VALUES (?)", [n]))));
    expect(observations.batchCount).toBe(1);
    expect(observations.batchSum).toBe(3);
    expect(observations.batchBuckets[BATCH_SIZE_BUCKETS.indexOf(4)]).toBe(1);
    await driver.close();
  });

  it("counts a database error a caller hears as failed, and a refusal thrown on purpose not at all", async () => {
    const observations = new StoreObservations();
    const driver = new SqliteDriver(":memory:", { observations });
    await expect(driver.groupTransaction((tx) => tx.run("INSERT INTO missing (n) VALUES (1)"))).rejects.toThrow(/no such table/);
    await expect(
      driver.groupTransaction(async () => {
        throw new Error("refused on purpose");
      }),
    ).rejects.toThrow("refused on purpose");
    expect(observations.errors).toEqual([0, 0, 1]);
    observeFailure(observations, new ContentionError(Object.assign(new Error("could not serialize"), { code: "40001" }), 12, 2_000));
    expect(observations.errors).toEqual([0, 1, 1]);
    await driver.close();
  });

  it("hands its counts to another thread as a delta and starts again from zero, and adds a delta up", () => {
    const worker = new StoreObservations();
    worker.batch(1);
    worker.batch(300);
    worker.error("retried");
    expect(worker.touched).toBe(true);
    const delta = worker.take();
    expect(worker.touched).toBe(false);
    const main = new StoreObservations();
    main.add(delta);
    main.add(delta);
    expect(main.batchCount).toBe(4);
    expect(main.batchSum).toBe(602);
    // A batch above the largest bound is counted in the last bucket: none is lost.
    expect(main.batchBuckets[0]).toBe(2);
    expect(main.batchBuckets[BATCH_SIZE_BUCKETS.length - 1]).toBe(2);
    expect(main.errors).toEqual([2, 0, 0]);
  });
});
