// Authoring habits from other policy tools: error limits, stdin formatting, eval, parse, version.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authority, buildCli, fixtures } from "./run-cli.js";

let dir: string;
beforeAll(() => {
  buildCli();
  dir = mkdtempSync(join(tmpdir(), "authority-authoring-"));
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const family = readFileSync(join(fixtures, "unformatted.yaml"), "utf8");

describe("authority lint: one error per mistake, at most 10 per file", () => {
  const twelve = Array.from({ length: 12 }, (_, i) => `"s${i}" < ${i}`).join(" && ");

  it("shows the first 10 errors of a file and says how many more there are", () => {
    const run = authority(["lint", write("many.policy", `${twelve}\n`)]);
    expect(run.code).toBe(1);
    expect(run.stdout.match(/error\[policy\/type-mismatch\]/g)).toHaveLength(10);
    expect(run.stdout).toContain("many.policy: 2 more errors not shown (`--max-errors 0` shows all)");
    expect(run.stdout).toContain("1 file checked: 12 errors, 0 warnings");
  });

  it("`--max-errors N` sets the limit, 0 lifts it, and it applies to json too", () => {
    const path = write("many.policy", `${twelve}\n`);
    expect(authority(["lint", path, "--max-errors", "0"]).stdout.match(/error\[/g)).toHaveLength(12);
    const json = JSON.parse(authority(["lint", path, "--max-errors", "3", "--format", "json"]).stdout) as { diagnostics: unknown[]; errors: number };
    expect(json.diagnostics).toHaveLength(3);
    const bad = authority(["lint", path, "--max-errors", "-1"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("`--max-errors` must be a whole number, not `-1`");
  });

  it("one unclosed `[` in a family is one error, on the bracket's line", () => {
    const text = family.replace("scope: {tool: [purchase.create]}", "scope: {tool: [purchase.create}");
    const run = authority(["lint", write("unclosed.yaml", text), "--format", "json"]);
    const json = JSON.parse(run.stdout) as { diagnostics: { line: number; column: number; code: string; help: string }[] };
    expect(json.diagnostics).toHaveLength(1);
    const line = text.split("\n").findIndex((l) => l.includes("[purchase.create}")) + 1;
    expect(json.diagnostics[0]).toMatchObject({ line, column: 17, code: "yaml/bad-indent", help: "this `[` is never closed: add `]` where the collection ends" });
  });

  it("an unclosed `{` of a parameter is reported on its own line, not at the next key", () => {
    const text = family.replace("limit: {type: int, min: 0, max: 50000, default: 1000}", "limit: {type: int, min: 0, max: 50000, default: 1000");
    const json = JSON.parse(authority(["lint", write("unclosed-map.yaml", text), "--format", "json"]).stdout) as { diagnostics: { line: number; column: number }[] };
    expect(json.diagnostics.map((d) => [d.line, d.column])).toEqual([[7, 10]]);
  });
});

describe("comments in a family's policy", () => {
  it("lint and test read past them, and fmt keeps them beside their operands", () => {
    const path = write("commented.yaml", readFileSync(join(fixtures, "commented.yaml"), "utf8"));
    expect(authority(["lint", path]).code).toBe(0);
    expect(authority(["test", path]).code).toBe(0);
    expect(authority(["fmt", path]).code).toBe(0);
    const text = readFileSync(path, "utf8");
    expect(text).toContain(["  policy: |-", "    // small purchases, or the cfo", "    amount_minor <= ${limit} // cents, up to ${limit}", '      || approver in ["cfo@example.com"]', "examples:"].join("\n"));
    expect(authority(["fmt", "--check", path]).code).toBe(0);
    expect(authority(["test", path]).code).toBe(0);
  });
});
