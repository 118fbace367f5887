// Hostile policy files through `authority lint`: a refused approver search exits 1 with the code and
// file:line:col, and the policies that once took seconds or gigabytes lint without a warning.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { negationFamily, twoConjunctions } from "../../packages/language/test-support/hostile-bounds.js";
import { authority, buildCli } from "./run-cli.js";

describe("authority lint on hostile policies", () => {
  let dir: string | undefined;
  beforeAll(() => {
    buildCli();
    dir = mkdtempSync(join(tmpdir(), "authority-bounds-"));
    writeFileSync(join(dir, "four-lists.policy"), "approver in args.a || approver in args.b || approver in args.c || approver in args.d\n");
    writeFileSync(join(dir, "negations.policy"), `${negationFamily(18)}\n`);
    writeFileSync(join(dir, "conjunctions.policy"), `${twoConjunctions(13)}\n`);
  });
  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a policy whose approver search could exceed its limits: exit 1, its code, file:line:col, and the other files still linted", () => {
    // About the limit's error: the solver's proofs (redundant conditions of the generated families) are left out.
    const run = authority(["lint", "--no-prove", "--format", "json", "."], { cwd: dir });
    expect(run.code, run.stderr).toBe(1);
    const report = JSON.parse(run.stdout) as {
      errors: number;
      diagnostics: { file: string; line: number; column: number; code: string }[];
    };
    expect(report.errors).toBe(1);
    expect(report.diagnostics).toEqual([
      expect.objectContaining({ file: "four-lists.policy", line: 1, column: 1, end_column: 85, code: "policy/approver-search-too-large" }),
    ]);
  });

  it("refuses a policy whose worst case exceeds the evaluation budget: exit 1, `policy-too-costly` at file:line:col (issue 33)", () => {
    const costly = join(dir!, "costly");
    mkdirSync(costly);
    writeFileSync(join(costly, "costly.policy"), "// two comparisons of args with args\nargs.a == args.b && args.c == args.d\n");
    const run = authority(["lint", "--format", "json", "."], { cwd: costly });
    expect(run.code, run.stderr).toBe(1);
    const report = JSON.parse(run.stdout) as { diagnostics: { file: string; line: number; column: number; code: string }[] };
    expect(report.diagnostics).toEqual([
      expect.objectContaining({ file: "costly.policy", line: 2, column: 1, code: "policy/policy-too-costly" }),
    ]);
    const text = authority(["lint", "costly.policy"], { cwd: costly });
    expect(text.stdout + text.stderr).toContain("costly.policy:2:1");
  });

  it("lints the 18-level residual family and the 13 + 13 conjunctions with exit 0", () => {
    for (const file of ["negations.policy", "conjunctions.policy"]) {
      const run = authority(["lint", file], { cwd: dir });
      expect(run.code, run.stdout + run.stderr).toBe(0);
    }
  });
});
