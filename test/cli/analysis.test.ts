// `authority diff`, `lint --prove` and `eval --explain`: the solver's answers as a user and a CI job see them.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { authority, cliScratchDir, root } from "./run-cli.js";

const dir = cliScratchDir("authority-analysis-");

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

interface Witness {
  input: Record<string, unknown>;
  old: boolean;
  new: boolean;
}

describe("authority diff", () => {
  it("exits 1 for a widening, and `eval` of each witness prints what the diff claims", () => {
    const old = file("old.policy", 'amount_minor <= 100 && tool == "pay"\n');
    const next = file("new.policy", '(amount_minor <= 200 || approver == "cfo@example.com") && tool == "pay"\n');
    const run = authority(["diff", old, next, "--format", "json"]);
    expect(run.code).toBe(1);
    const result = JSON.parse(run.stdout) as { relation: string; widening: Witness[]; narrowing: Witness[] };
    expect(result.relation).toBe("widens");
    expect(result.narrowing).toEqual([]);
    const [first] = result.widening;
    expect(first!.old).toBe(false);
    expect(first!.new).toBe(true);
    expect(first!.input).toHaveProperty("approver");
    const input = file("witness.json", JSON.stringify(first!.input));
    expect(authority(["eval", old, "--input", input]).stdout).toBe("false\n");
    expect(authority(["eval", next, "--input", input]).stdout).toBe("true\n");
  });

  it("exits 0 for equivalent and narrowing policies, 1 for incomparable ones", () => {
    const a = file("a.policy", '!(tool == "a" && amount_minor < 5)');
    const b = file("b.policy", 'tool != "a" || amount_minor >= 5');
    const c = file("c.policy", 'tool != "a"');
    const d = file("d.policy", 'tool == "a"');
    const same = authority(["diff", a, b]);
    expect([same.code, same.stdout]).toEqual([0, "equivalent: the two policies decide every input alike\n"]);
    expect(authority(["diff", a, c]).code).toBe(0);
    const both = authority(["diff", c, d, "--format", "json"]);
    expect(both.code).toBe(1);
    expect(JSON.parse(both.stdout).relation).toBe("incomparable");
  });

  it("exits 2 for a policy with errors (shown as lint shows them) and for a usage error", () => {
    const good = file("good.policy", "true");
    const bad = file("bad.policy", "amount_minor <");
    const run = authority(["diff", good, bad]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/bad\.policy:1:/);
    expect(authority(["diff", good]).code).toBe(2);
    expect(authority(["diff", good, good, "--format", "xml"]).code).toBe(2);
  });

  it("writes SARIF with the widening as an error result", () => {
    const old = file("s-old.policy", "hour_utc < 9");
    const next = file("s-new.policy", "hour_utc < 10");
    const run = authority(["diff", old, next, "--format", "sarif"], { cwd: dir });
    expect(run.code).toBe(1);
    const log = JSON.parse(run.stdout) as { version: string; runs: { results: { ruleId: string; level: string }[] }[] };
    expect(log.version).toBe("2.1.0");
    expect(log.runs[0]!.results.map((r) => [r.ruleId, r.level])).toEqual([["policy-widening", "error"]]);
  });
});

/** A family witness: the axis it shows and the parameters that instantiate both families. */
type FamilyWitness = Witness & { axis: string; parameters: Record<string, unknown> };

/** `authority diff OLD NEW --format json` of two families that must widen: exit 1 and relation `widens`; the widening witnesses. */
function widenings(old: string, next: string): FamilyWitness[] {
  const run = authority(["diff", old, next, "--format", "json"]);
  expect(run.code, run.stderr).toBe(1);
  const result = JSON.parse(run.stdout) as { relation: string; widening: FamilyWitness[] };
  expect(result.relation).toBe("widens");
  return result.widening;
}

describe("authority diff of two families", () => {
  const family = readFileSync(join(root, "policies", "procurement-agent.yaml"), "utf8");

  it("an unchanged family is equivalent; raising a parameter's max widens at that axis, with the value", () => {
    const old = file("old.yaml", family);
    expect(authority(["diff", old, old]).code).toBe(0);
    const next = file("ttl.yaml", family.replace("    max: 72", "    max: 96"));
    expect(widenings(old, next).map((w) => [w.axis, w.parameters])).toEqual([["ttl_hours", { ttl_hours: 96 }]]);
  });

  it("a supplier added to the policy widens, with a witness whose parameters instantiate both families", () => {
    const old = file("old.yaml", family);
    const next = file("supplier.yaml", family.replace('"initech-facilities"]', '"initech-facilities", "evil-corp"]'));
    const [w] = widenings(old, next);
    expect(w!.axis).toBe("policy");
    expect(w!.input["args"]).toEqual({ supplier: "evil-corp" });
    expect(authority(["diff", next, old]).code).toBe(0);
  });

  it("a changed declaration the diff cannot compare is unknown (exit 3); a raised minimum narrows", () => {
    const old = file("old.yaml", family);
    const agent = file("agent.yaml", family.replace('pattern: "agt_[0-9a-hjkmnp-tv-z]{26}"', 'pattern: "agt_[0-9a-z]{26}"'));
    const run = authority(["diff", old, agent, "--format", "json"]);
    expect(run.code).toBe(3);
    expect(JSON.parse(run.stdout).reason).toContain("parameter `agent_id`");
    const ttl = file("min-ttl.yaml", family.replace("    min: 1\n    max: 72", "    min: 2\n    max: 72"));
    const narrowed = authority(["diff", old, ttl, "--format", "json"]);
    expect(narrowed.code).toBe(0);
    expect(JSON.parse(narrowed.stdout)).toMatchObject({
      relation: "narrows",
      narrowing: [{ axis: "ttl_hours", parameters: { ttl_hours: 1 } }],
    });
  });

  it("a raised approval threshold widens at the approval axis: a budget the old family held for approval, no approver", () => {
    const old = file("old.yaml", family);
    const approval = file("approval.yaml", family.replace("above_budget_minor: 30000", "above_budget_minor: 40000"));
    expect(widenings(old, approval).map((w) => [w.axis, w.parameters, w.input["approver"]])).toEqual([
      ["approval", { budget_amount_minor: 30001 }, null],
    ]);
    expect(authority(["diff", approval, old]).code).toBe(0);
  });

  it("a string parameter's pattern widened widens the policy axis, with a value only the new pattern accepts", () => {
    const support = readFileSync(join(root, "policies", "support-agent.yaml"), "utf8");
    const old = file("support.yaml", support);
    const wider = file("support-wider.yaml", support.replace('pattern: "cus_[a-z0-9]{8,24}"', 'pattern: "(cus|acct)_[a-z0-9]{8,24}"'));
    const [w] = widenings(old, wider);
    expect(w!.axis).toBe("policy");
    expect(w!.parameters["customer_id"]).toMatch(/^acct_[a-z0-9]{8,24}$/);
    expect((w!.input["args"] as Record<string, unknown>)["customer_id"]).toBe(w!.parameters["customer_id"]);
  });

  it("a pattern changed outside the subset the solver compares is unknown (exit 3), naming the parameter", () => {
    const support = readFileSync(join(root, "policies", "support-agent.yaml"), "utf8");
    const old = file("support.yaml", support);
    const outside = file(
      "support-outside.yaml",
      support.replace('pattern: "cus_[a-z0-9]{8,24}"', 'pattern: "cus_[a-z0-9]{8,24}|cus_\\\\pL{8}"'),
    );
    const unknown = authority(["diff", old, outside, "--format", "json"]);
    expect(unknown.code).toBe(3);
    expect(JSON.parse(unknown.stdout).reason).toMatch(/pattern of parameter `customer_id`.*\\p/);
  });

  it("a family with errors exits 2, and a policy file cannot be compared with a family", () => {
    const old = file("old.yaml", family);
    expect(authority(["diff", old, file("broken.yaml", "id: [")]).code).toBe(2);
    expect(authority(["diff", old, file("p.policy", "true")]).code).toBe(2);
  });
});

describe("authority lint proves", () => {
  it("adds the proved contradiction the interval check cannot see, with the proof in help; --no-prove skips the solver", () => {
    const path = file("never.policy", "amount_minor * 2 > 100 && amount_minor < 50\n");
    expect(authority(["lint", path, "--no-prove"]).stdout).toMatch(/0 warnings/);
    expect(authority(["lint", path, "--prove", "--no-prove"]).code).toBe(2);
    const run = authority(["lint", path, "--format", "json"]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { diagnostics: { code: string; help?: string }[] };
    expect(report.diagnostics.map((d) => d.code)).toEqual(["policy/never-allows"]);
    expect(report.diagnostics[0]!.help).toMatch(/proved by the solver/);
  });

  it("proves a family's policy over its parameters' bounds, at the condition's line and column in the YAML", () => {
    const family = readFileSync(join(root, "policies", "procurement-agent.yaml"), "utf8");
    const redundant = family.replace(
      "amount_minor <= ${approval_threshold_minor} ||",
      "amount_minor <= ${approval_threshold_minor} && amount_minor <= 60000 ||",
    );
    expect(redundant).not.toBe(family);
    const path = file("redundant.yaml", redundant);
    const run = authority(["lint", path, "--format", "json"]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      diagnostics: { code: string; help?: string; line: number; column: number; end_column: number }[];
    };
    const found = report.diagnostics.filter((d) => d.code === "policy/redundant-condition");
    expect(found).toHaveLength(1);
    expect(found[0]!.help).toMatch(/declared bounds/);
    const line = redundant.split("\n")[found[0]!.line - 1]!;
    expect(line.slice(found[0]!.column - 1, found[0]!.end_column - 1)).toBe("amount_minor <= 60000");
    expect(authority(["lint", path, "--no-prove", "--format", "json"]).stdout).not.toContain("redundant-condition");
  });

  it("ends within its proof budget: a budget too small for any proof proves nothing and says so, the exit status unchanged", () => {
    const path = file("never-budget.policy", "amount_minor * 2 > 100 && amount_minor < 50\n");
    const run = authority(["lint", path, "--prove-budget", "1", "--format", "json"]);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { diagnostics: unknown[] }).diagnostics).toEqual([]);
    expect(run.stderr).toMatch(/never-budget\.policy: not every proof was settled: the proof budget of the lint run/);
    expect(authority(["lint", path, "--prove-budget", "soon"]).code).toBe(2);
  });
});

describe("authority eval --explain", () => {
  it("prints the nearest allowed input of a refused one, which eval then allows", () => {
    const policy = file("limit.policy", 'amount_minor <= 50000 && currency == "EUR"');
    const input = file(
      "action.json",
      JSON.stringify({
        amount_minor: 60000,
        currency: "EUR",
        tool: "pay",
        agent: "a",
        principal: "p",
        audience: "x",
        uses: 0,
        spent_minor: 0,
        hour_utc: 9,
        weekday_utc: "mon",
        approver: null,
      }),
    );
    const run = authority(["eval", policy, "--input", input, "--explain", "--format", "json"]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as { value: boolean; nearest: { input: Record<string, unknown>; changed: string[] } };
    expect(out.value).toBe(false);
    expect(out.nearest.changed).toEqual(["amount_minor"]);
    expect(out.nearest.input["amount_minor"]).toBe(50000);
    const nearest = file("nearest.json", JSON.stringify(out.nearest.input));
    expect(authority(["eval", policy, "--input", nearest]).stdout).toBe("true\n");
  });
});

describe("authority preview --explain", () => {
  it("adds the nearest allowed input to each example the policy refused, and to none other", () => {
    const run = authority(["preview", join(root, "policies", "procurement-agent.yaml"), "--explain", "--format", "json"]);
    expect(run.code).toBe(0);
    const cases = JSON.parse(run.stdout) as {
      outcome: string;
      decision: { decided_by: string | null };
      explain?: { nearest?: { changed: string[] } };
    }[];
    const refusedByPolicy = cases.filter((c) => c.outcome !== "allow" && c.decision.decided_by === "policy");
    expect(refusedByPolicy.length).toBeGreaterThan(0);
    for (const c of cases) expect(c.explain !== undefined).toBe(refusedByPolicy.includes(c));
    expect(refusedByPolicy.every((c) => (c.explain?.nearest?.changed.length ?? 0) > 0)).toBe(true);
  });
});
