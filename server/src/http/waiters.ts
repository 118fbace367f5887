// Callers waiting for an answer from another thread, each under a small whole-number id that
// travels with its request. An id is a slot: taken from the free list, given back when its answer
// is in. The slots therefore grow only to the most callers ever waiting at once, and nothing is
// rebuilt while they come and go.
//
// Why not a Map keyed by ever-growing ids: such a Map rebuilds its table every few requests, and each
// old table points to its successor. Once one table had lived through two scavenges and been
// promoted, that dead table kept its successor alive at every scavenge until it was promoted too,
// and with it every request in flight it named: on the authorize path about a megabyte a scavenge,
// and main-thread pauses four times as long (decision 0604).

export class Waiters<T> {
  readonly #resolve: (((value: T) => void) | undefined)[] = [];
  readonly #reject: (((error: unknown) => void) | undefined)[] = [];
  readonly #free: number[] = [];

  /** Parks a caller and returns its id, the slot it holds until it is settled. */
  add(resolve: (value: T) => void, reject: (error: unknown) => void): number {
    const id = this.#free.pop() ?? this.#resolve.length;
    this.#resolve[id] = resolve;
    this.#reject[id] = reject;
    return id;
  }

  /** Settles caller `id` with `value`; an id that holds no caller is ignored. */
  resolve(id: number, value: T): void {
    const resolve = this.#resolve[id];
    if (resolve === undefined) return;
    this.#release(id);
    resolve(value);
  }

  /** Settles caller `id` with `error`; an id that holds no caller is ignored. */
  reject(id: number, error: unknown): void {
    const reject = this.#reject[id];
    if (reject === undefined) return;
    this.#release(id);
    reject(error);
  }

  /** Settles every caller still waiting with `error`, and starts over with no slots. */
  rejectAll(error: unknown): void {
    const rejects = this.#reject.slice();
    this.#resolve.length = 0;
    this.#reject.length = 0;
    this.#free.length = 0;
    for (const reject of rejects) reject?.(error);
  }

  #release(id: number): void {
    this.#resolve[id] = undefined;
    this.#reject[id] = undefined;
    this.#free.push(id);
  }
}
