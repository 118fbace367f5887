// RFC 9162 Merkle trees: the Certificate Transparency test vectors, and properties that every
// inclusion and consistency proof verifies and that any altered hash, size or index fails.

import {
  consistencyProof,
  emptyRoot,
  inclusionProof,
  leafHash,
  MerkleFrontier,
  perfectParts,
  foldParts,
  treeHash,
  treeWithPaths,
  verifyConsistency,
  verifyInclusion,
} from "@agent-authority/sdk";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

/** The leaf inputs of the Certificate Transparency reference tests, and the tree hash of each prefix. */
const CT_INPUTS = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"];
const CT_ROOTS = [
  "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
  "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
  "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
  "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
  "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
  "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
  "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];
const ctLeaves = CT_INPUTS.map((hex) => leafHash(Buffer.from(hex, "hex")));

const leavesOf = (n: number, salt = 0): Buffer[] => Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`leaf ${salt} ${i}`)));
/** One bit of a hash flipped. */
const flipped = (hash: Uint8Array, bit: number): Buffer => {
  const copy = Buffer.from(hash);
  copy[(bit >> 3) % 32]! ^= 1 << (bit & 7);
  return copy;
};

describe("tree hashes", () => {
  it("match the Certificate Transparency vectors for every prefix of eight leaves, and the empty tree", () => {
    for (let n = 1; n <= 8; n += 1) expect(treeHash(ctLeaves.slice(0, n)).toString("hex")).toBe(CT_ROOTS[n - 1]);
    expect(treeHash([]).toString("hex")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(emptyRoot().equals(treeHash([]))).toBe(true);
  });

  it("prove inclusion of every CT leaf in every CT prefix, and consistency between every pair of prefixes", () => {
    for (let n = 1; n <= 8; n += 1) {
      const root = Buffer.from(CT_ROOTS[n - 1]!, "hex");
      for (let i = 0; i < n; i += 1) expect(verifyInclusion(i, n, ctLeaves[i]!, inclusionProof(ctLeaves.slice(0, n), i), root)).toBe(true);
      for (let m = 1; m <= n; m += 1) {
        expect(verifyConsistency(m, n, Buffer.from(CT_ROOTS[m - 1]!, "hex"), root, consistencyProof(ctLeaves.slice(0, n), m))).toBe(true);
      }
    }
    // RFC 9162 §2.1.5's example tree of seven leaves: the proof of leaf d0 has three hashes, the
    // consistency proof from three leaves four.
    expect(inclusionProof(ctLeaves.slice(0, 7), 0)).toHaveLength(3);
    expect(consistencyProof(ctLeaves.slice(0, 7), 3)).toHaveLength(4);
    expect(consistencyProof(ctLeaves.slice(0, 7), 4)).toHaveLength(1);
    expect(consistencyProof(ctLeaves.slice(0, 7), 6)).toHaveLength(3);
  });

  it("keep the same root when built leaf by leaf from a frontier, and from a frontier rebuilt from stored parts", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 300 }), (n, more) => {
        const leaves = leavesOf(n + more);
        const frontier = new MerkleFrontier();
        const nodes = new Map<string, Buffer>();
        leaves.slice(0, n).forEach((leaf, i) => {
          nodes.set(`0:${i}`, leaf);
          for (const node of frontier.push(leaf)) nodes.set(`${node.level}:${node.index}`, node.hash);
        });
        expect(frontier.root().equals(treeHash(leaves.slice(0, n)))).toBe(true);
        // Every stored node is the hash of the perfect subtree it names.
        for (const [key, hash] of nodes) {
          const [level, index] = key.split(":").map(Number) as [number, number];
          expect(hash.equals(treeHash(leaves.slice(index * 2 ** level, (index + 1) * 2 ** level)))).toBe(true);
        }
        const parts = perfectParts({ start: 0, end: n }).map((p) => nodes.get(`${p.level}:${p.index}`)!);
        expect(foldParts(parts).equals(frontier.root())).toBe(true);
        const rebuilt = MerkleFrontier.of(n, parts);
        for (const leaf of leaves.slice(n)) rebuilt.push(leaf);
        expect(rebuilt.root().equals(treeHash(leaves))).toBe(true);
      }),
      { numRuns: 60 },
    );
  });
});

describe("treeWithPaths", () => {
  it("gives every tree's root and every leaf's inclusion proof, from leaves given as Buffers or other Uint8Arrays, which it leaves as they were", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), fc.nat(), fc.boolean(), (n, salt, plain) => {
        const leaves = leavesOf(n, salt);
        const given = plain ? leaves.map((leaf) => new Uint8Array(leaf)) : leaves;
        const { root, paths } = treeWithPaths(given);
        expect(root.equals(treeHash(leaves))).toBe(true);
        expect(paths).toHaveLength(n);
        for (let i = 0; i < n; i += 1)
          expect(
            paths[i]!.map((hash) => hash.toString("hex")),
            `${i} of ${n}`,
          ).toEqual(inclusionProof(leaves, i).map((hash) => hash.toString("hex")));
        const again = leavesOf(n, salt);
        expect(given.every((leaf, i) => Buffer.from(leaf).equals(again[i]!))).toBe(true);
      }),
      { numRuns: 100 },
    );
    expect(treeWithPaths([])).toEqual({ root: emptyRoot(), paths: [] });
  });
});

describe("inclusion proofs", () => {
  it("verify for every leaf of every tree up to 64 leaves", () => {
    for (let n = 1; n <= 64; n += 1) {
      const leaves = leavesOf(n);
      const root = treeHash(leaves);
      for (let i = 0; i < n; i += 1) expect(verifyInclusion(i, n, leaves[i]!, inclusionProof(leaves, i), root), `${i} of ${n}`).toBe(true);
    }
  });

  it("fail for any altered leaf, proof hash, index, size or root, and for a proof with a hash added or dropped", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2_000 }), fc.nat(), fc.nat(), fc.nat(), (n, at, bit, which) => {
        const leaves = leavesOf(n, 1);
        const index = at % n;
        const root = treeHash(leaves);
        const proof = inclusionProof(leaves, index);
        expect(verifyInclusion(index, n, leaves[index]!, proof, root)).toBe(true);
        expect(verifyInclusion(index, n, flipped(leaves[index]!, bit), proof, root)).toBe(false);
        expect(verifyInclusion(index, n, leaves[index]!, proof, flipped(root, bit))).toBe(false);
        if (proof.length > 0) {
          const k = which % proof.length;
          expect(
            verifyInclusion(
              index,
              n,
              leaves[index]!,
              proof.map((p, i) => (i === k ? flipped(p, bit) : p)),
              root,
            ),
          ).toBe(false);
          expect(verifyInclusion(index, n, leaves[index]!, proof.slice(0, -1), root)).toBe(false);
        }
        expect(verifyInclusion(index, n, leaves[index]!, [...proof, leaves[0]!], root)).toBe(false);
        // Another index or size: the same leaf is not proved there (unless the leaf is there too, which distinct leaves exclude).
        const otherIndex = (index + 1 + (which % n)) % n;
        if (otherIndex !== index) expect(verifyInclusion(otherIndex, n, leaves[index]!, proof, root)).toBe(false);
        // Another size: a size is signed with its root, so the proof is checked against that size's root.
        const larger = leavesOf(n + 1 + (which % 5), 1);
        expect(verifyInclusion(index, larger.length, leaves[index]!, proof, treeHash(larger))).toBe(false);
        if (n > 1 && index < n - 1) expect(verifyInclusion(index, n - 1, leaves[index]!, proof, treeHash(leaves.slice(0, -1)))).toBe(false);
        expect(verifyInclusion(n, n, leaves[index]!, proof, root)).toBe(false);
        expect(verifyInclusion(-1, n, leaves[index]!, proof, root)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

describe("consistency proofs", () => {
  it("verify for every m <= n up to 64 leaves", () => {
    for (let n = 0; n <= 64; n += 1) {
      const leaves = leavesOf(n, 2);
      const root = treeHash(leaves);
      for (let m = 0; m <= n; m += 1) {
        expect(verifyConsistency(m, n, treeHash(leaves.slice(0, m)), root, consistencyProof(leaves, m)), `${m} to ${n}`).toBe(true);
      }
    }
  });

  it("fail for any altered root, proof hash, size, for a proof with a hash added or dropped, and for a tree that is not an extension", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2_000 }), fc.nat(), fc.nat(), fc.nat(), (n, at, bit, which) => {
        const leaves = leavesOf(n, 3);
        const m = 1 + (at % n);
        const first = treeHash(leaves.slice(0, m));
        const second = treeHash(leaves);
        const proof = consistencyProof(leaves, m);
        expect(verifyConsistency(m, n, first, second, proof)).toBe(true);
        expect(verifyConsistency(m, n, flipped(first, bit), second, proof)).toBe(false);
        expect(verifyConsistency(m, n, first, flipped(second, bit), proof)).toBe(false);
        if (proof.length > 0) {
          const k = which % proof.length;
          expect(
            verifyConsistency(
              m,
              n,
              first,
              second,
              proof.map((p, i) => (i === k ? flipped(p, bit) : p)),
            ),
          ).toBe(false);
          expect(verifyConsistency(m, n, first, second, proof.slice(1))).toBe(false);
        }
        expect(verifyConsistency(m, n, first, second, [...proof, first])).toBe(false);
        if (m < n) {
          // Another size, with the root a checkpoint of that size would sign.
          expect(verifyConsistency(m, n + 1, first, treeHash(leavesOf(n + 1, 3)), proof)).toBe(false);
          if (m > 1) expect(verifyConsistency(m - 1, n, treeHash(leaves.slice(0, m - 1)), second, proof)).toBe(false);
          // A tree whose first m leaves were rewritten is no extension of the first.
          const rewritten = leaves.map((leaf, i) => (i === which % m ? flipped(leaf, bit) : leaf));
          expect(verifyConsistency(m, n, first, treeHash(rewritten), consistencyProof(rewritten, m))).toBe(false);
        }
        expect(verifyConsistency(n + 1, n, first, second, proof)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
