// settledInOrder, which every pipelined PostgreSQL read and write of a decision goes through:
// it answers only once every statement has, and a failure anywhere fails the whole (fail closed).

import { describe, expect, it } from "vitest";
import { settledInOrder } from "../../server/src/store/sql/index.js";

/** A promise settled by hand, to order settlements without timers. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

describe("settledInOrder", () => {
  it("answers every value in the order sent", async () => {
    await expect(settledInOrder([Promise.resolve(1), Promise.resolve("b"), Promise.resolve(undefined)])).resolves.toEqual([
      1,
      "b",
      undefined,
    ]);
  });

  it("throws the failure that came first, and only after every statement is answered", async () => {
    const lock = deferred<unknown>();
    const read = deferred<unknown>();
    const write = deferred<unknown>();
    let settled = false;
    const all = settledInOrder([lock.promise, read.promise, write.promise]).finally(() => {
      settled = true;
    });
    all.catch(() => undefined);
    lock.reject(new Error("lock timeout"));
    read.reject(new Error("current transaction is aborted"));
    await new Promise((done) => setImmediate(done));
    expect(settled).toBe(false);
    write.resolve("written");
    await expect(all).rejects.toThrow("lock timeout");
  });

  it("fails when any one statement fails, even the last of many that succeed", async () => {
    const promises = [...Array.from({ length: 5 }, (_, i) => Promise.resolve(i)), Promise.reject(new Error("seal refused"))];
    await expect(settledInOrder(promises)).rejects.toThrow("seal refused");
  });
});
