// Receipts checked offline: one built by hand from the published rules verifies; any member changed
// at any depth, any value that is not a receipt, and any key set but the signer's fail closed.

import { createHash, generateKeyPairSync, sign } from "node:crypto";
import {
  canonicalJson,
  checkpointText,
  inclusionProof,
  leafHash,
  receiptDigest,
  recordLeaf,
  sealedHash,
  signedNote,
  treeHash,
  verifyReceipt,
  type CheckpointKey,
} from "@agent-authority/sdk";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const x = publicKey.export({ format: "jwk" }).x!;
const kid = createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest("base64url");
const keys: CheckpointKey[] = [{ kty: "OKP", crv: "Ed25519", x, kid }];
const ORIGIN = "agent-authority/test";

/** A receipt for a decision at `at` and its settlement at `later`, in a tree of `size` leaves, written as docs/verification.md says. */
function buildReceipt(size: number, at: number, later: number): Record<string, unknown> {
  const genesis = "0".repeat(64);
  const decision = canonicalJson({ agent_id: "agt_1", kind: "decision", ledger_id: "led_d", outcome: "allow", seq: 1, tree_id: "grt_t" });
  const decisionHash = sealedHash(genesis, decision);
  const settlement = canonicalJson({
    amount_minor: 5,
    decision_ledger_id: "led_d",
    kind: "settlement",
    ledger_id: "led_s",
    seq: 2,
    tree_id: "grt_t",
  });
  const settlementHash = sealedHash(decisionHash, settlement);
  const leaves = Array.from({ length: size }, (_, i) => leafHash(Buffer.from(`other record ${i}`)));
  leaves[at] = recordLeaf(decisionHash);
  leaves[later] = recordLeaf(settlementHash);
  const text = checkpointText({ origin: ORIGIN, size, root: treeHash(leaves) });
  const note = signedNote(text, ORIGIN, Buffer.from(x, "base64url"), sign(null, Buffer.from(text), privateKey));
  const entry = (index: number, prev: string, hash: string, record: string) => ({
    leaf_index: index,
    prev_hash: prev,
    hash,
    record,
    inclusion_proof: inclusionProof(leaves, index).map((h) => h.toString("base64")),
  });
  const body = {
    format: "agent-authority.receipt.v1",
    ledger_id: "led_d",
    kid,
    checkpoint: note,
    record: entry(at, genesis, decisionHash, decision),
    settlements: [entry(later, decisionHash, settlementHash, settlement)],
  };
  const statement = { ledger_id: "led_d", receipt_sha256: receiptDigest(body), type: "authority.receipt.v1" };
  return {
    ...body,
    signature: { alg: "EdDSA", kid, statement, value: sign(null, Buffer.from(canonicalJson(statement)), privateKey).toString("base64url") },
  };
}

/** Every path to a member at every depth. */
function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = at.length === 0 ? [] : [at];
  if (Array.isArray(value)) for (const [i, v] of value.entries()) out.push(...paths(v, [...at, i]));
  else if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, k]));
  return out;
}

function replaced(value: unknown, path: (string | number)[], member: unknown): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let parent = copy;
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
  parent[path[path.length - 1]!] = member;
  return copy;
}

const receipts = fc
  .integer({ min: 2, max: 300 })
  .chain((size) =>
    fc
      .tuple(fc.constant(size), fc.integer({ min: 0, max: size - 2 }))
      .chain(([n, at]) => fc.tuple(fc.constant(n), fc.constant(at), fc.integer({ min: at + 1, max: n - 1 }))),
  );

describe("verifyReceipt", () => {
  it("verifies a receipt built from the published rules, wherever its records sit in the tree", () => {
    fc.assert(
      fc.property(receipts, ([size, at, later]) => {
        const result = verifyReceipt(buildReceipt(size, at, later), keys);
        expect(result).toMatchObject({ ok: true, ledger_id: "led_d", tree_size: size, leaf_index: at, origin: ORIGIN });
      }),
      { numRuns: 40 },
    );
  });

  it("fails on any member replaced by any other JSON value, at any depth", () => {
    const receipt = buildReceipt(37, 5, 30);
    const all = paths(receipt);
    fc.assert(
      fc.property(fc.constantFrom(...all), fc.jsonValue({ maxDepth: 2 }), (path, value) => {
        fc.pre(canonicalJson(value) !== canonicalJson(path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], receipt)));
        expect(verifyReceipt(replaced(receipt, path, value), keys).ok, path.join(".")).toBe(false);
      }),
      { numRuns: 1_000 },
    );
  });

  it("fails closed on anything that is not a receipt, and with keys other than the signer's", () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        expect(verifyReceipt(value, keys).ok).toBe(false);
      }),
      { numRuns: 500 },
    );
    const receipt = buildReceipt(9, 0, 8);
    const other = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" }).x!;
    expect(verifyReceipt(receipt, [{ kty: "OKP", crv: "Ed25519", x: other, kid }])).toMatchObject({ ok: false, field: "checkpoint" });
    expect(
      verifyReceipt(receipt, [
        { kty: "RSA", kid },
        { kty: "OKP", crv: "Ed25519", x: "short", kid },
      ]),
    ).toMatchObject({ ok: false, field: "checkpoint" });
    // A proof longer than any tree's is refused before it is hashed.
    const long = replaced(
      receipt,
      ["record", "inclusion_proof"],
      Array.from({ length: 65 }, () => `${"A".repeat(43)}=`),
    );
    expect(verifyReceipt(long, keys)).toMatchObject({ ok: false, field: "record.inclusion_proof" });
  });
});
