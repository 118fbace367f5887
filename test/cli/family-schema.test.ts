// The family JSON Schema published with the CLI: current, and right about real and broken families.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { FAMILY_SCHEMA_FILE, familyYamlSchema } from "../../cli/src/family-schema.js";
import { fixtures, root } from "./run-cli.js";

const published = JSON.parse(readFileSync(join(root, "cli", FAMILY_SCHEMA_FILE), "utf8")) as Record<string, unknown>;
const validate = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false }).compile(published);

describe("cli/schemas/family.schema.json", () => {
  it("is the schema the API's family body gives (regenerate: npx tsc -b && node cli/scripts/write-family-schema.mjs)", () => {
    expect(published).toEqual(familyYamlSchema());
  });

  it("is shipped in the CLI package's files", () => {
    const pkg = JSON.parse(readFileSync(join(root, "cli", "package.json"), "utf8")) as { files: string[] };
    expect(pkg.files).toContain(FAMILY_SCHEMA_FILE.split("/")[0]);
  });

  it("accepts every example family, which have no content_hash", () => {
    const dir = join(root, "policies");
    const names = readdirSync(dir).filter((n) => n.endsWith(".yaml"));
    expect(names.length).toBeGreaterThan(3);
    for (const name of names) {
      const ok = validate(parse(readFileSync(join(dir, name), "utf8")));
      expect(ok, `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it("refuses what the compiler refuses for its shape: an unknown field, a wrong enum value", () => {
    const family = parse(readFileSync(join(fixtures, "unformatted.yaml"), "utf8")) as Record<string, Record<string, unknown>>;
    expect(validate(family)).toBe(true);
    expect(validate({ ...family, grant: { ...family["grant"], principal_type: "robot" } })).toBe(false);
    expect(validate({ ...family, owner: "x" })).toBe(false);
    expect(validate(parse(readFileSync(join(fixtures, "broken", "schema-error.yaml"), "utf8")))).toBe(false);
  });

  it("is named in docs/lsp.md for YAML editors", () => {
    expect(readFileSync(join(root, "docs", "lsp.md"), "utf8")).toContain("# yaml-language-server: $schema=");
  });
});
