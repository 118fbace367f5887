// Sortable ids: a prefix, then 10 characters of millisecond time and 16 random characters in
// lower-case Crockford base32 (26 in all), so ids sort by creation time and never collide in practice.

import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

export function newId(prefix: string, now: number = Date.now()): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i += 1) {
    time = ALPHABET[t % 32]! + time;
    t = Math.floor(t / 32);
  }
  const random = randomBytes(16);
  let tail = "";
  for (let i = 0; i < 16; i += 1) tail += ALPHABET[random[i]! % 32];
  return `${prefix}_${time}${tail}`;
}
