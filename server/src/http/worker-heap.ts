// The young generation of the worker threads' heaps, kept at V8's usual full size from the start.
//
// V8 shrinks a heap's young generation whenever the allocation rate drops (a quiet spell, a stretch
// of single requests) and grows it again only as objects survive its scavenges. The decision path's
// objects die young, so after a quiet spell the authorize worker ran with a young generation of
// about 1 MiB for tens of seconds of load: about fifty scavenges a second instead of ten, each
// about 1 ms, on the thread that every decision waits for (decision 0604). The size is read when
// an isolate is created, so it is set before the worker starts; it holds for every thread the
// process starts afterwards, and the main thread, whose heap already exists, keeps its own.

import { setFlagsFromString } from "node:v8";

/** Each of the young generation's two semi-spaces, in MiB: V8's default largest on 64-bit systems. */
export const WORKER_SEMI_SPACE_MIB = 16;

/** Makes every isolate created from now on start, and stay, with a young generation of full size. */
export function keepYoungGenerationFull(): void {
  setFlagsFromString(`--min-semi-space-size=${WORKER_SEMI_SPACE_MIB}`);
}
