// The checkpoint thread of a SQLite writer (sqlite-driver.ts): a connection of its own that copies
// most of the write-ahead log into the database with a PASSIVE checkpoint, which waits for nobody
// and blocks nobody. The writer keeps its own automatic checkpoint, at a thousand frames, the one
// that lets the log start over from its beginning; it then finds only the frames written since
// this thread's pass left to copy, so the commit that carries it pays for a few pages instead of
// several hundred.
//
// One pass per cycle of the log, once three quarters of it are written: more passes would cost
// the disk a sync of the log and one of the database each, beside the writer's commits.
//
// Runs from the compiled server only, like the authorize worker; the driver starts and stops it.

import Database from "better-sqlite3";
import { closeSync, openSync, readSync } from "node:fs";
import { endianness } from "node:os";
import { parentPort, workerData } from "node:worker_threads";

/**
 * What the driver hands over: the database file, the log's length at which a pass runs, and a
 * flag it sets to 1 to stop the thread.
 */
export interface CheckpointThreadData {
  readonly path: string;
  readonly fromFrames: number;
  readonly stop: SharedArrayBuffer;
}

/** How often the log's length is looked at: while it grows, and while it does not. */
const LOOK_MS = { growing: 2, still: 50 } as const;

if (parentPort === null) throw new Error("checkpoint-thread.js runs as a worker thread");
const { path, fromFrames, stop } = workerData as CheckpointThreadData;
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
let passed = false;
while (Atomics.load(stopFlag, 0) === 0) {
  const frames = framesInLog();
  // Fewer frames than last time: the log started over, and the next cycle gets its pass.
  if (frames < seen) passed = false;
  if (!passed && frames >= fromFrames) {
    try {
      db.pragma("wal_checkpoint(PASSIVE)");
    } catch {
      // A pass that fails is only a pass missed: the writer's own checkpoint copies it all.
    }
    passed = true;
  }
  const growing = frames !== seen;
  seen = frames;
  Atomics.wait(stopFlag, 0, 0, growing ? LOOK_MS.growing : LOOK_MS.still);
}
closeSync(index);
db.close();
