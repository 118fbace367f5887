// Hostile answers and key sets against the SDK's verifier: whatever a server, a proxy or a key file
// holds, verification never throws, never accepts what the server did not sign for this request,
// and its work is bounded by the key-set limit. Batch signatures (decision 1901) likewise: any member
// changed, a path spliced, a statement moved within its batch, a root of another batch, a batch or
// a path past its limit.
import { generateKeyPairSync, sign } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  answerBatchText,
  canonicalJson,
  leafHash,
  SigningKeyring,
  statementLeaf,
  treeWithPaths,
  verifyDecision,
  VERIFY_LIMITS,
  type SigningKeySet,
} from "@agent-authority/sdk";

const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const x = publicKey.export({ format: "jwk" }).x!;
const jwks = {
  keys: [{ kty: "OKP", crv: "Ed25519", x, kid: "k1", alg: "EdDSA", use: "sig", status: "active", created_at: "", retired_at: null }],
} as unknown as SigningKeySet;
const body = { grant_id: "grt_01jz0000000000000000000000", tool: "payments.send", amount_minor: 10, currency: "EUR", args: { to: "ACME" } };

async function signedAnswer(nonce: string): Promise<Record<string, unknown>> {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonicalJson(body.args)));
  const statement = {
    agent_id: "agt_a",
    amount_minor: 10,
    args_sha256: Buffer.from(digest).toString("hex"),
    currency: "EUR",
    decided_at: "2026-01-01T00:00:00.000Z",
    grant_id: body.grant_id,
    ledger_id: "led_1",
    nonce,
    outcome: "allow",
    tool: "payments.send",
    type: "authority.decision.v1",
  };
  return {
    ledger_id: "led_1",
    outcome: "allow",
    decided_at: statement.decided_at,
    signature: {
      alg: "EdDSA",
      kid: "k1",
      statement,
      value: sign(null, Buffer.from(canonicalJson(statement)), privateKey).toString("base64url"),
    },
  };
}

describe("verifyDecision against hostile input", () => {
  it("accepts the genuine answer, and nothing with any member replaced by any JSON value", async () => {
    const keyring = new SigningKeyring(jwks);
    expect(await verifyDecision(await signedAnswer("n1"), body, "n1", keyring)).toBeUndefined();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("signature", "ledger_id", "outcome", "decided_at"), fc.jsonValue(), async (member, value) => {
        const answer = await signedAnswer("n1");
        const changed = canonicalJson(answer[member]) !== canonicalJson(value);
        const failure = await verifyDecision({ ...answer, [member]: value }, body, "n1", keyring);
        expect(failure === undefined).toBe(!changed);
      }),
      { numRuns: 300 },
    );
  });

  it("never throws on any answer and any key set, and reads at most keysMax keys", async () => {
    await fc.assert(
      fc.asyncProperty(fc.anything(), fc.anything(), async (answer, set) => {
        const keyring = new SigningKeyring(set as SigningKeySet);
        expect(keyring.size).toBeLessThanOrEqual(VERIFY_LIMITS.keysMax);
        const record = (typeof answer === "object" && answer !== null ? answer : { value: answer }) as Record<string, unknown>;
        const failure = await verifyDecision(record, body, "n1", keyring);
        expect(failure).toBeDefined();
      }),
      { numRuns: 300 },
    );
    const many = {
      keys: Array.from({ length: VERIFY_LIMITS.keysMax + 10 }, (_, i) => ({ ...jwks.keys[0]!, kid: `k${i}` })),
    } as unknown as SigningKeySet;
    expect(new SigningKeyring(many).size).toBe(VERIFY_LIMITS.keysMax);
  });

  it("refuses as bad_signature, never throws, any signature value other than the genuine one", async () => {
    const keyring = new SigningKeyring(jwks);
    const base64urlText = fc.stringMatching(/^[A-Za-z0-9_-]{0,90}$/);
    await fc.assert(
      fc.asyncProperty(fc.oneof(base64urlText, fc.string({ maxLength: 90 })), async (value) => {
        const answer = await signedAnswer("n1");
        const signature = answer["signature"] as Record<string, unknown>;
        if (value === signature["value"]) return;
        const failure = await verifyDecision({ ...answer, signature: { ...signature, value } }, body, "n1", keyring);
        expect(failure?.reason).toBe("bad_signature");
      }),
      { numRuns: 500 },
    );
  });

  // Shrunk counterexamples: a base64url text of a length no encoding produces made the decoder throw.
  it.each(["0", "A", "AAAAA", "-", "_____"])("refuses the signature value %j as bad_signature", async (value) => {
    const answer = await signedAnswer("n1");
    const signature = answer["signature"] as Record<string, unknown>;
    const failure = await verifyDecision({ ...answer, signature: { ...signature, value } }, body, "n1", new SigningKeyring(jwks));
    expect(failure?.reason).toBe("bad_signature");
  });
});

/** A decision statement of the batch: led_i, answering the nonce `n<i>`. */
async function batchStatement(i: number): Promise<Record<string, string | number | null>> {
  const answer = await signedAnswer(`n${i}`);
  return {
    ...((answer["signature"] as Record<string, unknown>)["statement"] as Record<string, string | number | null>),
    ledger_id: `led_${i}`,
  };
}

/** The answers of one batch of `size` decisions signed together (decision 1901), as the server writes them. */
async function signedBatch(size: number, salt = ""): Promise<Record<string, unknown>[]> {
  const statements = await Promise.all(Array.from({ length: size }, (_, i) => batchStatement(i)));
  if (salt !== "") for (const statement of statements) statement["decided_at"] = `2026-01-01T00:00:00.000Z${salt}`;
  return batchAnswers(statements, size);
}

/** `statements` signed as the first of a tree of `treeSize` leaves (the rest made up); answers theirs. */
function batchAnswers(statements: Record<string, string | number | null>[], treeSize: number): Record<string, unknown>[] {
  const leaves = statements.map((statement) => statementLeaf(statement)!);
  for (let i = leaves.length; i < treeSize; i += 1) leaves.push(leafHash(`filler ${i}`));
  const { root, paths } = treeWithPaths(leaves);
  const value = sign(null, Buffer.from(answerBatchText(treeSize, root)), privateKey).toString("base64url");
  return statements.map((statement, i) => ({
    ledger_id: statement["ledger_id"],
    outcome: "allow",
    decided_at: statement["decided_at"],
    signature: {
      v: 2,
      alg: "EdDSA",
      kid: "k1",
      statement,
      tree_size: treeSize,
      leaf_index: i,
      path: paths[i]!.map((hash) => hash.toString("base64url")),
      root: root.toString("base64url"),
      value,
    },
  }));
}

const signatureOf = (answer: Record<string, unknown>) => answer["signature"] as Record<string, unknown>;
const withSignature = (answer: Record<string, unknown>, change: Record<string, unknown>) => ({
  ...answer,
  signature: { ...signatureOf(answer), ...change },
});

describe("batch signatures (v 2) against hostile input", () => {
  const keyring = new SigningKeyring(jwks);

  it("accepts every answer of a batch alone, and nothing with any member of its signature replaced by any JSON value", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 40 }),
        fc.nat(),
        fc.constantFrom("v", "alg", "kid", "statement", "tree_size", "leaf_index", "path", "root", "value"),
        fc.jsonValue(),
        async (size, pick, member, value) => {
          const answers = await signedBatch(size);
          const i = pick % size;
          expect(await verifyDecision(answers[i]!, body, `n${i}`, keyring)).toBeUndefined();
          const changed = canonicalJson(signatureOf(answers[i]!)[member]) !== canonicalJson(value);
          const failure = await verifyDecision(withSignature(answers[i]!, { [member]: value }), body, `n${i}`, keyring);
          expect(failure === undefined).toBe(!changed);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("refuses a path with a hash dropped, added, replaced or two swapped, and a leaf index moved", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 40 }), fc.nat(), fc.nat(), fc.nat(), async (size, pick, at, other) => {
        const answers = await signedBatch(size);
        const i = pick % size;
        const path = signatureOf(answers[i]!)["path"] as string[];
        const k = at % path.length;
        const changes: Record<string, unknown>[] = [
          { path: path.filter((_, j) => j !== k) },
          { path: [...path, path[k]] },
          { path: path.map((hash, j) => (j === k ? leafHash("x").toString("base64url") : hash)) },
          { leaf_index: (i + 1 + (other % (size - 1))) % size },
          { tree_size: size + 1 + (other % 5) },
        ];
        if (path.length > 1)
          changes.push({ path: path.map((_, j) => path[j === k ? (k + 1) % path.length : j === (k + 1) % path.length ? k : j]) });
        for (const change of changes) {
          if (change["path"] !== undefined && canonicalJson(change["path"]) === canonicalJson(path)) continue;
          const failure = await verifyDecision(withSignature(answers[i]!, change), body, `n${i}`, keyring);
          expect(failure?.reason).toBe("bad_signature");
        }
      }),
      { numRuns: 100 },
    );
  });

  it("refuses statements moved between the answers of one batch, and a path or root from another batch", async () => {
    const answers = await signedBatch(5);
    const other = await signedBatch(5, "1");
    for (const [i, j] of [
      [0, 1],
      [3, 4],
      [4, 0],
    ] as const) {
      const moved = withSignature(answers[i]!, { statement: signatureOf(answers[j]!)["statement"] });
      expect((await verifyDecision(moved, body, `n${i}`, keyring))?.reason).toBe("bad_signature");
      // The mate's whole signature is the server's word about the mate: for this request's nonce it is a replay.
      const whole = { ...answers[i]!, signature: signatureOf(answers[j]!) };
      expect((await verifyDecision(whole, body, `n${i}`, keyring))?.reason).toBe("replayed");
    }
    const { statement: _s, ...batchPart } = signatureOf(other[2]!);
    for (const change of [
      { path: signatureOf(other[2]!)["path"] },
      { root: signatureOf(other[2]!)["root"] },
      { root: signatureOf(other[2]!)["root"], value: signatureOf(other[2]!)["value"] },
      batchPart,
    ]) {
      expect((await verifyDecision(withSignature(answers[2]!, change), body, "n2", keyring))?.reason).toBe("bad_signature");
    }
  });

  it("never throws on, and never accepts, a batch signature whose members are anything", async () => {
    const hash = fc.stringMatching(/^[A-Za-z0-9_-]{43}$/);
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            v: fc.oneof(fc.constant(2), fc.anything()),
            alg: fc.oneof(fc.constant("EdDSA"), fc.anything()),
            kid: fc.oneof(fc.constant("k1"), fc.anything()),
            statement: fc.oneof(
              fc.constant(undefined).chain(() => fc.constant({ nonce: "n0" })),
              fc.anything(),
            ),
            tree_size: fc.oneof(fc.integer({ min: -2, max: 70_000 }), fc.anything()),
            leaf_index: fc.oneof(fc.integer({ min: -2, max: 70_000 }), fc.anything()),
            path: fc.oneof(fc.array(fc.oneof(hash, fc.anything()), { maxLength: 20 }), fc.anything()),
            root: fc.oneof(hash, fc.anything()),
            value: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{86}$/), fc.anything()),
          },
          { requiredKeys: [] },
        ),
        async (signature) => {
          const failure = await verifyDecision({ ledger_id: "led_0", outcome: "allow", signature }, body, "n0", keyring);
          expect(failure).toBeDefined();
        },
      ),
      { numRuns: 400 },
    );
  });

  it("refuses a version it does not know, and still verifies the first form", async () => {
    const [answer] = await signedBatch(3);
    for (const v of [1, 3, "2", null, 2.5]) {
      expect((await verifyDecision(withSignature(answer!, { v }), body, "n0", keyring))?.reason).toBe("unsigned");
    }
    expect(await verifyDecision(await signedAnswer("n0"), body, "n0", keyring)).toBeUndefined();
  });

  it(`accepts a batch of batchLeavesMax (${VERIFY_LIMITS.batchLeavesMax}) leaves, a path of pathHashesMax hashes, and refuses one leaf more`, async () => {
    const statement = await batchStatement(0);
    const [edge] = batchAnswers([statement], VERIFY_LIMITS.batchLeavesMax);
    expect((signatureOf(edge!)["path"] as string[]).length).toBe(VERIFY_LIMITS.pathHashesMax);
    expect(await verifyDecision(edge!, body, "n0", keyring)).toBeUndefined();
    const [over] = batchAnswers([statement], VERIFY_LIMITS.batchLeavesMax + 1);
    const failure = await verifyDecision(over!, body, "n0", keyring);
    expect(failure?.reason).toBe("bad_signature");
    expect(failure?.message).toContain(String(VERIFY_LIMITS.batchLeavesMax));
    const longer = withSignature(edge!, { path: [...(signatureOf(edge!)["path"] as string[]), signatureOf(edge!)["root"]] });
    expect((await verifyDecision(longer, body, "n0", keyring))?.message).toContain(`more than ${VERIFY_LIMITS.pathHashesMax}`);
  });
});

describe("answerBatchText", () => {
  /** The root in base64url as the first SDK wrote it: one character per byte, btoa, then the URL alphabet without padding. */
  const plainBase64url = (bytes: Uint8Array): string =>
    btoa(String.fromCharCode(...bytes))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");

  it("writes the root's bytes, and only those of a view into a larger buffer, as the first base64url did", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.nat(), fc.nat(), fc.nat(), (bytes, start, length, size) => {
        const from = bytes.length === 0 ? 0 : start % bytes.length;
        const view = bytes.subarray(from, from + (length % 40));
        expect(answerBatchText(size, view)).toBe(`agent-authority answer batch v2\n${size}\n${plainBase64url(view)}\n`);
      }),
      { numRuns: 2_000 },
    );
  });
});
