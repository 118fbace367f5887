// The GitHub Actions job and the pre-commit hooks of docs/cli.md, run as written on a copy of policies/.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCli, root } from "./run-cli.js";

const doc = readFileSync(join(root, "docs", "cli.md"), "utf8");
const workflow = parse(/```yaml\n(name: grant families[\s\S]*?)```/.exec(doc)![1]!) as {
  jobs: Record<string, { steps: { run?: string }[] }>;
};
const hooks = parse(/```yaml\n(# pre-commit hooks[\s\S]*?)```/.exec(doc)![1]!) as {
  repos: { hooks: { id: string; entry: string; files: string; pass_filenames?: boolean }[] }[];
};

let repo: string;
let env: Record<string, string | undefined>;

function git(...args: string[]): string {
  return execFileSync("git", ["-c", "user.email=ci@example.com", "-c", "user.name=ci", "-c", "commit.gpgsign=false", ...args], {
    cwd: repo,
    encoding: "utf8",
  });
}

function sh(script: string): { code: number | null; stdout: string; stderr: string } {
  const run = spawnSync("bash", ["-e", "-c", script], { cwd: repo, env, encoding: "utf8", timeout: 120_000 });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

beforeAll(() => {
  buildCli();
  repo = mkdtempSync(join(tmpdir(), "authority-ci-"));
  const bin = join(repo, ".bin");
  mkdirSync(bin);
  // `npx authority …` as the workspace's install would run it: the built CLI of this checkout.
  writeFileSync(
    join(bin, "npx"),
    `#!/bin/sh\n[ "$1" = authority ] || exit 127\nshift\nexec "${process.execPath}" "${join(root, "cli", "bin", "authority.js")}" "$@"\n`,
  );
  chmodSync(join(bin, "npx"), 0o755);
  cpSync(join(root, "policies"), join(repo, "policies"), { recursive: true });
  git("init", "-q", "-b", "main");
  git("add", "policies");
  git("commit", "-q", "-m", "base");
  git("update-ref", "refs/remotes/origin/main", "HEAD");
  git("checkout", "-q", "-b", "change");
  const family = join(repo, "policies", "support-agent.yaml");
  writeFileSync(
    family,
    readFileSync(family, "utf8").replace(/^version: (\d+)$/m, (_m, v: string) => `version: ${Number(v) + 1}`),
  );
  git("commit", "-q", "-am", "raise the version");
  const summary = join(repo, ".summary.md");
  env = {
    ...process.env,
    PATH: `${bin}:${process.env["PATH"] ?? ""}`,
    NO_COLOR: "1",
    GITHUB_BASE_REF: "main",
    GITHUB_STEP_SUMMARY: summary,
  };
  delete env["FORCE_COLOR"];
}, 180_000);
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe("the GitHub Actions job of docs/cli.md", () => {
  it("runs every step but `npm ci` to success on the example families, and writes the SARIF and the summary", () => {
    const steps = Object.values(workflow.jobs)
      .flatMap((j) => j.steps.map((s) => s.run))
      .filter((r): r is string => r !== undefined && r.trim() !== "npm ci");
    expect(steps.length).toBeGreaterThanOrEqual(5);
    for (const step of steps) {
      const run = sh(step);
      expect(run.code, `${step}\n${run.stdout}\n${run.stderr}`).toBe(0);
    }
    const sarif = JSON.parse(readFileSync(join(repo, "authority-lint.sarif"), "utf8")) as { version: string };
    expect(sarif.version).toBe("2.1.0");
    const summary = readFileSync(join(repo, ".summary.md"), "utf8");
    expect(summary).toContain("### policies/support-agent.yaml");
    expect(summary).not.toContain("### policies/procurement-agent.yaml");
    // Five and more commands, each a process that loads the CLI and may run the analysis: bounded
    // by the steps' own time limits, not by the default of one test.
  }, 300_000);
});

describe("the pre-commit hooks of docs/cli.md", () => {
  const all = hooks.repos.flatMap((r) => r.hooks);

  /** Runs a hook as pre-commit does: its entry, followed by the staged files its pattern matches unless `pass_filenames` is false. */
  function runHook(hook: (typeof all)[number], files: readonly string[]) {
    const matching = files.filter((f) => new RegExp(hook.files).test(f));
    const names = hook.pass_filenames === false ? [] : matching.map((f) => `'${f}'`);
    return sh(`${hook.entry} ${names.join(" ")}`);
  }

  it("pass on the example families", () => {
    const files = git("ls-files").trim().split("\n");
    expect(all.map((h) => h.id)).toEqual(["authority-fmt", "authority-lint", "authority-test"]);
    for (const hook of all) {
      const run = runHook(hook, files);
      expect(run.code, `${hook.id}\n${run.stdout}${run.stderr}`).toBe(0);
    }
  });

  it("stop a commit with an unformatted or a broken policy", () => {
    const path = join(repo, "policies", "limits.policy");
    writeFileSync(path, "amount_minor<=500\n");
    expect(runHook(all[0]!, ["policies/limits.policy", "README.md"]).code).toBe(1);
    writeFileSync(path, "amount_minor = 500\n");
    const lint = runHook(all[1]!, ["policies/limits.policy"]);
    expect(lint.code).toBe(1);
    expect(lint.stdout).toContain("help: compare with `==`");
    rmSync(path);
    expect(existsSync(path)).toBe(false);
  });
});
