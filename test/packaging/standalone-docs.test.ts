// The documentation stands alone: no page or source comment points at a document that is not in
// the repository, and every relative link of every page leads to a file that is.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const SKIPPED = new Set(["node_modules", "dist", ".git"]);

/** Every file under `dir` whose name passes `keep`, skipping dependencies and build output. */
function walk(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIPPED.has(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path, keep);
    return keep(name) ? [path] : [];
  });
}

// cli/docs/ holds copies of docs/ pages made when the CLI is packed (git-ignored): the originals are read.
const pages = [
  join(root, "README.md"),
  ...["docs", "grammar", "packages", "cli", "server"].flatMap((dir) => walk(join(root, dir), (n) => n.endsWith(".md"))),
].filter((page) => !relative(root, page).startsWith(join("cli", "docs")));
const sources = ["grammar", "packages", "cli", "server", "test"].flatMap((dir) => walk(join(root, dir), (n) => /\.(ts|mjs|js)$/.test(n)));
/** Names of documents that exist only outside the repository. */
const OUTSIDE = [/DESIGN\.md/, /\.\.\/shared\b/, /\/work\//];

const PUBLIC_FOLDERS = [
  "grammar",
  "packages/api",
  "packages/language",
  "packages/lattice",
  "packages/engine",
  "packages/families",
  "packages/sdk",
  "packages/gateway",
  "packages/ai-sdk",
  "packages/openai-agents",
  "packages/langchain",
  "packages/lsp",
  "cli",
  "server",
];
/** A package's manifest, by its folder. */
const manifestOf = (folder: string): Record<string, unknown> & { name: string; dependencies?: Record<string, string> } =>
  JSON.parse(readFileSync(join(root, folder, "package.json"), "utf8"));
const byName = new Map(PUBLIC_FOLDERS.map((folder) => [manifestOf(folder).name, manifestOf(folder)]));
const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;

/** The packages an install command from the release folder names, its braces expanded as bash does; every tarball must be at `version`. */
function installed(command: string): string[] {
  const match = /\$RELEASE\/agent-authority-(?:\{([a-z,-]+)\}|([a-z-]+))-(\d+\.\d+\.\d+)\.tgz/.exec(command);
  expect(match, command).not.toBeNull();
  expect(match![3], command).toBe(version);
  return (match![1] ?? match![2]!).split(",").map((short) => `@agent-authority/${short}`);
}

describe("documentation that stands alone", () => {
  it("reads the pages it should", () => {
    expect(pages.map((p) => relative(root, p))).toEqual(
      expect.arrayContaining([
        "README.md",
        "docs/cli.md",
        "docs/sdk.md",
        "docs/SECURITY.md",
        "docs/CONTRIBUTING.md",
        "docs/CHANGELOG.md",
        "packages/sdk/README.md",
      ]),
    );
  });

  it("docs/sdk.md, docs/cli.md and every package's README start with the install command from the release folder", () => {
    // The block right under the page's title, before any other text.
    const firstBlock = (file: string): string | undefined =>
      /^# [^\n]+\n\n```sh\n([\s\S]*?)```/.exec(readFileSync(join(root, file), "utf8"))?.[1];
    expect(firstBlock("docs/sdk.md")).toBe(`npm install $RELEASE/agent-authority-sdk-${version}.tgz\n`);
    expect(installed(firstBlock("docs/cli.md")!)).toContain("@agent-authority/cli");
    for (const folder of PUBLIC_FOLDERS) {
      const name = manifestOf(folder).name as string;
      expect(installed(firstBlock(`${folder}/README.md`)!), folder).toContain(name);
    }
  });

  it("every install command from the release folder names every package its tarballs need, at the version of the packages", () => {
    const commands = [...pages].flatMap((page) =>
      readFileSync(page, "utf8")
        .split("\n")
        .filter((line) => /^npm install .*\$RELEASE\//.test(line)),
    );
    expect(commands.length).toBeGreaterThan(PUBLIC_FOLDERS.length);
    for (const command of commands) {
      const names = installed(command);
      for (const name of names) {
        const needs = Object.keys(byName.get(name)?.dependencies ?? {}).filter((dependency) => byName.has(dependency));
        for (const need of needs) expect(names, `${command}: ${name} needs ${need}`).toContain(need);
      }
    }
    // A command the check must refuse: the CLI without the libraries it needs.
    expect(installed(`npm install $RELEASE/agent-authority-cli-${version}.tgz`)).toEqual(["@agent-authority/cli"]);
  });

  it("tells no one to install a package of the project from the npm registry, where none is published", () => {
    // A registry spec names the package (`@agent-authority/sdk`); a release install names a tarball path.
    const registryInstall =
      /\b(?:npm|pnpm|yarn|bun)\s+(?:install|i|add)\b[^\n`]*?(?<![\w/.-])@agent-authority\/|\binstall\s+`@agent-authority\//;
    const found = pages
      .filter((page) => !page.endsWith("CHANGELOG.md"))
      .flatMap((page) =>
        readFileSync(page, "utf8")
          .split("\n")
          .map((line, i) => (registryInstall.test(line) ? `${relative(root, page)}:${i + 1}: ${line.trim()}` : undefined))
          .filter((hit) => hit !== undefined),
      );
    expect(found).toEqual([]);
    // The rule finds what it must find, and leaves a tarball install alone.
    expect(registryInstall.test("npm install @agent-authority/sdk")).toBe(true);
    expect(registryInstall.test("It comes with the CLI: install `@agent-authority/cli` and")).toBe(true);
    expect(registryInstall.test("npm install $RELEASE/agent-authority-sdk-0.2.0.tgz")).toBe(false);
  });

  it("no page and no source file points at a document outside the repository", () => {
    const offenders = [...pages, ...sources]
      .filter((file) => file !== fileURLToPath(import.meta.url))
      .flatMap((file) =>
        readFileSync(file, "utf8")
          .split("\n")
          .map((line, i) => ({ where: `${relative(root, file)}:${i + 1}`, line })),
      )
      .filter(({ line }) => OUTSIDE.some((pattern) => pattern.test(line)));
    expect(offenders).toEqual([]);
  });

  it("names no web address as the project's own, for the project has none", () => {
    const manifests = ["package.json", ...PUBLIC_FOLDERS.map((folder) => `${folder}/package.json`)].map((file) => join(root, file));
    const owned = /github\.com\/agent-authority|agent-authority\.(dev|io|org|com)\b/i;
    const offenders = [...pages, ...sources, ...manifests, join(root, "cli", "schemas", "family.schema.json")]
      .filter((file) => file !== fileURLToPath(import.meta.url))
      .flatMap((file) =>
        readFileSync(file, "utf8")
          .split("\n")
          .map((line, i) => ({ where: `${relative(root, file)}:${i + 1}`, line })),
      )
      .filter(({ line }) => owned.test(line));
    expect(offenders).toEqual([]);
  });

  it("every relative link of every page leads to a file of the repository", () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(page, "utf8").replace(/```[\s\S]*?```/g, "");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:|^#/.test(target!)) continue;
        const path = join(dirname(page), decodeURIComponent(target!.split("#")[0]!));
        if (
          !existsSync(path) ||
          !relative(root, path)
            .split("/")
            .every((part) => part !== "..")
        )
          broken.push(`${relative(root, page)}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
