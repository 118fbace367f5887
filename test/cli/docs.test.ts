// The CI job in docs/cli.md is valid YAML and names only commands this CLI provides.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../cli/src/commands/index.js";
import { root } from "./run-cli.js";

describe("docs/cli.md", () => {
  const doc = readFileSync(join(root, "docs", "cli.md"), "utf8");
  const job = /```yaml\n(name: grant families[\s\S]*?)```/.exec(doc)?.[1];

  it("holds a GitHub Actions job that runs on every pull request", () => {
    expect(job).toBeDefined();
    const workflow = parse(job!) as { on: { pull_request: unknown }; jobs: Record<string, { steps: { run?: string }[] }> };
    expect(workflow.on.pull_request).toBeDefined();
    const runs = Object.values(workflow.jobs)
      .flatMap((j) => j.steps.map((s) => s.run ?? ""))
      .join("\n");
    for (const step of ["authority lint policies/", "authority test policies/", "authority preview", "authority fmt --check policies/"]) {
      expect(runs).toContain(step);
    }
  });

  it("every `npx authority` command in the doc is one the CLI provides", () => {
    const available = COMMANDS.filter((c) => c.available).map((c) => c.name);
    const used = [...doc.matchAll(/npx authority ([a-z]+(?: [a-z]+)?)/g)].map((m) => m[1]!);
    expect(used.length).toBeGreaterThan(5);
    for (const words of used) {
      const [first, second] = words.split(" ");
      expect(available.includes(words) || available.includes(first!) || available.includes(`${first} ${second}`), words).toBe(true);
    }
  });
});
