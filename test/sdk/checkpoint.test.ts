// Signed checkpoints (C2SP tlog-checkpoint as a signed note): the exact text, the key id, and a
// refusal for each field tampered with, for a foreign key, and for any other text, without a throw.

import { createHash, generateKeyPairSync, sign } from "node:crypto";
import { CHECKPOINT_LIMITS, checkpointText, noteKeyId, signedNote, verifyCheckpoint, type CheckpointKey } from "@agent-authority/sdk";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

function keyPair(): { jwk: CheckpointKey; raw: Buffer; signText: (text: string) => Buffer } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const x = publicKey.export({ format: "jwk" }).x!;
  return {
    jwk: { kty: "OKP", crv: "Ed25519", x, kid: `kid-${x.slice(0, 8)}` },
    raw: Buffer.from(x, "base64url"),
    signText: (text) => sign(null, Buffer.from(text), privateKey),
  };
}

const server = keyPair();
const ORIGIN = "agent-authority/example";
const root = createHash("sha256").update("a root").digest();
const text = checkpointText({ origin: ORIGIN, size: 42, root });
const note = signedNote(text, ORIGIN, server.raw, server.signText(text));

describe("checkpoint notes", () => {
  it("are three lines, a blank line and one signature line of the key id and the signature", () => {
    const lines = note.split("\n");
    expect(lines.slice(0, 4)).toEqual([ORIGIN, "42", root.toString("base64"), ""]);
    expect(lines[4]).toMatch(/^\u2014 agent-authority\/example [A-Za-z0-9+/]{91}=$/);
    expect(lines[5]).toBe("");
    const blob = Buffer.from(lines[4]!.split(" ")[2]!, "base64");
    expect(blob).toHaveLength(68);
    // C2SP signed-note: the key id is SHA-256(name || "\n" || 0x01 || key)[:4].
    const expected = createHash("sha256")
      .update(Buffer.concat([Buffer.from(`${ORIGIN}\n`), Buffer.from([1]), server.raw]))
      .digest()
      .subarray(0, 4);
    expect(blob.subarray(0, 4)).toEqual(expected);
    expect(noteKeyId(ORIGIN, server.raw)).toEqual(expected);
  });

  it("verify with the key that signed them", () => {
    const checked = verifyCheckpoint(note, [keyPair().jwk, server.jwk]);
    expect(checked).toMatchObject({ ok: true, origin: ORIGIN, size: 42, kid: server.jwk.kid, keyName: ORIGIN });
    expect(checked.ok && checked.root.equals(root)).toBe(true);
    expect(verifyCheckpoint(note, [server.jwk], ORIGIN).ok).toBe(true);
  });

  it("are refused with each field tampered with: origin, size, root, signature, key name", () => {
    const [origin, size, rootLine, blank, signature] = note.split("\n") as [string, string, string, string, string];
    const build = (parts: string[]): string => `${parts.join("\n")}\n`;
    const blob = Buffer.from(signature.split(" ")[2]!, "base64");
    const badSignature = Buffer.from(blob);
    badSignature[10]! ^= 1;
    const otherRoot = Buffer.from(root);
    otherRoot[0]! ^= 1;
    const cases: Record<string, [string, string]> = {
      origin: [build([`${origin}x`, size, rootLine, blank, signature]), "bad_signature"],
      size: [build([origin, "43", rootLine, blank, signature]), "bad_signature"],
      "size with a leading zero": [build([origin, "042", rootLine, blank, signature]), "size"],
      root: [build([origin, size, otherRoot.toString("base64"), blank, signature]), "bad_signature"],
      "root not 32 bytes": [build([origin, size, root.subarray(1).toString("base64"), blank, signature]), "root"],
      signature: [build([origin, size, rootLine, blank, `\u2014 ${ORIGIN} ${badSignature.toString("base64")}`]), "bad_signature"],
      "key name": [build([origin, size, rootLine, blank, `\u2014 ${ORIGIN}x ${blob.toString("base64")}`]), "unknown_key"],
      "key id": [
        build([
          origin,
          size,
          rootLine,
          blank,
          `\u2014 ${ORIGIN} ${Buffer.concat([Buffer.from([0, 0, 0, 0]), blob.subarray(4)]).toString("base64")}`,
        ]),
        "unknown_key",
      ],
      "extension line": [build([origin, size, rootLine, "ext", blank, signature]), "extension"],
      "no signature": [build([origin, size, rootLine]), "unsigned"],
      "signature without its dash": [build([origin, size, rootLine, blank, signature.slice(2)]), "malformed"],
    };
    for (const [field, [tampered, fault]] of Object.entries(cases)) {
      const checked = verifyCheckpoint(tampered, [server.jwk]);
      expect(checked, field).toMatchObject({ ok: false, fault });
    }
    // Another origin than the one the witness expects; a key the verifier does not hold.
    expect(verifyCheckpoint(note, [server.jwk], "agent-authority/other")).toMatchObject({ ok: false, fault: "origin" });
    expect(verifyCheckpoint(note, [keyPair().jwk])).toMatchObject({ ok: false, fault: "unknown_key" });
    expect(verifyCheckpoint(note, [])).toMatchObject({ ok: false, fault: "unknown_key" });
  });

  it("refuse any other text without throwing, and text over the limit before reading it", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), fc.nat(), (noise, at) => {
        // Random text, and the real note with random text spliced in.
        const spliced = note.slice(0, at % note.length) + noise + note.slice(at % note.length);
        expect(verifyCheckpoint(noise, [server.jwk]).ok).toBe(false);
        if (noise.length > 0) expect(verifyCheckpoint(spliced, [server.jwk]).ok).toBe(false);
      }),
      { numRuns: 500 },
    );
    expect(verifyCheckpoint(note + "x".repeat(CHECKPOINT_LIMITS.noteBytesMax), [server.jwk])).toMatchObject({
      ok: false,
      fault: "too_long",
    });
    expect(verifyCheckpoint(42 as unknown as string, [server.jwk])).toMatchObject({ ok: false, fault: "malformed" });
  });
});
