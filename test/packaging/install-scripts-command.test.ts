// README's command for better-sqlite3's install script is the one the npm in use prints: a fresh
// install of a package with an install script, outside the repository, shows npm's warning, and the
// command it names records the package as reviewed in the project's package.json.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const scratch = mkdtempSync(join(tmpdir(), "authority-install-scripts-"));

/** The environment of npm here: nothing of an `npm test` around it but its cache and registry settings. */
function cleanEnv(): Record<string, string | undefined> {
  const kept = new Set(["npm_config_cache", "npm_config_userconfig", "npm_config_registry"]);
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1" };
  for (const name of Object.keys(env)) if (/^npm_/i.test(name) && !kept.has(name.toLowerCase())) delete env[name];
  return env;
}

function npmIn(cwd: string, args: readonly string[]): { code: number | null; output: string } {
  const result = spawnSync(npm, [...args], { cwd, env: cleanEnv(), encoding: "utf8", timeout: 120_000 });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("README's install-scripts command", () => {
  it("is the command npm prints for a package whose install script is not yet reviewed, and it records the review", () => {
    const dependency = join(scratch, "scripted");
    const project = join(scratch, "project");
    mkdirSync(dependency);
    mkdirSync(project);
    writeFileSync(
      join(dependency, "package.json"),
      JSON.stringify({ name: "scripted", version: "1.0.0", scripts: { install: "node -e 0" } }),
    );
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "project", version: "1.0.0", private: true }));
    const installed = npmIn(project, ["install", "../scripted", "--no-audit", "--no-fund"]);
    expect(installed.code, installed.output).toBe(0);
    // npm's own words: "Run `npm install-scripts ls` to review, or `npm install-scripts approve <pkg>` to allow."
    const printed = /`(npm [a-z-]+ approve) <pkg>`/.exec(installed.output)?.[1];
    expect(printed, installed.output).toBeDefined();
    const readme = readFileSync(join(root, "README.md"), "utf8");
    expect(readme).toContain(`\`${printed} better-sqlite3\``);
    const approved = npmIn(project, [...printed!.split(" ").slice(1), "scripted"]);
    expect(approved.code, approved.output).toBe(0);
    const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as { allowScripts?: Record<string, unknown> };
    // A package from a folder is approved by its spec; one from the registry, as better-sqlite3, by its name.
    expect(Object.entries(manifest.allowScripts ?? {})).toEqual([[expect.stringContaining("scripted"), true]]);
  }, 240_000);
});
