// The identity rule agrees with the KeyCreateBody schema on every string: the offline command and
// the API refuse exactly the same identities and emails.

import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { API_LIMITS, allSchemas, keyIdentityFault } from "./index.js";

const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
for (const schema of allSchemas) ajv.addSchema(schema);
const validate = ajv.getSchema("KeyCreateBody")!;

const identities = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: "grapheme", maxLength: 300 }),
  fc.constantFrom(
    "",
    "a\nb",
    " ",
    "x".repeat(API_LIMITS.identityCharsMax),
    "x".repeat(API_LIMITS.identityCharsMax + 1),
    "x".repeat(5_000),
    "😀".repeat(API_LIMITS.identityCharsMax),
    "ops@example.com",
  ),
);

describe("keyIdentityFault", () => {
  it("refuses exactly what the KeyCreateBody schema refuses", () => {
    fc.assert(
      fc.property(identities, fc.option(identities, { nil: undefined }), (identity, email) => {
        const body = { identity, kind: "human", roles: ["admin"], ...(email === undefined ? {} : { email }) };
        expect(keyIdentityFault(identity, email) === undefined).toBe(validate(body) === true);
      }),
      { numRuns: 2_000 },
    );
  });

  it("accepts 254 characters and refuses 255, a newline and 5,000 characters, with the reason", () => {
    expect(keyIdentityFault("x".repeat(254))).toBeUndefined();
    expect(keyIdentityFault("x".repeat(255))).toBe("`identity` must be at most 254 characters, got 255");
    expect(keyIdentityFault("ops\n@example.com")).toContain("no white space");
    expect(keyIdentityFault("x".repeat(5_000))).toContain("got 5000");
    expect(keyIdentityFault("ops", "not-an-email")).toContain("`email`");
  });
});
