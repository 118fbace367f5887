// Hidden characters on the command line: lint warns at their place and never prints them raw; fmt
// writes them as escapes; a line separator after a comment is an error at its column.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { authority, cliScratchDir } from "./run-cli.js";

const dir = cliScratchDir("authority-hidden-");
const RAW = /[\u0085\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/;

describe("hidden characters", () => {
  it("lint warns at a bidi override in a string and a comment, printing escapes, never the raw characters", () => {
    const file = join(dir, "bidi.policy");
    writeFileSync(file, 'approver == "cfo@example.com\u202e\u200b" // \u2067 note\n');
    const run = authority(["lint", file]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("bidi.policy:1:29: warning[policy/hidden-character]");
    expect(run.stdout).toContain("bidi.policy:1:36: warning[policy/hidden-character]");
    expect(run.stdout).toContain('1 | approver == "cfo@example.com\\u202e\\u200b" // \\u2067 note');
    expect(run.stdout).not.toMatch(RAW);
  });

  it("lint warns at a Cyrillic letter in a Latin tool name", () => {
    const file = join(dir, "lookalike.policy");
    writeFileSync(file, 'tool == "p\u0430yments.transfer"\n');
    const run = authority(["lint", file]);
    expect(run.stdout).toContain("lookalike.policy:1:9: warning[policy/mixed-script]");
  });

  it("fmt writes every hidden character as its escape, and the result is formatted", () => {
    const file = join(dir, "fmt.policy");
    writeFileSync(file, 'approver=="cfo@example.com\u202e" // \u200b\n');
    expect(authority(["fmt", file]).code).toBe(0);
    const written = readFileSync(file, "utf8");
    expect(written).toBe('approver == "cfo@example.com\\u202e" // \\u200b\n');
    expect(authority(["fmt", "--check", file]).code).toBe(0);
  });

  it("a line separator after a comment is an error at its column, not a hidden line of code", () => {
    const file = join(dir, "separator.policy");
    writeFileSync(file, 'amount_minor < 100 || tool == "x" // note\u2028&& false\n');
    const run = authority(["lint", file]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("separator.policy:1:42: error[policy/unexpected-character]: unexpected line separator U+2028");
    expect(run.stdout).not.toMatch(RAW);
  });
});
