// The event feed: one poller per process that notices newly committed events (from this process,
// its authorize thread or another replica) and wakes whoever waits for them: the streams and the
// webhook dispatcher. It reads one number per poll; the waiters read the events themselves.

import type { Store } from "../../store/core/index.js";

export const EVENT_LIMITS = Object.freeze({
  /** How often the feed looks for new events, by default, in milliseconds. */
  pollMsDefault: 250,
  pollMsMin: 10,
  pollMsMax: 10_000,
  /** Event streams one key may hold open at once; one more is refused with 429 `too_many_streams`. */
  streamsPerKeyMax: 4,
  /** Event streams the process holds open at once, all keys together. */
  streamsMax: 256,
  /**
   * Bytes a stream may hold written but not yet taken by its client (beyond one event); past it
   * the stream is closed, and the client resumes from its `Last-Event-ID` without loss. The writer
   * waits for the client whenever its buffer is full, so only an event larger than this reaches it.
   */
  streamBufferBytesMax: 1_048_576,
  /** Heartbeat intervals a client may take nothing before its stream is closed as stalled. */
  stallHeartbeats: 2,
  /** The heartbeat comment's interval, by default, in milliseconds. */
  heartbeatMsDefault: 15_000,
  heartbeatMsMin: 50,
  heartbeatMsMax: 300_000,
  /** Events read from the database at once by a stream catching up. */
  streamPageEvents: 200,
  /** The `Retry-After` of `too_many_streams`, in seconds. */
  streamRetryAfterSeconds: 5,
});

type Waiter = () => void;

export class EventFeed {
  readonly #store: Store;
  readonly #pollMs: number;
  readonly #waiters = new Set<Waiter>();
  #last = -1;
  #timer: NodeJS.Timeout | undefined;
  #polling = false;
  #stopped = false;

  constructor(store: Store, pollMs: number = EVENT_LIMITS.pollMsDefault) {
    this.#store = store;
    this.#pollMs = pollMs;
  }

  start(): void {
    this.#timer = setInterval(() => void this.#poll(), this.#pollMs);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#wake();
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** Wakes the waiters now: something in this process just committed an event. */
  nudge(): void {
    this.#wake();
  }

  /** Resolves at the next new event, at `timeoutMs`, or when the feed stops; `signal` ends the wait early too. */
  wait(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#stopped || signal?.aborted === true) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.#waiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  async #poll(): Promise<void> {
    if (this.#polling || this.#stopped) return;
    this.#polling = true;
    try {
      const last = await this.#store.eventPath().lastSeq();
      if (last !== this.#last) {
        this.#last = last;
        this.#wake();
      }
    } catch {
      // The database did not answer this time; the next poll tries again, and readiness reports it.
    } finally {
      this.#polling = false;
    }
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}
