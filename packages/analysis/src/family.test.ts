// The family diff's approval and pattern axes, and lint proved over a family's parameters, each answer checked by the real code.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkParameter, compileFamily, type GrantFamilyBody, instantiateFamily } from "@agent-authority/families";
import { createAnalyzer, diffFamilies, proveFamilyLint, type Analyzer } from "./index.js";

let analyzer: Analyzer;
beforeAll(async () => {
  analyzer = await createAnalyzer();
});
afterAll(async () => {
  await analyzer.close();
});

/** A small family: a budget parameter, a string parameter with `pattern`, a policy and an approval rule. */
function family(o: { approval?: string; pattern?: string; policy?: string } = {}): GrantFamilyBody {
  const text = `id: ops
version: 1
reviewed_by: [a@example.com]
parameters:
  budget:
    type: int
    min: 100
    max: 50000
    default: 20000
  repo:
    type: string
    pattern: "${o.pattern ?? "org/[a-z]+"}"
    example: org/abc
  limit:
    type: int
    min: 0
    max: 100
    default: 50
grant:
  agent_id: agt_m9s346q3d25vt4f5v37e3s3e28
  principal_type: team
  principal_id: ops
  scope:
    tool: [deploy]
  budget_amount_minor: \${budget}
  budget_currency: EUR
  policy: '${o.policy === undefined ? "" : `${o.policy} && `}args.repo == \${repo}'
${o.approval ?? ""}`;
  const compiled = compileFamily(text, "ops.yaml");
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics.map((d) => d.message)));
  return compiled.body!;
}

/** Whether the family, given the values, issues a grant born without waiting for a human's approval. */
function issuedActive(f: GrantFamilyBody, parameters: Record<string, unknown>): boolean {
  const r = instantiateFamily(f, { repo: "org/abc", ...parameters });
  return r.ok && !r.value.approval_required;
}

describe("family diff: approval", () => {
  it("a raised approval threshold widens at the approval axis, with the budget that shows it and no approver", async () => {
    const old = family({ approval: "approval:\n  above_budget_minor: 30000\n" });
    const next = family({ approval: "approval:\n  above_budget_minor: 40000\n  reason: finance\n" });
    const r = await diffFamilies(analyzer, old, next);
    expect(r.relation).toBe("widens");
    expect(r.widening).toHaveLength(1);
    const w = r.widening[0]!;
    expect([w.axis, w.parameters, w.input.approver, w.old, w.new]).toEqual(["approval", { budget: 30001 }, null, false, true]);
    expect(issuedActive(old, w.parameters)).toBe(false);
    expect(issuedActive(next, w.parameters)).toBe(true);
    const back = await diffFamilies(analyzer, next, old);
    expect(back.relation).toBe("narrows");
    expect(back.narrowing.map((d) => [d.axis, d.parameters])).toEqual([["approval", { budget: 30001 }]]);
  });

  it("dropping `required` widens at the smallest budget; a changed reason alone is equivalent", async () => {
    const held = family({ approval: "approval:\n  required: true\n" });
    const r = await diffFamilies(analyzer, held, family());
    expect(r.widening.map((d) => [d.axis, d.parameters])).toEqual([["approval", { budget: 100 }]]);
    const a = family({ approval: "approval:\n  required: true\n  reason: one\n" });
    const b = family({ approval: "approval:\n  required: true\n  reason: two\n" });
    expect((await diffFamilies(analyzer, a, b)).relation).toBe("equivalent");
    // A threshold above every budget the family can give requires nothing: no difference.
    const never = family({ approval: "approval:\n  above_budget_minor: 60000\n" });
    expect((await diffFamilies(analyzer, never, family())).relation).toBe("equivalent");
  });
});

describe("family diff: a string parameter's pattern", () => {
  it("a wider pattern widens, with a value only the new pattern accepts, confirmed by both families", async () => {
    const old = family();
    const next = family({ pattern: "(org|team)/[a-z]+" });
    const r = await diffFamilies(analyzer, old, next);
    expect(r.relation).toBe("widens");
    const w = r.widening[0]!;
    expect(w.axis).toBe("policy");
    const repo = w.parameters["repo"] as string;
    expect(checkParameter("repo", next.parameters["repo"]!, repo)).toEqual([]);
    expect(checkParameter("repo", old.parameters["repo"]!, repo)).not.toEqual([]);
    expect((w.input.args as Record<string, unknown>)["repo"]).toBe(repo);
    expect((await diffFamilies(analyzer, next, old)).relation).toBe("narrows");
  });

  it("a bounded repetition and an equivalent rewrite: never a widening, then equivalent", async () => {
    // A bounded repetition against an unbounded one can take the solver past its per-call budget:
    // the answer is then `unknown`, never a relation it did not prove (decision 1601).
    expect(["narrows", "unknown"]).toContain((await diffFamilies(analyzer, family(), family({ pattern: "org/[a-z]{1,8}" }))).relation);
    expect((await diffFamilies(analyzer, family(), family({ pattern: "^org/[a-z][a-z]*$" }))).relation).toBe("equivalent");
  });

  it("a changed pattern outside the subset the solver compares is unknown, naming the parameter and the construct", async () => {
    const r = await diffFamilies(analyzer, family(), family({ pattern: "org/\\\\pL+" }));
    expect(r.relation).toBe("unknown");
    expect(r.reason).toContain("parameter `repo`");
    expect(r.reason).toContain("\\p");
    // The same pattern outside the subset on both sides is no obstacle.
    const same = family({ pattern: "org/\\\\pL+" });
    expect((await diffFamilies(analyzer, same, same)).relation).toBe("equivalent");
  });
});

describe("lint proved over a family's parameters", () => {
  it("never-allows for every value the declaration admits, at the whole policy", async () => {
    const f = family({ policy: "amount_minor * 2 <= ${limit} && amount_minor > 60" });
    const proof = await proveFamilyLint(analyzer, f);
    expect(proof.diagnostics.map((d) => d.code)).toEqual(["never-allows"]);
    expect(proof.diagnostics[0]!.help).toMatch(/declared bounds/);
    // With a maximum that allows some value, it is not said.
    const open = family({ policy: "amount_minor * 2 <= ${limit} && amount_minor > 40" });
    expect((await proveFamilyLint(analyzer, open)).diagnostics).toEqual([]);
  });

  it("a redundant condition is reported at its span in the template, placeholder included", async () => {
    const template = 'amount_minor <= 1000 && amount_minor <= ${limit} && tool == "deploy" && args.repo == ${repo}';
    const f = family({ policy: template.replace(" && args.repo == ${repo}", "") });
    const proof = await proveFamilyLint(analyzer, f);
    expect(proof.diagnostics.map((d) => [d.code, template.slice(d.span.start, d.span.end)])).toEqual([
      ["redundant-condition", "amount_minor <= 1000"],
    ]);
    const late = 'tool == "deploy" && amount_minor <= ${limit} && amount_minor <= 1000 && args.repo == ${repo}';
    const found = await proveFamilyLint(analyzer, family({ policy: late.replace(" && args.repo == ${repo}", "") }));
    expect(found.diagnostics.map((d) => late.slice(d.span.start, d.span.end))).toEqual(["amount_minor <= 1000"]);
  });

  it("a proof past its lint run's time answers nothing and says why", async () => {
    const proof = await proveFamilyLint(analyzer, family({ policy: "amount_minor * 2 <= ${limit} && amount_minor > 60" }), {
      until: Date.now() - 1,
    });
    expect(proof.diagnostics).toEqual([]);
    expect(proof.unknown).toBe("the proof budget of the lint run ran out");
  });
});
