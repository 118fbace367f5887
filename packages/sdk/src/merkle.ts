// RFC 9162 §2.1 Merkle trees, pure: tree hashes, inclusion and consistency proofs and their
// verifiers, over leaf hashes given by the caller (no I/O), for the server, the CLI and clients.

import { createHash, hash } from "node:crypto";

/** A subtree of leaves `[start, end)`, the unit proofs are made of. */
export interface LeafRange {
  readonly start: number;
  readonly end: number;
}

export const MERKLE_LIMITS = Object.freeze({
  /** The largest tree size: integers above 2^53 - 1 are not exact in JavaScript. */
  sizeMax: Number.MAX_SAFE_INTEGER,
  /** A proof of a tree of at most 2^53 leaves has at most 53 hashes (inclusion) or 54 (consistency). */
  proofHashesMax: 64,
});

const HASH_BYTES = 32;

/**
 * SHA-256(0x00 || data): the hash of one leaf (RFC 9162 §2.1.1). A text is hashed as its UTF-8
 * bytes, in one call: "\0" is the byte 0x00 in UTF-8, which halves the cost of a signed batch's leaves.
 */
export function leafHash(data: Uint8Array | string): Buffer {
  if (typeof data === "string") return hash("sha256", `\0${data}`, "buffer");
  return createHash("sha256").update(Uint8Array.of(0)).update(data).digest();
}

/** SHA-256(0x01 || left || right): the hash of an interior node (RFC 9162 §2.1.1). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  if (left.length !== HASH_BYTES || right.length !== HASH_BYTES)
    return createHash("sha256").update(Uint8Array.of(1)).update(left).update(right).digest();
  const bytes = Buffer.allocUnsafe(1 + 2 * HASH_BYTES);
  bytes[0] = 1;
  bytes.set(left, 1);
  bytes.set(right, 1 + HASH_BYTES);
  return hash("sha256", bytes, "buffer");
}

/** The largest power of two strictly smaller than `n` (n >= 2): where RFC 9162 splits a tree of n leaves. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
}

const isSize = (n: number): boolean => Number.isSafeInteger(n) && n >= 0 && n <= MERKLE_LIMITS.sizeMax;

/**
 * The ranges whose hashes make the inclusion proof of leaf `index` in a tree of `size` leaves,
 * lowest first (RFC 9162 §2.1.3.1, PATH). Each range is a subtree of the RFC's own recursion.
 */
export function inclusionRanges(index: number, size: number): LeafRange[] {
  if (!isSize(size) || !Number.isSafeInteger(index) || index < 0 || index >= size)
    throw new RangeError(`no leaf ${index} in a tree of ${size}`);
  const out: LeafRange[] = [];
  let start = 0;
  let end = size;
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (index - start < k) {
      out.push({ start: start + k, end });
      end = start + k;
    } else {
      out.push({ start, end: start + k });
      start += k;
    }
  }
  return out.reverse();
}

/**
 * The ranges whose hashes make the proof that the tree of `first` leaves is a prefix of the tree of
 * `second` leaves (RFC 9162 §2.1.4.1, SUBPROOF), in the RFC's order. Empty when first is 0 or equal.
 */
export function consistencyRanges(first: number, second: number): LeafRange[] {
  if (!isSize(first) || !isSize(second) || first > second) throw new RangeError(`no consistency from ${first} to ${second}`);
  if (first === 0 || first === second) return [];
  const out: LeafRange[] = [];
  let m = first;
  let start = 0;
  let end = second;
  let whole = true;
  // SUBPROOF(m, D[start:end], whole), unrolled: each step adds the sibling after the deeper part.
  for (;;) {
    const n = end - start;
    if (m === n) {
      if (!whole) out.push({ start, end });
      break;
    }
    const k = splitPoint(n);
    if (m <= k) {
      out.push({ start: start + k, end });
      end = start + k;
    } else {
      out.push({ start, end: start + k });
      m -= k;
      start += k;
      whole = false;
    }
  }
  // The deepest part comes first in the proof.
  return out.reverse();
}

/**
 * The perfect subtrees that make a range of the RFC recursion: a range whose length is a power
 * of two and whose start is a multiple of it is one subtree; any other splits at `splitPoint`.
 * Answers `{ level, index }` pairs (leaves `[index * 2^level, (index + 1) * 2^level)`), left to right.
 */
export function perfectParts(range: LeafRange): Array<{ level: number; index: number }> {
  const out: Array<{ level: number; index: number }> = [];
  let start = range.start;
  const end = range.end;
  while (start < end) {
    let size = 1;
    let level = 0;
    // The largest aligned power of two that starts at `start` and fits.
    while (start % (size * 2) === 0 && start + size * 2 <= end) {
      size *= 2;
      level += 1;
    }
    out.push({ level, index: start / size });
    start += size;
  }
  return out;
}

/** The hash of a range from the hashes of its perfect parts (perfectParts order): folded right to left. */
export function foldParts(parts: readonly Uint8Array[]): Buffer {
  if (parts.length === 0) return emptyRoot();
  let hash: Buffer = Buffer.from(parts[parts.length - 1]!);
  for (let i = parts.length - 2; i >= 0; i -= 1) hash = nodeHash(parts[i]!, hash);
  return hash;
}

/** The hash of the empty tree: SHA-256 of nothing (RFC 9162 §2.1.1). */
export function emptyRoot(): Buffer {
  return createHash("sha256").digest();
}

/** A perfect subtree completed by an append: `level` 1 and up (leaves are level 0). */
export interface CompletedNode {
  readonly level: number;
  readonly index: number;
  readonly hash: Buffer;
}

/**
 * Builds a tree leaf by leaf keeping only its frontier (the perfect subtrees of its size's binary
 * decomposition): O(log n) memory, any prefix's root in O(log n).
 */
export class MerkleFrontier {
  #size = 0;
  /** Left to right: the largest subtree first. */
  readonly #parts: Array<{ level: number; hash: Buffer }> = [];

  /** A frontier of a tree of `size` leaves from its perfect parts' hashes (perfectParts of `[0, size)`). */
  static of(size: number, parts: readonly Uint8Array[]): MerkleFrontier {
    const frontier = new MerkleFrontier();
    const shape = perfectParts({ start: 0, end: size });
    if (shape.length !== parts.length) throw new RangeError(`a tree of ${size} leaves has ${shape.length} parts, not ${parts.length}`);
    for (const [i, part] of shape.entries()) frontier.#parts.push({ level: part.level, hash: Buffer.from(parts[i]!) });
    frontier.#size = size;
    return frontier;
  }

  get size(): number {
    return this.#size;
  }

  /** Appends one leaf hash; answers the perfect subtrees it completed, lowest first. */
  push(leaf: Uint8Array): CompletedNode[] {
    if (leaf.length !== HASH_BYTES) throw new RangeError("a leaf hash is 32 bytes");
    const completed: CompletedNode[] = [];
    let node: { level: number; hash: Buffer } = { level: 0, hash: Buffer.from(leaf) };
    let position = this.#size;
    while (this.#parts.length > 0 && this.#parts[this.#parts.length - 1]!.level === node.level) {
      const left = this.#parts.pop()!;
      node = { level: node.level + 1, hash: nodeHash(left.hash, node.hash) as Buffer };
      position = Math.floor(position / 2);
      completed.push({ level: node.level, index: position, hash: node.hash });
    }
    this.#parts.push(node);
    this.#size += 1;
    return completed;
  }

  /** The tree hash of every leaf pushed so far (RFC 9162 MTH). */
  root(): Buffer {
    return foldParts(this.#parts.map((part) => part.hash));
  }
}

/** The tree hash of a list of leaf hashes (RFC 9162 MTH), in O(log n) memory beside the list. */
export function treeHash(leaves: readonly Uint8Array[]): Buffer {
  const frontier = new MerkleFrontier();
  for (const leaf of leaves) frontier.push(leaf);
  return frontier.root();
}

const isHash = (h: unknown): h is Uint8Array => h instanceof Uint8Array && h.length === HASH_BYTES;
const equalHash = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && Buffer.compare(a, b) === 0;
const odd = (n: number): boolean => n % 2 === 1;
const half = (n: number): number => Math.floor(n / 2);

/** Whether `proof` shows the leaf `leaf` at `index` in the tree of `size` leaves whose hash is `root` (RFC 9162 §2.1.3.2). */
export function verifyInclusion(index: number, size: number, leaf: Uint8Array, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  if (!isSize(size) || !Number.isSafeInteger(index) || index < 0 || index >= size) return false;
  if (!isHash(leaf) || !isHash(root) || proof.length > MERKLE_LIMITS.proofHashesMax || !proof.every(isHash)) return false;
  let fn = index;
  let sn = size - 1;
  let r: Uint8Array = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && equalHash(r, root);
}

/**
 * Whether `proof` shows the tree of `first` leaves hashing to `firstRoot` is a prefix of the tree of
 * `second` leaves hashing to `secondRoot` (RFC 9162 §2.1.4.2). From the empty tree every tree is
 * consistent, with an empty proof; equal sizes need equal roots and an empty proof.
 */
export function verifyConsistency(
  first: number,
  second: number,
  firstRoot: Uint8Array,
  secondRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!isSize(first) || !isSize(second) || first > second) return false;
  if (!isHash(firstRoot) || !isHash(secondRoot) || proof.length > MERKLE_LIMITS.proofHashesMax || !proof.every(isHash)) return false;
  if (first === 0) return proof.length === 0 && equalHash(firstRoot, emptyRoot());
  if (first === second) return proof.length === 0 && equalHash(firstRoot, secondRoot);
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof];
  let fn = first - 1;
  let sn = second - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr: Uint8Array = path[0]!;
  let sr: Uint8Array = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && equalHash(fr, firstRoot) && equalHash(sr, secondRoot);
}

/** The hash of any range of a list of leaf hashes, for proofs over leaves held in memory. */
export function rangeHash(leaves: readonly Uint8Array[], range: LeafRange): Buffer {
  return treeHash(leaves.slice(range.start, range.end));
}

/** An inclusion proof over leaves held in memory. */
export function inclusionProof(leaves: readonly Uint8Array[], index: number): Buffer[] {
  return inclusionRanges(index, leaves.length).map((range) => rangeHash(leaves, range));
}

/** A consistency proof from the first `first` of `leaves` to all of them, over leaves held in memory. */
export function consistencyProof(leaves: readonly Uint8Array[], first: number): Buffer[] {
  return consistencyRanges(first, leaves.length).map((range) => rangeHash(leaves, range));
}

/**
 * The root of a list of leaf hashes and every leaf's inclusion path (RFC 9162 §2.1.3.1, lowest
 * first), in one pass over the tree's levels: n - 1 interior hashes for n leaves. Building the
 * levels bottom up, a last node without a sibling moves up unchanged, which makes the RFC's tree.
 * A leaf given as a Buffer is used as it is (in the paths, and as the root of a tree of one), not
 * copied: a node is on the path of every leaf below its sibling, and every path holds the same Buffer.
 */
export function treeWithPaths(leaves: readonly Uint8Array[]): { root: Buffer; paths: Buffer[][] } {
  if (leaves.length === 0) return { root: emptyRoot(), paths: [] };
  const levels: Buffer[][] = [leaves.map((leaf) => (Buffer.isBuffer(leaf) ? leaf : Buffer.from(leaf)))];
  for (let level = levels[0]!; level.length > 1; level = levels[levels.length - 1]!) {
    const up: Buffer[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) up.push(nodeHash(level[i]!, level[i + 1]!));
    if (level.length % 2 === 1) up.push(level[level.length - 1]!);
    levels.push(up);
  }
  const paths: Buffer[][] = [];
  for (let leaf = 0; leaf < leaves.length; leaf += 1) {
    const path: Buffer[] = [];
    // Every level but the root's: the sibling of the node above the leaf, when it has one.
    for (let height = 0, index = leaf; height < levels.length - 1; height += 1, index >>= 1) {
      const sibling = levels[height]![index ^ 1];
      if (sibling !== undefined) path.push(sibling);
    }
    paths.push(path);
  }
  return { root: levels[levels.length - 1]![0]!, paths };
}
