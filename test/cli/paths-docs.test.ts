// docs/policy-language.md, "Paths and URLs": the file and fetch examples run through `authority
// eval` as a user runs them, on every path and URL the page names, with the outcome it promises.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { authority, cliScratchDir, root } from "./run-cli.js";

const doc = readFileSync(join(root, "docs", "policy-language.md"), "utf8");
const section = doc.slice(doc.indexOf("## Paths and URLs"), doc.indexOf("## Null"));
const blocks = [...section.matchAll(/```text\n([\s\S]*?)```/g)].map((m) => m[1]!);
const [repoPolicy, filePolicy, fetchPolicy] = ["relPathWithin", 'pathWithin(args.path, "/tmp', "urlWithin"].map((name) =>
  blocks.find((block) => block.includes(name)),
);
const dir = cliScratchDir("authority-paths-docs-");

const BASE = {
  amount_minor: 0,
  currency: "",
  agent: "agent-7",
  principal: "p",
  audience: "a",
  uses: 0,
  spent_minor: 0,
  hour_utc: 9,
  weekday_utc: "wed",
  approver: null,
};

/** `authority eval` of `policy` on one action: `true`, `false`, or `false` with the error's code. */
function evaluate(policy: string, tool: string, args: Record<string, unknown>): string {
  const policyFile = join(dir, "example.policy");
  const input = join(dir, "input.json");
  writeFileSync(policyFile, policy);
  writeFileSync(input, JSON.stringify({ ...BASE, tool, args }));
  const run = authority(["eval", policyFile, "--input", input, "--format", "json"]);
  expect(run.code, run.stderr).toBe(0);
  const out = JSON.parse(run.stdout);
  return out.error === undefined ? String(out.value) : `false (${out.error.code})`;
}

describe("docs/policy-language.md: Paths and URLs", () => {
  it("the file example: inside, outside, and failing closed as the page says", () => {
    expect(filePolicy).toContain('pathWithin(args.path, "/tmp/agent-files/notes")');
    expect(evaluate(filePolicy!, "files.list_allowed_directories", {})).toBe("true");
    for (const path of ["/tmp/agent-files/notes/todo.txt", "/tmp/agent-files/notes//a/./b.txt"])
      expect(evaluate(filePolicy!, "files.write_file", { path }), path).toBe("true");
    expect(evaluate(filePolicy!, "files.write_file", { path: "/tmp/agent-files/notes/../secret.txt" })).toBe("false");
    for (const path of ["/tmp/agent-files/notes/%2e%2e/secret.txt", "notes/a.txt", "/tmp/agent-files/notes\\..\\secret.txt"]) {
      expect(evaluate(filePolicy!, "files.write_file", { path }), path).toBe("false (invalid-path)");
    }
  });

  it("the repository example: workflow files refused however written, other files allowed, escapes failing closed", () => {
    expect(repoPolicy).toContain('relPathWithin(args.path, ".github/workflows")');
    for (const path of ["src/../.github/workflows/x.yml", "./.github//workflows/x.yml", ".github/workflows"])
      expect(evaluate(repoPolicy!, "git.read", { path }), path).toBe("false");
    expect(evaluate(repoPolicy!, "git.read", { path: ".github/workflows-old/x.yml" })).toBe("true");
    expect(evaluate(repoPolicy!, "git.read", {})).toBe("true");
    for (const path of [
      "src/..%2f.github/workflows/x.yml",
      "src\\..\\.github\\workflows\\x.yml",
      "../payments/.github/workflows/x.yml",
      "/.github/workflows/x.yml",
    ]) {
      expect(evaluate(repoPolicy!, "git.read", { path }), path).toBe("false (invalid-path)");
    }
  });

  it("the fetch example: inside, outside, other hosts, and failing closed as the page says", () => {
    expect(fetchPolicy).toContain('urlWithin(args.url, "https://docs.example.com/api")');
    expect(evaluate(fetchPolicy!, "fetch", { url: "https://DOCS.example.com./api/v1?q=1" })).toBe("true");
    expect(evaluate(fetchPolicy!, "fetch", { url: "https://status.example.com/any/page" })).toBe("true");
    for (const url of [
      "https://docs.example.com/api/%2e%2e/admin",
      "https://docs.example.com.evil.com/api",
      "https://docs.exаmple.com/api",
    ]) {
      expect(evaluate(fetchPolicy!, "fetch", { url }), url).toBe("false");
    }
    for (const url of ["https://docs.example.com/api/..%2fadmin", "https://docs.example.com@evil.com/api", "file:///etc/passwd"]) {
      expect(evaluate(fetchPolicy!, "fetch", { url }), url).toBe("false (invalid-url)");
    }
  });
});
