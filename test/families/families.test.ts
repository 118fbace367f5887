// The family compiler, instantiation and the content hash, through the package's public face.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { grantIssueBodySchema } from "@agent-authority/api";
import {
  canonicalJson,
  compileFamily,
  familyContentHash,
  grantFamilyBodySchema,
  instantiateFamily,
  runExamples,
  type GrantFamilyBody,
} from "@agent-authority/families";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const policies = join(root, "policies");
const families = readdirSync(policies)
  .filter((f) => f.endsWith(".yaml"))
  .sort();

function compiled(name: string): GrantFamilyBody {
  const result = compileFamily(readFileSync(join(policies, name), "utf8"), `policies/${name}`);
  expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return result.body!;
}

const FAMILY = `id: small
version: 1
reviewed_by: [alice@example.com]
parameters:
  agent_id: {type: string, pattern: "agt_[0-9a-hjkmnp-tv-z]{26}", example: agt_6ys3c4dwa7n36096q14dr9gpqy}
  budget: {type: int, min: 100, max: 50000, default: 1000}
  team: {type: string, enum: [ops, sales], default: ops}
grant:
  agent_id: \${agent_id}
  principal_type: team
  principal_id: team-\${team}
  scope: {tool: [purchase.create]}
  budget_amount_minor: \${budget}
  budget_currency: EUR
  policy: args.team == \${team}
approval:
  above_budget_minor: 20000
`;

describe("compileFamily", () => {
  it("compiles every family in policies/ to a body the exported schema accepts", () => {
    const validate = new Ajv2020({ strict: false }).compile(grantFamilyBodySchema);
    expect(families.length).toBeGreaterThanOrEqual(5);
    for (const name of families) expect(validate(compiled(name)), name).toBe(true);
  });

  it("the grant template knows every field of the API's issue body except `require_approval`", () => {
    const template = Object.keys((grantFamilyBodySchema.properties as Record<string, { properties: object }>).grant!.properties).sort();
    const issue = Object.keys(grantIssueBodySchema.properties)
      .filter((k) => k !== "require_approval")
      .sort();
    expect(template).toEqual(issue);
  });

  it("a placeholder of the wrong type for its field is reported at the field", () => {
    const text = FAMILY.replace("budget_amount_minor: ${budget}", "budget_amount_minor: ${team}");
    const result = compileFamily(text, "f.yaml");
    expect(result.ok).toBe(false);
    const d = result.diagnostics.find((x) => x.code === "grant-shape")!;
    expect(d.message).toContain("`budget_amount_minor` must be an integer");
    expect([d.range.start.line, d.range.start.column]).toEqual([13, 24]);
  });

  it("a default outside its own bounds is an error at the default", () => {
    const result = compileFamily(FAMILY.replace("default: 1000", "default: 99"), "f.yaml");
    const d = result.diagnostics.find((x) => x.code === "parameter-bounds")!;
    expect(d.message).toContain("below its minimum 100");
    expect(d.range.start.line).toBe(6);
  });

  it("an unused parameter is a warning, not an error", () => {
    const result = compileFamily(FAMILY.replace("  team: {", "  spare: {type: bool}\n  team: {"), "f.yaml");
    expect(result.ok).toBe(true);
    expect(result.diagnostics.map((d) => [d.code, d.severity])).toEqual([
      ["examples-missing", "warning"],
      ["parameter-unused", "warning"],
    ]);
  });

  it("a content_hash written in the file must match the content", () => {
    const result = compileFamily(`${FAMILY}content_hash: sha256:${"0".repeat(64)}\n`, "f.yaml");
    expect(result.diagnostics.map((d) => d.code)).toContain("content-hash-mismatch");
    const good = compileFamily(FAMILY, "f.yaml").body!.content_hash;
    expect(compileFamily(`${FAMILY}content_hash: ${good}\n`, "f.yaml").ok).toBe(true);
  });

  it("a value JSON cannot hold is a schema error, not a crash", () => {
    const result = compileFamily(FAMILY.replace("version: 1", "version: .inf"), "f.yaml");
    expect(result.ok).toBe(false);
    expect(result.diagnostics.map((d) => [d.code, d.range.start.line])).toContainEqual(["schema", 2]);
  });

  it("never throws, whatever the text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (suffix) => {
        const result = compileFamily(FAMILY.slice(0, suffix.length % FAMILY.length) + suffix, "f.yaml");
        for (const d of result.diagnostics) expect(d.range.start.line).toBeGreaterThanOrEqual(1);
      }),
      { numRuns: 200, seed: 4242 },
    );
  });
});

describe("the content hash", () => {
  it("does not depend on key order or layout, and covers what the reviewer approved", () => {
    const body = compileFamily(FAMILY, "f.yaml").body!;
    const reordered = compileFamily(
      FAMILY.replace("version: 1\nreviewed_by: [alice@example.com]\n", "reviewed_by:\n  - alice@example.com\nversion: 1\n"),
      "g.yaml",
    ).body!;
    expect(reordered.content_hash).toBe(body.content_hash);
    expect(familyContentHash({ ...body, version: 7, reviewed_by: ["bob@example.com"] })).toBe(body.content_hash);
    expect(familyContentHash({ ...body, parameters: { ...body.parameters, budget: { type: "int", min: 100, max: 50001 } } })).not.toBe(
      body.content_hash,
    );
    expect(canonicalJson({ b: [1, "x"], a: { d: null, c: true } })).toBe('{"a":{"c":true,"d":null},"b":[1,"x"]}');
  });
});

describe("instantiateFamily", () => {
  const family = compileFamily(FAMILY, "f.yaml").body!;
  const agent = "agt_6ys3c4dwa7n36096q14dr9gpqy";

  it("substitutes typed values and policy literals, and validates against the API's issue schema", () => {
    const result = instantiateFamily(family, { agent_id: agent, budget: 5000, team: "sales" });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.grant).toMatchObject({ budget_amount_minor: 5000, principal_id: "team-sales", policy: 'args.team == "sales"' });
    expect(new Ajv2020({ strict: false }).compile(grantIssueBodySchema)(result.value.grant)).toBe(true);
    expect(result.value.approval_required).toBe(false);
  });

  it("asks for approval above the family's budget threshold", () => {
    const result = instantiateFamily(family, { agent_id: agent, budget: 30000 });
    expect(result.ok && result.value.grant["require_approval"]).toBe(true);
  });

  it("reports every parameter problem: bounds, enum, pattern, type, unknown and missing", () => {
    const result = instantiateFamily(family, { agent_id: "agt_nope", budget: 60000, team: "finance", colour: "red" });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.parameterProblems.map((p) => [p.code, p.parameter]).sort()).toEqual([
      ["parameter-bounds", "agent_id"],
      ["parameter-bounds", "budget"],
      ["parameter-bounds", "team"],
      ["parameter-unknown", "colour"],
    ]);
    const missing = instantiateFamily(family, { budget: "lots" });
    expect(!missing.ok && missing.parameterProblems.map((p) => p.code).sort()).toEqual(["parameter-missing", "parameter-type"]);
  });

  it("a string parameter can never change the structure of a policy", () => {
    const open = compileFamily(
      FAMILY.replace("team: {type: string, enum: [ops, sales], default: ops}", 'team: {type: string, pattern: ".*", default: ops}'),
      "f.yaml",
    ).body!;
    const result = instantiateFamily(open, { agent_id: agent, team: 'x" || true || "' });
    expect(result.ok && result.value.grant["policy"]).toBe('args.team == "x\\" || true || \\""');
  });
});

describe("runExamples", () => {
  it("every example in policies/ gets its expected outcome from the engine", () => {
    let count = 0;
    for (const name of families) {
      for (const result of runExamples(compiled(name))) {
        count += 1;
        expect(result.mismatches, `${name}: ${result.name}`).toEqual([]);
      }
    }
    expect(count).toBeGreaterThanOrEqual(25);
  });
});
