// The dependency direction, checked on every run: pure packages stay pure and nothing imports server or cli.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

/** Which workspace packages each package may import; a package absent here may import any. */
const allowedWorkspaceImports: Record<string, readonly string[]> = {
  grammar: [],
  "packages/api": [],
  "packages/language": ["grammar"],
  "packages/lattice": ["grammar", "language"],
  "packages/engine": ["grammar", "language", "lattice"],
  "packages/families": ["grammar", "api", "language", "lattice", "engine"],
  "packages/sdk": ["api"],
  "packages/lsp": ["grammar", "language", "families"],
  // The framework adapters: the SDK and their framework's types, no I/O of their own.
  "packages/ai-sdk": ["sdk"],
  "packages/openai-agents": ["sdk"],
  "packages/langchain": ["sdk"],
};

/** Modules a pure package must never import: I/O, servers, drivers. */
const forbiddenInPure = [
  /^node:(fs|fs\/promises|net|http|https|http2|child_process|dgram|dns|tls|cluster|worker_threads|readline|repl|vm|v8|inspector)$/,
  /^(fs|fs\/promises|net|http|https|http2|child_process|dgram|dns|tls|cluster|worker_threads|readline)$/,
  /^express$/,
  /^better-sqlite3$/,
  /^pg$/,
  /^@agent-authority\/(server|cli)$/,
  /(^|\/)server\//,
  /(^|\/)cli\//,
];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

function importsOf(text: string): string[] {
  const specifiers: string[] = [];
  const pattern = /(?:^|\n)\s*(?:import|export)\b[^"'`;]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s*["']([^"']+)["']/g;
  for (const match of text.matchAll(pattern)) {
    const spec = match[1] ?? match[2] ?? match[3];
    if (spec !== undefined) specifiers.push(spec);
  }
  return specifiers;
}

describe("dependency direction", () => {
  for (const [pkg, allowed] of Object.entries(allowedWorkspaceImports)) {
    it(`${pkg} imports only what a pure package may`, () => {
      const violations: string[] = [];
      for (const file of sourceFiles(join(root, pkg, "src"))) {
        for (const spec of importsOf(readFileSync(file, "utf8"))) {
          const where = `${relative(root, file)} imports \`${spec}\``;
          if (forbiddenInPure.some((rule) => rule.test(spec))) violations.push(where);
          const workspace = /^@agent-authority\/([a-z-]+)$/.exec(spec);
          if (workspace && !allowed.includes(workspace[1]!)) violations.push(where);
        }
      }
      expect(violations).toEqual([]);
    });
  }

  it("packages/gateway, which does I/O, still imports neither the server nor the CLI", () => {
    const violations: string[] = [];
    for (const file of sourceFiles(join(root, "packages/gateway", "src"))) {
      for (const spec of importsOf(readFileSync(file, "utf8"))) {
        // The MCP SDK's own `…/server/…` modules are its server side, not ours: only relative paths are checked.
        if (/^@agent-authority\/(server|cli)$|^\.{1,2}\/(.*\/)?(server|cli)\//.test(spec)) violations.push(`${relative(root, file)} imports \`${spec}\``);
      }
    }
    expect(violations).toEqual([]);
  });

  it("the import scanner sees the forms it must see", () => {
    const sample = 'import { a } from "node:fs";\nexport * from "express";\nimport "pg";\nconst m = await import("@agent-authority/server");';
    expect(importsOf(sample)).toEqual(["node:fs", "express", "pg", "@agent-authority/server"]);
  });
});
