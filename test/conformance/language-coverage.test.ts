// Every diagnostic code is documented for policy authors and exercised by at least one vector.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DIAGNOSTIC_CODES } from "@agent-authority/language";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const vectorsDir = `${root}test/conformance/language/`;
const vectors = readdirSync(vectorsDir)
  .filter((f) => f.endsWith(".json"))
  .map((f) => readFileSync(vectorsDir + f, "utf8"))
  .join("\n");
const reference = readFileSync(`${root}docs/policy-language.md`, "utf8");

describe("diagnostic codes", () => {
  for (const code of DIAGNOSTIC_CODES) {
    it(`\`${code}\` is documented and has a vector`, () => {
      expect(reference.includes(`\`${code}\``)).toBe(true);
      expect(vectors.includes(`"code": "${code}"`)).toBe(true);
    });
  }
});
