// Sortable ids: a prefix, then 10 characters of millisecond time and 16 random characters in
// lower-case Crockford base32 (26 in all), so ids sort by creation time and never collide in practice.

import { randomFillSync } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** Random bytes are drawn from the CSPRNG 4 KiB at a time: one call per 256 ids, not one per id. */
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;

function randomTail(): string {
  if (poolOffset + 16 > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  let tail = "";
  for (let i = 0; i < 16; i += 1) tail += ALPHABET[POOL[poolOffset + i]! % 32];
  poolOffset += 16;
  return tail;
}

/** The 10 characters of an id's millisecond time. */
function timePart(now: number): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i += 1) {
    time = ALPHABET[t % 32]! + time;
    t = Math.floor(t / 32);
  }
  return time;
}

export function newId(prefix: string, now: number = Date.now()): string {
  return `${prefix}_${timePart(now)}${randomTail()}`;
}

/** A text that sorts at or before every id of `prefix` made at or after `time` (and after those made before it). */
export function idFloor(prefix: string, time: number): string {
  return `${prefix}_${timePart(Math.max(0, Math.floor(time)))}`;
}
