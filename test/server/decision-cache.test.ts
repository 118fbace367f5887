// The decision cache is typed per kind of entry: what a reader gets back has the type it was put in
// with, no cast; ids of two kinds never collide; emptying the cache empties every kind, and two
// connections' caches share nothing (decision 0351).

import { describe, expect, expectTypeOf, it } from "vitest";
import { CacheKind, DecisionCache } from "../../server/src/store/decision-cache.js";

interface Head {
  readonly seq: number;
  readonly hash: string;
}

describe("the decision cache", () => {
  const HEADS = new CacheKind<Head>();
  const NAMES = new CacheKind<string | null>();

  it("answers each kind's values with that kind's type, and undefined for an id not kept", () => {
    const cache = new DecisionCache();
    HEADS.set(cache, "tree-1", { seq: 3, hash: "h3" });
    NAMES.set(cache, "tree-1", null);
    expectTypeOf(HEADS.get(cache, "tree-1")).toEqualTypeOf<Head | undefined>();
    expectTypeOf(NAMES.get(cache, "tree-1")).toEqualTypeOf<string | null | undefined>();
    // The same id under two kinds: two entries, neither hiding the other.
    expect(HEADS.get(cache, "tree-1")).toEqual({ seq: 3, hash: "h3" });
    expect(NAMES.get(cache, "tree-1")).toBeNull();
    expect(HEADS.get(cache, "tree-2")).toBeUndefined();
    expect(cache.size).toBe(2);
  });

  it("empties every kind at once, and a kind kept again after it counts again", () => {
    const cache = new DecisionCache();
    HEADS.set(cache, "a", { seq: 1, hash: "x" });
    NAMES.set(cache, "b", "name");
    NAMES.set(cache, "c", "other");
    expect(cache.size).toBe(3);
    cache.clear();
    expect(cache.size).toBe(0);
    expect(HEADS.get(cache, "a")).toBeUndefined();
    expect(NAMES.get(cache, "b")).toBeUndefined();
    NAMES.set(cache, "b", "again");
    expect(cache.size).toBe(1);
    expect(NAMES.get(cache, "b")).toBe("again");
  });

  it("keeps the entries of each connection's cache apart", () => {
    const one = new DecisionCache();
    const two = new DecisionCache();
    HEADS.set(one, "t", { seq: 1, hash: "one" });
    expect(HEADS.get(two, "t")).toBeUndefined();
    HEADS.set(two, "t", { seq: 2, hash: "two" });
    one.clear();
    expect(HEADS.get(one, "t")).toBeUndefined();
    expect(HEADS.get(two, "t")).toEqual({ seq: 2, hash: "two" });
  });
});
