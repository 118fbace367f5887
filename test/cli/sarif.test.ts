// SARIF for code scanning: valid against the SARIF 2.1.0 schema, rules in words, repository-relative URIs.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv } from "ajv";
import { FAMILY_LIMITS } from "@agent-authority/families";
import addFormatsModule from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authority, buildCli, fixtures, root } from "./run-cli.js";

interface SarifLog {
  runs: {
    tool: {
      driver: {
        informationUri?: string;
        rules: {
          id: string;
          name: string;
          shortDescription: { text: string };
          fullDescription: { text: string };
          help: { text: string };
          helpUri?: string;
        }[];
      };
    };
    artifacts: { location: { uri: string; uriBaseId: string } }[];
    results: { ruleId: string; locations: { physicalLocation: { artifactLocation: { uri: string; uriBaseId: string } } }[] }[];
  }[];
}

/**
 * The SARIF 2.1.0 schema as Microsoft's SARIF matchers package ships it (sarif-2.1.0-rtm.5, the
 * schema code scanning documents), written in JSON Schema draft-04: its keywords read the same
 * under ajv's draft-07, once `id` is spelt `$id` (docs/decisions/0124-sarif-for-code-scanning.md).
 */
function officialSarifValidator(): (log: unknown) => boolean {
  const path = join(root, "node_modules", "@microsoft", "jest-sarif", "lib", "schemas", "sarif-2.1.0-rtm.5.json");
  const { $schema: _draft, id, ...schema } = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  // The schema has one pattern that is not valid with the `u` flag (`^[a-zA-Z]{2}|…]?$`), so patterns are read without it.
  const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
  const addFormats = addFormatsModule as unknown as (a: Ajv) => Ajv;
  addFormats(ajv);
  const validate = ajv.compile({ ...schema, $id: String(id) });
  return (log) => {
    const ok = validate(log);
    if (!ok) throw new Error(JSON.stringify(validate.errors?.slice(0, 5)));
    return ok;
  };
}

let dir: string;
beforeAll(() => {
  buildCli();
  dir = mkdtempSync(join(tmpdir(), "authority-sarif-"));
  mkdirSync(join(dir, ".git"));
  mkdirSync(join(dir, "my policies", "sub"), { recursive: true });
  cpSync(join(fixtures, "broken", "bad.policy"), join(dir, "my policies", "sub", "bad one.policy"));
  cpSync(join(fixtures, "broken", "unknown-placeholder.yaml"), join(dir, "my policies", "fam#1.yaml"));
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("authority lint --format sarif", () => {
  it("is valid against the SARIF 2.1.0 schema, for every broken fixture", () => {
    const run = authority(["lint", "--format", "sarif", "test/cli/fixtures/broken/", "--max-errors", "0"]);
    expect(run.code).toBe(1);
    const validate = officialSarifValidator();
    const log = JSON.parse(run.stdout) as Record<string, unknown> & SarifLog;
    expect(validate(log)).toBe(true);
    // The validator does refuse what the schema refuses.
    expect(() => validate({ ...log, version: "2.0.0" })).toThrow();
    expect(() =>
      validate({ ...log, runs: [{ ...log.runs[0], results: [{ ruleId: "x", level: "fatal", message: { text: "m" } }] }] }),
    ).toThrow();
  });

  it("names each rule in words, with help that names its section of the docs, and no web address the project does not own", () => {
    const log = JSON.parse(authority(["lint", "--format", "sarif", "test/cli/fixtures/broken/"]).stdout) as SarifLog;
    const { driver } = log.runs[0]!.tool;
    expect(driver.informationUri).toBeUndefined();
    const byId = new Map(driver.rules.map((r) => [r.id, r]));
    expect(byId.get("policy/unknown-name")).toEqual({
      id: "policy/unknown-name",
      name: "PolicyUnknownName",
      shortDescription: { text: "Unknown name" },
      fullDescription: { text: "A name that is not in the decision environment." },
      help: { text: "See the section Diagnostics of docs/policy-language.md of the Agent Authority repository." },
    });
    expect(byId.get("placeholder-unknown")?.help.text).toBe(
      "See the section Errors of docs/families.md of the Agent Authority repository.",
    );
    for (const rule of driver.rules) {
      expect(rule.shortDescription.text, rule.id).not.toBe(rule.id);
      expect(rule.fullDescription.text.length, rule.id).toBeGreaterThan(rule.shortDescription.text.length);
    }
    for (const rule of driver.rules) expect(rule.helpUri, rule.id).toBeUndefined();
    // Each section named is a heading of the page it names.
    expect(readFileSync(join(root, "docs", "policy-language.md"), "utf8")).toMatch(/^## Diagnostics$/m);
    expect(readFileSync(join(root, "docs", "families.md"), "utf8")).toMatch(/^## Errors$/m);
  });

  it("gives every path relative to the repository root, percent-encoded, under %SRCROOT%, run from anywhere in it", () => {
    const run = authority(["lint", "--format", "sarif", "."], { cwd: join(dir, "my policies") });
    const log = JSON.parse(run.stdout) as SarifLog;
    const uris = log.runs[0]!.artifacts.map((a) => a.location);
    expect(uris).toEqual([
      { uri: "my%20policies/fam%231.yaml", uriBaseId: "%SRCROOT%" },
      { uri: "my%20policies/sub/bad%20one.policy", uriBaseId: "%SRCROOT%" },
    ]);
    const located = log.runs[0]!.results.map((r) => r.locations[0]!.physicalLocation.artifactLocation);
    expect(located.every((l) => l.uriBaseId === "%SRCROOT%" && uris.some((u) => u.uri === l.uri))).toBe(true);
    expect(officialSarifValidator()(log)).toBe(true);
  });

  it("places a family over the size limit at line 1, column 1: a valid log, not `line 0`", () => {
    const big = join(dir, "big.yaml");
    writeFileSync(big, `id: big\n# ${"x".repeat(FAMILY_LIMITS.sourceBytesMax)}\n`);
    const run = authority(["lint", "--format", "sarif", big]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("");
    const log = JSON.parse(run.stdout) as Record<string, unknown> & SarifLog;
    expect(officialSarifValidator()(log)).toBe(true);
    const result = log.runs[0]!.results[0] as unknown as {
      ruleId: string;
      locations: { physicalLocation: { region: Record<string, number> } }[];
    };
    expect(result.ruleId).toBe("family-too-large");
    expect(result.locations[0]!.physicalLocation.region).toEqual({ startLine: 1, startColumn: 1, endLine: 1, endColumn: 2 });
  });
});

describe("authority diff --format sarif", () => {
  it("is valid against the SARIF 2.1.0 schema, with a widening, a narrowing and an unknown answer", () => {
    writeFileSync(join(dir, "old.policy"), 'hour_utc < 9 && tool != "x"');
    writeFileSync(join(dir, "new.policy"), 'hour_utc < 10 && tool != "y"');
    writeFileSync(join(dir, "lower.policy"), 'lower(tool) == "A"');
    writeFileSync(join(dir, "false.policy"), "false");
    const validate = officialSarifValidator();
    const both = authority(["diff", "old.policy", "new.policy", "--format", "sarif"], { cwd: dir });
    expect(both.code).toBe(1);
    const log = JSON.parse(both.stdout) as SarifLog;
    expect(validate(log)).toBe(true);
    expect(log.runs[0]!.results.map((r) => r.ruleId).sort()).toEqual(["policy-narrowing", "policy-widening"]);
    const unknown = authority(["diff", "false.policy", "lower.policy", "--format", "sarif"], { cwd: dir });
    expect(unknown.code).toBe(3);
    expect(validate(JSON.parse(unknown.stdout))).toBe(true);
  });
});
