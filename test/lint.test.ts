// The formatter, the linter and the console's type check, run over the repository, and each shown failing on a planted violation.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const BIOME = join(root, "node_modules", "@biomejs", "biome", "bin", "biome");
const TSC = join(root, "node_modules", "typescript", "bin", "tsc");
const CONSOLE_DIR = join(root, "server", "console");
const scratch = mkdtempSync(join(tmpdir(), "authority-lint-"));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Run {
  readonly status: number | null;
  readonly output: string;
}

function run(command: string, args: readonly string[], cwd: string): Run {
  const result = spawnSync(process.execPath, [command, ...args], { cwd, encoding: "utf8", timeout: 120_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Biome's findings, one per line as `file:line rule`, from its GitHub reporter. */
function findings(output: string): string[] {
  return output
    .split("\n")
    .map((line) => /^::(?:error|warning|notice) title=([^,]+),file=([^,]+),line=(\d+)/.exec(line))
    .filter((match) => match !== null)
    .map((match) => `${match[2]!.replace(root, "")}:${match[3]} ${match[1]}`);
}

/** A folder outside the repository with the repository's biome.json (no Git there, so no ignore file) and the given files. */
function plantedProject(files: Readonly<Record<string, string>>): { dir: string; names: string[] } {
  const dir = mkdtempSync(join(scratch, "biome-"));
  const config = JSON.parse(readFileSync(join(root, "biome.json"), "utf8")) as Record<string, unknown>;
  delete config["$schema"];
  config["vcs"] = { enabled: false };
  writeFileSync(join(dir, "biome.json"), JSON.stringify(config, null, 2));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return { dir, names: Object.keys(files) };
}

describe("formatter and linter (biome.json, `npm run lint`)", () => {
  it("find nothing in the repository", () => {
    const result = run(BIOME, ["ci", "--error-on-warnings", "--reporter=github", "--max-diagnostics=none", "."], root);
    const found = findings(result.output);
    expect(found, `run \`npm run lint:fix\`, then fix the rest by hand:\n${found.join("\n")}`).toEqual([]);
    expect(result.status, result.output).toBe(0);
  });

  it("report a planted lint violation, and nothing else in that file", () => {
    const { dir, names } = plantedProject({
      "planted-lint.ts": "// A planted lint violation.\nexport function loose(value: any): string {\n  return String(value);\n}\n",
    });
    const result = run(BIOME, ["ci", "--error-on-warnings", "--reporter=github", ...names], dir);
    expect(result.status).not.toBe(0);
    expect(findings(result.output)).toEqual([expect.stringMatching(/planted-lint\.ts:2 lint\/suspicious\/noExplicitAny$/)]);
  });

  it("report a planted format violation: a line past the width of 140 and a missing semicolon", () => {
    const long = `export const planted = ["${"a".repeat(40)}", "${"b".repeat(40)}", "${"c".repeat(40)}", "${"d".repeat(40)}"];\n`;
    expect(long.length).toBeGreaterThan(140);
    const { dir, names } = plantedProject({
      "planted-width.ts": `// A planted line too long.\n${long}`,
      "planted-semicolon.ts": "// No semicolon.\nexport const planted = 1\n",
    });
    const result = run(BIOME, ["ci", "--error-on-warnings", "--reporter=github", ...names], dir);
    expect(result.status).not.toBe(0);
    const found = findings(result.output).sort();
    expect(found).toEqual([
      expect.stringMatching(/planted-semicolon\.ts:\d+ format$/),
      expect.stringMatching(/planted-width\.ts:\d+ format$/),
    ]);
  });

  it("leave a clean file alone", () => {
    const { dir, names } = plantedProject({
      "clean.ts": "// A clean file.\nexport function strict(value: unknown): string {\n  return String(value);\n}\n",
    });
    const result = run(BIOME, ["ci", "--error-on-warnings", "--reporter=github", ...names], dir);
    expect(findings(result.output)).toEqual([]);
    expect(result.status, result.output).toBe(0);
  });
});

describe("the console's JavaScript, type-checked (server/tsconfig.console.json)", () => {
  const scripts = readdirSync(CONSOLE_DIR).filter((name) => name.endsWith(".js"));

  it("opens every module with its purpose, then `// @ts-check`", () => {
    expect(scripts.length).toBeGreaterThan(3);
    for (const name of scripts) {
      const lines = readFileSync(join(CONSOLE_DIR, name), "utf8").split("\n");
      expect(lines[0], name).toMatch(/^\/\/ \S/);
      const header = lines.slice(
        0,
        lines.findIndex((line) => !line.startsWith("//")),
      );
      expect(header, name).toContain("// @ts-check");
    }
  });

  it("has no type error", () => {
    const result = run(TSC, ["-p", join(root, "server", "tsconfig.console.json")], root);
    expect(result.output).toBe("");
    expect(result.status).toBe(0);
  });

  it("reports a planted type error in a copy of the console", () => {
    const dir = mkdtempSync(join(scratch, "console-"));
    mkdirSync(join(dir, "console"));
    for (const name of scripts) copyFileSync(join(CONSOLE_DIR, name), join(dir, "console", name));
    const config = JSON.parse(readFileSync(join(root, "server", "tsconfig.console.json"), "utf8")) as Record<string, unknown>;
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config));
    // badge() takes any value, so the plant calls money(), whose amount is a number.
    const waiting = join(dir, "console", "waiting.js");
    writeFileSync(
      waiting,
      `${readFileSync(waiting, "utf8")}\nimport { money } from "./dom.js";\nexport const planted = money("2500", "EUR");\n`,
    );
    const result = run(TSC, ["-p", join(dir, "tsconfig.json")], dir);
    expect(result.status).not.toBe(0);
    expect(result.output).toMatch(/console\/waiting\.js\(\d+,\d+\): error TS2345: Argument of type 'string' is not assignable/);
  });
});
