// The checkpoint thread of a SQLite writer (sqlite-driver.ts): a connection of its own that copies
// the write-ahead log into the database with PASSIVE checkpoints, which wait for nobody and block
// nobody. The writer keeps its own automatic checkpoint, the one that lets the log start over
// from its beginning; it then finds only the frames written since this thread's last pass left
// to copy, so a commit that carries it pays for a few pages instead of a thousand.
//
// Runs from the compiled server only, like the authorize worker; the driver starts and stops it.

import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";

/** What the driver hands over: the database file, and a flag it sets to 1 to stop the thread. */
export interface CheckpointThreadData {
  readonly path: string;
  readonly stop: SharedArrayBuffer;
}

/** The pause after a pass that copied frames, and after one that found nothing to copy. */
export const CHECKPOINT_PAUSE_MS = { copying: 2, idle: 50 } as const;

if (parentPort === null) throw new Error("checkpoint-thread.js runs as a worker thread");
const { path, stop } = workerData as CheckpointThreadData;
const stopFlag = new Int32Array(stop);
const db = new Database(path);
// A checkpoint that meets a lock gives up at once: the next pass tries again.
db.pragma("busy_timeout = 0");

let last = "";
while (Atomics.load(stopFlag, 0) === 0) {
  let copied = false;
  try {
    const [result] = db.pragma("wal_checkpoint(PASSIVE)") as { busy: number; log: number; checkpointed: number }[];
    // The log's frames and those copied, after the pass: unchanged since the last one, nothing was written.
    const now = result === undefined ? "" : `${result.log}/${result.checkpointed}`;
    copied = now !== last;
    last = now;
  } catch {
    // A pass that fails (the database busy in a way PASSIVE does not absorb) is only a pass
    // missed: the writer's own checkpoint copies whatever is left.
  }
  Atomics.wait(stopFlag, 0, 0, copied ? CHECKPOINT_PAUSE_MS.copying : CHECKPOINT_PAUSE_MS.idle);
}
db.close();
