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
      ".GITHUB/workflows/x.yml",
      ".github/Workflows/x.yml",
      ".github/workflows./x.yml",
      ".github/workflows /x.yml",
      ".github/workflows::$DATA/x.yml",
      "GITHUB~1/WORKFL~1/x.yml",
    ]) {
      expect(evaluate(repoPolicy!, "git.read", { path }), path).toBe("false (invalid-path)");
    }
  });

  it("containment on every file system: the page's claims about case, look-alikes and the allow-list", () => {
    expect(section).toContain("### Containment on every file system");
    expect(evaluate(repoPolicy!, "git.read", { path: ".GITHUB/README.md" })).toBe("true");
    const allowList = 'relPathWithin(args.path, "docs")';
    expect(section).toContain('`relPathWithin(args.path, "docs")`');
    expect(evaluate(allowList, "git.read", { path: "docs/a.md" })).toBe("true");
    expect(evaluate(allowList, "git.read", { path: "DOCS/a.md" })).toBe("false (invalid-path)");
    expect(evaluate('pathWithin(args.path, "/tmp/notes")', "files.read", { path: "/TMP/notes/x" })).toBe("false (invalid-path)");
    for (const path of ["/tmp/notes/\uff0e\uff0e/x", "/tmp/notes/\u2024\u2024/x", "/tmp/notes/.../x"])
      expect(evaluate('pathWithin(args.path, "/tmp/notes")', "files.read", { path }), path).toBe("false (invalid-path)");
  });

  it("file: URIs: read as the path they name, escapes failing closed", () => {
    for (const policy of ['urlWithin(args.uri, "file:///srv/data")', 'pathWithin(fileUriPath(args.uri), "/srv/data")']) {
      if (policy.startsWith("pathWithin")) expect(section).toContain(policy);
      expect(evaluate(policy, "resource:files", { uri: "file:///srv/data/a%20b.txt" }), policy).toBe("true");
      expect(evaluate(policy, "resource:files", { uri: "file:///srv/data/../../etc/passwd" }), policy).toBe("false");
      for (const uri of ["file:///srv/data/%2e%2e/%2e%2e/etc/passwd", "file:///srv/data/..%2f..%2fetc/passwd", "file://evil.example/x"])
        expect(evaluate(policy, "resource:files", { uri }), uri).toBe("false (invalid-url)");
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
    for (const url of [
      "https://docs.example.com/api/..%2fadmin",
      "https://docs.example.com/api/%252e%252e/admin",
      "https://docs.example.com/api/..%252fadmin",
      "https://docs.example.com/api/..;/admin",
      "https://docs.example.com@evil.com/api",
      "file:///etc/passwd",
    ]) {
      expect(evaluate(fetchPolicy!, "fetch", { url }), url).toBe("false (invalid-url)");
    }
  });
});
