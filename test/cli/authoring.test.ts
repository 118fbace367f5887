// Authoring habits from other policy tools: error limits, stdin formatting, eval, parse, version.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { authority, cliScratchDir, fixtures, root } from "./run-cli.js";

const dir = cliScratchDir("authority-authoring-");

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
    const json = JSON.parse(authority(["lint", path, "--max-errors", "3", "--format", "json"]).stdout) as {
      diagnostics: unknown[];
      errors: number;
    };
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
    expect(json.diagnostics[0]).toMatchObject({
      line,
      column: 17,
      code: "yaml/bad-indent",
      help: "this `[` is never closed: add `]` where the collection ends",
    });
  });

  it("an unclosed `{` of a parameter is reported on its own line, not at the next key", () => {
    const text = family.replace(
      "limit: {type: int, min: 0, max: 50000, default: 1000}",
      "limit: {type: int, min: 0, max: 50000, default: 1000",
    );
    const json = JSON.parse(authority(["lint", write("unclosed-map.yaml", text), "--format", "json"]).stdout) as {
      diagnostics: { line: number; column: number }[];
    };
    expect(json.diagnostics.map((d) => [d.line, d.column])).toEqual([[7, 10]]);
  });
});

describe("comments in a family's policy", () => {
  it("lint and test read past them, and fmt keeps them beside their operands", () => {
    const path = write("commented.yaml", readFileSync(join(fixtures, "commented.yaml"), "utf8"));
    // About comments, not proofs: the solver's start is left out.
    expect(authority(["lint", "--no-prove", path]).code).toBe(0);
    expect(authority(["test", path]).code).toBe(0);
    expect(authority(["fmt", path]).code).toBe(0);
    const text = readFileSync(path, "utf8");
    expect(text).toContain(
      [
        "  policy: |-",
        "    // small purchases, or the cfo",
        "    amount_minor <= ${limit} // cents, up to ${limit}",
        '      || approver in ["cfo@example.com"]',
        "examples:",
      ].join("\n"),
    );
    expect(authority(["fmt", "--check", path]).code).toBe(0);
    expect(authority(["test", path]).code).toBe(0);
  });
});

/** Runs the built CLI with `input` on stdin. */
function withStdin(args: readonly string[], input: string): { code: number | null; stdout: string; stderr: string } {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1" };
  delete env["FORCE_COLOR"];
  const run = spawnSync(process.execPath, [join(root, "cli", "bin", "authority.js"), ...args], {
    input,
    env,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe("authority fmt modes", () => {
  it("`fmt -` reads a policy on stdin and prints its canonical form, and `--kind family` a family", () => {
    expect(withStdin(["fmt", "-"], "amount_minor<=5||approver!=null // why")).toEqual({
      code: 0,
      stdout: "amount_minor <= 5\n  || approver != null // why\n",
      stderr: "",
    });
    const fam = withStdin(["fmt", "-", "--kind", "family"], family);
    expect(fam.code).toBe(0);
    expect(fam.stdout).toContain('policy: "amount_minor <= ${limit} || approver in [\\"cfo@example.com\\"]"');
    const bad = withStdin(["fmt", "-"], "amount_minor <=");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("<stdin>:1:16: error: unexpected end of policy [unexpected-end]");
    expect(withStdin(["fmt", "-", "--write"], "true").code).toBe(2);
  });

  it("reads at most 1 MiB from stdin: one byte more is a usage error, not an endless read", () => {
    const limit = 1024 * 1024;
    const at = withStdin(["fmt", "-"], `${" ".repeat(limit - 4)}true`);
    expect(at).toMatchObject({ code: 1 });
    expect(at.stderr).toContain("policy-too-long");
    const over = withStdin(["fmt", "-"], `${" ".repeat(limit - 3)}true`);
    expect(over.code).toBe(2);
    expect(over.stderr).toContain(`standard input is longer than ${limit} bytes`);
  });

  it("--list prints the paths that would change, --diff a unified diff, and neither writes", () => {
    mkdirSync(join(dir, "list"));
    const path = write("list/list.policy", "amount_minor<=5\n");
    write("list/ok.policy", "amount_minor <= 5\n");
    const listed = authority(["fmt", "--list", join(dir, "list")]);
    expect(listed.code).toBe(0);
    expect(
      listed.stdout
        .split("\n")
        .filter((l) => l.endsWith(".policy"))
        .map((l) => l.slice(l.lastIndexOf("/") + 1)),
    ).toEqual(["list.policy"]);
    const diff = authority(["fmt", "--diff", path]);
    expect(diff.code).toBe(1);
    expect(diff.stdout).toMatch(
      /^--- a\/.*list\.policy\n\+\+\+ b\/.*list\.policy\n@@ -1,1 \+1,1 @@\n-amount_minor<=5\n\+amount_minor <= 5\n$/,
    );
    expect(readFileSync(path, "utf8")).toBe("amount_minor<=5\n");
    expect(authority(["fmt", "--write", path]).code).toBe(0);
    expect(readFileSync(path, "utf8")).toBe("amount_minor <= 5\n");
    expect(authority(["fmt", "--diff", path])).toMatchObject({ code: 0, stdout: "" });
    expect(authority(["fmt", "--diff", "--list", path]).code).toBe(2);
  });

  it("--diff of a family shows only the policy line, with context", () => {
    const path = write("diff.yaml", family);
    const diff = authority(["fmt", "--diff", path]).stdout.split("\n");
    expect(diff.filter((l) => l.startsWith("-") && !l.startsWith("---"))).toEqual([
      `-  policy: "amount_minor<=\${limit}||approver in [\\"cfo@example.com\\"]"`,
    ]);
    expect(diff.filter((l) => l.startsWith("+") && !l.startsWith("+++"))).toEqual([
      `+  policy: "amount_minor <= \${limit} || approver in [\\"cfo@example.com\\"]"`,
    ]);
  });
});

const input = {
  amount_minor: 20000,
  currency: "EUR",
  tool: "purchase.create",
  agent: "a",
  principal: "p",
  audience: "erp",
  uses: 0,
  spent_minor: 0,
  hour_utc: 9,
  weekday_utc: "mon",
};

describe("authority eval, parse and version", () => {
  const policy = 'amount_minor < 10000 || approver in ["cfo@example.com"]\n';

  it("eval prints the value with an approver given, and the residual without one", () => {
    const path = write("eval.policy", policy);
    expect(authority(["eval", path, "--input", write("no-approver.json", JSON.stringify(input))]).stdout).toBe(
      'residual: approver in ["cfo@example.com"]\n',
    );
    expect(authority(["eval", path, "--input", write("cfo.json", JSON.stringify({ ...input, approver: "cfo@example.com" }))]).stdout).toBe(
      "true\n",
    );
    expect(authority(["eval", path, "--input", write("none.json", JSON.stringify({ ...input, approver: null }))]).stdout).toBe("false\n");
    const small = authority([
      "eval",
      path,
      "--input",
      write("small.json", JSON.stringify({ ...input, amount_minor: 5 })),
      "--format",
      "json",
    ]);
    expect(JSON.parse(small.stdout)).toEqual({ value: true });
  });

  it("eval reports a run-time error as false with the error, a bad policy with its frame, a bad input as usage", () => {
    const runtime = authority([
      "eval",
      write("rt.policy", "args.n < 5\n"),
      "--input",
      write("rt.json", JSON.stringify({ ...input, approver: null, args: { n: "x" } })),
    ]);
    expect(runtime.stdout).toMatch(/^false \(error\[runtime-type\]: /);
    const bad = authority(["eval", write("bad.policy", "amount_minr < 5\n"), "--input", write("ok.json", JSON.stringify(input))]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("bad.policy:1:1: error[policy/unknown-name]: unknown name `amount_minr`");
    const missing = authority([
      "eval",
      write("p.policy", policy),
      "--input",
      write("missing.json", JSON.stringify({ ...input, tool: undefined })),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("the input has no `tool`");
    const nullArgs = authority([
      "eval",
      write("p.policy", policy),
      "--input",
      write("null-args.json", JSON.stringify({ ...input, args: null })),
    ]);
    expect(nullArgs.code).toBe(2);
    expect(nullArgs.stdout).toBe("");
    expect(nullArgs.stderr).toContain("null-args.json`: `args` must be an object (leave it out for no arguments)");
    expect(authority(["eval", write("p.policy", policy)]).stderr).toContain("`--input FILE` is required");
  });

  it("parse prints the tree as JSON, grouped by precedence, with comments and spans", () => {
    const run = withStdin(["parse", "-"], "a_b // c\n");
    expect(run.code).toBe(0);
    const text = 'uses == 1 || tool == "x" && amount_minor < 2 // why\n';
    const parsedOut = withStdin(["parse", "-"], text);
    const tree = JSON.parse(parsedOut.stdout) as {
      ast: { kind: string; op: string; right: { op: string } };
      comments: { text: string; span: { start: number } }[];
    };
    expect(tree.ast).toMatchObject({ kind: "binary", op: "||", right: { kind: "binary", op: "&&" } });
    expect(tree.comments).toEqual([{ text: "// why", span: { start: text.indexOf("//"), end: text.indexOf("//") + 6 } }]);
    const bad = withStdin(["parse", "-"], "uses ==");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("<stdin>:1:8: error[policy/unexpected-end]");
  });

  it("version names the CLI and Node.js versions", () => {
    expect(authority(["version"]).stdout).toBe(`authority ${authority(["--version"]).stdout.trim()}\nnode ${process.version}\n`);
  });
});

describe("authority test --run", () => {
  const procurement = join(root, "policies", "procurement-agent.yaml");

  it("runs only the examples whose family/name matches, and counts the rest as not run", () => {
    const run = authority(["test", procurement, "--run", "refunds|another system", "--verbose"]);
    expect(run.code).toBe(0);
    expect(run.stdout.match(/^ok /gm)).toHaveLength(2);
    expect(run.stdout).toMatch(/\n2 passed, 0 failed, 7 not run\n$/);
  });

  it("a pattern that matches nothing fails, and a bad pattern is a usage error", () => {
    const none = authority(["test", procurement, "--run", "no such example"]);
    expect(none.code).toBe(1);
    expect(none.stdout).toContain("no example matches `no such example`");
    expect(authority(["test", procurement, "--run", "("]).code).toBe(2);
  });
});
