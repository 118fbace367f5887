// Families at their limits on the command line: a hostile parameter pattern is answered at once at
// its file, line and column; a family over the size limit is a clean error at line 1 in every command.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { FAMILY_LIMITS } from "@agent-authority/families";
import { describe, expect, it } from "vitest";
import { authority, cliScratchDir } from "./run-cli.js";

const dir = cliScratchDir("authority-family-bounds-");

/** A family whose parameter `code` has the given pattern and example (line 5), with one example action. */
function family(pattern: string, example: string): string {
  return [
    "id: bounds",
    "version: 1",
    "reviewed_by: [alice@example.com]",
    "parameters:",
    `  code: {type: string, pattern: ${JSON.stringify(pattern)}, example: ${JSON.stringify(example)}}`,
    "grant:",
    "  agent_id: agt_6ys3c4dwa7n36096q14dr9gpqy",
    "  principal_type: team",
    "  principal_id: ${code}",
    "  scope: {tool: [payments.refund]}",
    "examples:",
    "  - name: refund",
    "    action: {tool: payments.refund}",
    "    expect: allow",
    "",
  ].join("\n");
}

describe("parameter patterns on the command line", () => {
  it("lint, test and compile answer `(a+)+$` with 40 `a` and `!` at once, at the example's line and column", () => {
    const file = join(dir, "redos.yaml");
    writeFileSync(file, family("(a+)+$", `${"a".repeat(40)}!`));
    for (const command of ["lint", "test", "compile"]) {
      const run = authority([command, file]);
      expect(run.code, command).toBe(1);
      expect(`${run.stdout}${run.stderr}`, command).toContain("redos.yaml:5:52: error[parameter-bounds]");
    }
  });

  it("refuses a lookahead at its column inside the pattern, with the rule in SARIF", () => {
    const file = join(dir, "lookahead.yaml");
    writeFileSync(file, family("[a-z]+(?=x)", "abc"));
    const run = authority(["lint", file]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      "lookahead.yaml:5:40: error[parameter-pattern]: the pattern of parameter `code` is refused: the pattern is not in the accepted syntax (RE2)",
    );
  });

  it("`test --run` takes RE2 syntax and refuses a backreference as a usage error", () => {
    const file = join(dir, "fine.yaml");
    writeFileSync(file, family("[a-z]+", "abc"));
    expect(authority(["test", file, "--run", "ref(u|x)nd"]).code).toBe(0);
    const refused = authority(["test", file, "--run", "(a)\\1"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("RE2");
  });
});

describe("a family over the size limit", () => {
  it("is one error at line 1, column 1 in lint, test, compile and fmt, never an internal error", () => {
    const file = join(dir, "big.yaml");
    writeFileSync(file, `${family("[a-z]+", "abc")}# ${"x".repeat(FAMILY_LIMITS.sourceBytesMax)}\n`);
    for (const command of ["lint", "test", "compile", "fmt"]) {
      const run = authority([command, file]);
      const out = `${run.stdout}${run.stderr}`;
      expect(run.code, `${command}: ${out}`).toBe(1);
      expect(out, command).toMatch(/big\.yaml:1:1: error/);
      expect(out, command).toContain(`more than ${FAMILY_LIMITS.sourceBytesMax}`);
      expect(out, command).not.toContain("internal error");
    }
  });

  it("at the limit it is read, and the code frame of a long line shows a window around the column", () => {
    const file = join(dir, "edge.yaml");
    const text = family("[a-z]+", "abc");
    const filler = `# ${"x".repeat(FAMILY_LIMITS.sourceBytesMax - text.length - 3)}\n`;
    writeFileSync(file, text + filler);
    expect((text + filler).length).toBe(FAMILY_LIMITS.sourceBytesMax);
    expect(authority(["lint", file]).code).toBe(0);
    const long = join(dir, "long-line.yaml");
    writeFileSync(long, family("[a-z]+", "abc").replace("principal_type: team", `principal_type: team${" ".repeat(5000)}x: 1`));
    const run = authority(["lint", long]);
    expect(run.code).toBe(1);
    for (const line of run.stdout.split("\n")) expect(line.length).toBeLessThan(400);
  });
});
