// The checkpoint thread of a SQLite writer (sqlite-driver.ts): a connection of its own that copies
// the write-ahead log into the database with PASSIVE checkpoints, which wait for nobody and block
// nobody. It runs one each time the log has grown by a step (750 frames). The writer keeps its own
// automatic checkpoint, the one that lets the log start over from its beginning, but at ten
// thousand frames instead of a thousand: that checkpoint then finds only the frames written since
// this thread's last pass left to copy, and the commits that carry it, and wait for it, are ten
// times fewer.
//
// A pass per step, not more: each one costs the disk a sync of the log and one of the database,
// beside the writer's commits.
//
// Runs from the compiled server only, like the authorize worker; the driver starts and stops it.

import Database from "better-sqlite3";
import { closeSync, openSync, readSync } from "node:fs";
import { endianness } from "node:os";
import { parentPort, workerData } from "node:worker_threads";

/**
 * What the driver hands over: the database file, by how many frames the log grows between two
 * passes, and a flag it sets to 1 to stop the thread.
 */
export interface CheckpointThreadData {
  readonly path: string;
  readonly step: number;
  readonly stop: SharedArrayBuffer;
}

/** How often the log's length is looked at: while it grows, and while it does not. */
const LOOK_MS = { growing: 2, still: 50 } as const;

if (parentPort === null) throw new Error("checkpoint-thread.js runs as a worker thread");
const { path, step, stop } = workerData as CheckpointThreadData;
const stopFlag = new Int32Array(stop);
const db = new Database(path);
// A checkpoint that meets a lock gives up at once; the writer's own copies what is left.
db.pragma("busy_timeout = 0");

// The log's length is `mxFrame` in the header of its index (the `-shm` file, native byte order, at
// byte 16; see SQLite's "WAL-mode file format"). Read without a lock: a torn read only moves a pass.
const index = openSync(`${path}-shm`, "r");
const word = Buffer.alloc(4);
const littleEndian = endianness() === "LE";
function framesInLog(): number {
  readSync(index, word, 0, 4, 16);
  return littleEndian ? word.readUInt32LE(0) : word.readUInt32BE(0);
}

let seen = 0;
/** The log's length at the last pass of this cycle of the log. */
let passedAt = 0;
while (Atomics.load(stopFlag, 0) === 0) {
  const frames = framesInLog();
  // Fewer frames than last time: the log started over, and the next pass is one step into it.
  if (frames < seen) passedAt = 0;
  if (frames >= passedAt + step) {
    try {
      db.pragma("wal_checkpoint(PASSIVE)");
    } catch {
      // A pass that fails is only a pass missed: the next one, or the writer's own, copies it.
    }
    passedAt = frames;
  }
  const growing = frames !== seen;
  seen = frames;
  Atomics.wait(stopFlag, 0, 0, growing ? LOOK_MS.growing : LOOK_MS.still);
}
closeSync(index);
db.close();
