// A batch root verified once per keyring: the next answer of the batch still has its path checked, and a forged one is refused.
import { generateKeyPairSync, sign } from "node:crypto";
import { answerBatchText, SigningKeyring, signedStatement, statementLeaf, treeWithPaths, VERIFY_LIMITS } from "@agent-authority/sdk";
import { describe, expect, it } from "vitest";

const { publicKey, privateKey } = generateKeyPairSync("ed25519");
const jwk = publicKey.export({ format: "jwk" });
const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64url");

/** Answers of one batch of `n` statements, each carrying its own path under one signature. */
function batch(n: number, tag: string): Record<string, unknown>[] {
  const statements = Array.from({ length: n }, (_, i) => ({ type: "authority.decision.v1", nonce: `${tag}-${i}`, outcome: "allow" }));
  const { root, paths } = treeWithPaths(statements.map((statement) => statementLeaf(statement)!));
  const value = b64(sign(null, Buffer.from(answerBatchText(n, root)), privateKey));
  return statements.map((statement, i) => ({
    signature: { v: 2, alg: "EdDSA", kid: "k1", statement, tree_size: n, leaf_index: i, path: paths[i]!.map(b64), root: b64(root), value },
  }));
}

describe("verified batch roots", () => {
  it("takes every answer of a verified batch, and still refuses a statement moved onto another's path", async () => {
    const keyring = new SigningKeyring({ keys: [{ ...jwk, kid: "k1", alg: "EdDSA", use: "sig" }] } as never);
    const answers = batch(4, "a");
    for (const answer of answers) expect(await signedStatement(answer, keyring)).toHaveProperty("statement");
    const moved = structuredClone(answers[1]!) as { signature: { statement: unknown } };
    moved.signature.statement = (answers[2]!["signature"] as { statement: unknown }).statement;
    expect(await signedStatement(moved, keyring)).toMatchObject({ failure: { reason: "bad_signature" } });
  });

  it("verifies a root again when the signature value differs by one character, and refuses it", async () => {
    const keyring = new SigningKeyring({ keys: [{ ...jwk, kid: "k1", alg: "EdDSA", use: "sig" }] } as never);
    const [first, second] = batch(2, "b");
    expect(await signedStatement(first!, keyring)).toHaveProperty("statement");
    const forged = structuredClone(second!) as { signature: { value: string } };
    const last = forged.signature.value.at(-2) === "A" ? "B" : "A";
    forged.signature.value = `${forged.signature.value.slice(0, -2)}${last}${forged.signature.value.at(-1)}`;
    expect(await signedStatement(forged, keyring)).toMatchObject({ failure: { reason: "bad_signature" } });
  });

  it("keeps at most verifiedRootsMax roots", () => {
    expect(VERIFY_LIMITS.verifiedRootsMax).toBe(1_024);
    const keyring = new SigningKeyring({ keys: [] } as never);
    for (let i = 0; i <= VERIFY_LIMITS.verifiedRootsMax; i += 1) keyring.rememberVerified("k", `v${i}`, "t");
    expect(keyring.verifiedBefore("k", "v0", "t")).toBe(false);
    expect(keyring.verifiedBefore("k", `v${VERIFY_LIMITS.verifiedRootsMax}`, "t")).toBe(true);
  });
});
