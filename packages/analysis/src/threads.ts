// The solver's threads: each call runs on one of its own, which closing an analyzer lets end before it ends them all.
import { ANALYSIS_LIMITS } from "./limits.js";

/**
 * What of the solver's WebAssembly runtime (Emscripten's module, `api.em`) is read here: the
 * function every asynchronous solver call goes through, and the threads (`PThread`, which
 * `killThreads` reads too). A worker runs one thread at a time; `pthread_ptr` names it, 0 when idle.
 */
export interface Runtime {
  async_call: (...args: unknown[]) => Promise<unknown>;
  readonly PThread: { readonly runningWorkers: readonly { readonly pthread_ptr: number }[] };
}

/** The solver calls whose threads may still run: whether any does, and waiting until none does. */
export interface CallThreads {
  running(): boolean;
  /** Waits until no call's thread runs (at most ANALYSIS_LIMITS.closeWaitMs), then for the event loop to take what they left for it. */
  ended(): Promise<void>;
}

/**
 * Records the thread each solver call starts. A call starts its thread on this one, in `async_call`,
 * and with it a ten-minute timer that keeps the process alive while the thread runs; the thread's
 * last request to this one, after the call has answered, clears it. A thread ended before that
 * request is taken leaves the timer, and a command that has printed its answer waits ten minutes
 * to exit. Other threads (the solver's timers, which its tactics start) live on and are not waited for.
 */
export function watchCallThreads(runtime: Runtime): CallThreads {
  // A worker's thread has ended when the worker runs another (or none): those are forgotten, so a long-lived analyzer keeps few.
  let calls: { readonly worker: { readonly pthread_ptr: number }; readonly thread: number }[] = [];
  const running = (): boolean => {
    calls = calls.filter((c) => c.worker.pthread_ptr === c.thread);
    return calls.length > 0;
  };
  const call = runtime.async_call;
  runtime.async_call = (...args: unknown[]) => {
    running();
    const before = new Set(runtime.PThread.runningWorkers);
    const answer = Reflect.apply(call, runtime, args) as Promise<unknown>;
    for (const worker of runtime.PThread.runningWorkers) if (!before.has(worker)) calls.push({ worker, thread: worker.pthread_ptr });
    return answer;
  };
  return {
    running,
    async ended() {
      const until = Date.now() + ANALYSIS_LIMITS.closeWaitMs;
      while (running() && Date.now() < until) await delay(THREAD_WATCH_MS);
      await delay(0);
    },
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** How often `ended` looks whether the calls' threads have ended. */
const THREAD_WATCH_MS = 2;
