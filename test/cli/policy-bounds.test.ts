// Hostile policy files through `authority lint`: a refused approver search exits 1 with the code and
// file:line:col, and the policies that once took seconds or gigabytes lint without a warning.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
    const run = authority(["lint", "--format", "json", "."], { cwd: dir });
    expect(run.code, run.stderr).toBe(1);
    const report = JSON.parse(run.stdout) as { errors: number; diagnostics: { file: string; line: number; column: number; code: string }[] };
    expect(report.errors).toBe(1);
    expect(report.diagnostics).toEqual([expect.objectContaining({ file: "four-lists.policy", line: 1, column: 1, end_column: 85, code: "policy/approver-search-too-large" })]);
  });

  it("lints the 18-level residual family and the 13 + 13 conjunctions with exit 0", () => {
    for (const file of ["negations.policy", "conjunctions.policy"]) {
      const run = authority(["lint", file], { cwd: dir });
      expect(run.code, run.stdout + run.stderr).toBe(0);
    }
  });
});
