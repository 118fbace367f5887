// The decision cache's types: one cache per SQLite connection (INVARIANT decision-cache,
// sqlite-driver.ts), holding entries of several kinds, each kind with the type of its values, so
// that a reader gets back what was put in without a cast (decision 0351).

/** What a cache knows of the entries of one kind: enough to empty and count them. */
interface KindEntries {
  clear(): void;
  readonly size: number;
}

/**
 * The rows one connection keeps for its decision path. It holds no values itself: each `CacheKind`
 * keeps its own entries for each cache, typed; the cache empties and counts them all at once.
 */
export class DecisionCache {
  readonly #kinds = new Set<KindEntries>();

  /** Entries of every kind. */
  get size(): number {
    let size = 0;
    for (const entries of this.#kinds) size += entries.size;
    return size;
  }

  clear(): void {
    for (const entries of this.#kinds) entries.clear();
  }

  /** Called by a CacheKind the first time it keeps an entry in this cache, so that `clear` and `size` reach it. */
  track(entries: KindEntries): void {
    this.#kinds.add(entries);
  }
}

/**
 * A kind of entry with the type `T` of its values, made once at module level by the module that
 * reads and writes it (`new CacheKind<KeyRecord | null>()`). Ids are unique within a kind only.
 */
export class CacheKind<T> {
  readonly #entries = new WeakMap<DecisionCache, Map<string, T>>();

  get(cache: DecisionCache, id: string): T | undefined {
    return this.#entries.get(cache)?.get(id);
  }

  set(cache: DecisionCache, id: string, value: T): void {
    let entries = this.#entries.get(cache);
    if (entries === undefined) {
      entries = new Map<string, T>();
      this.#entries.set(cache, entries);
      cache.track(entries);
    }
    entries.set(id, value);
  }
}
