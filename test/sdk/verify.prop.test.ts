// Hostile answers and key sets against the SDK's verifier: whatever a server, a proxy or a key file
// holds, verification never throws, never accepts what the server did not sign for this request,
// and its work is bounded by the key-set limit.
import { generateKeyPairSync, sign } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, SigningKeyring, verifyDecision, VERIFY_LIMITS, type SigningKeySet } from "@agent-authority/sdk";

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
