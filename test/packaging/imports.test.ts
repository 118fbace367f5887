// What the installable packages may import: the SDK only itself, the CLI the server only lazily
// through one module, so that neither pulls in what its package.json does not promise.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [path] : [];
  });
}

/** Every module specifier a file loads at run time: static imports and exports that are not type-only, and dynamic imports. */
function runtimeImports(text: string): string[] {
  const staticOnes = [...text.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1]!);
  const bare = [...text.matchAll(/^import\s+"([^"]+)"/gm)].map((m) => m[1]!);
  const dynamic = [...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1]!);
  return [...staticOnes, ...bare, ...dynamic];
}

describe("imports of the installable packages", () => {
  it("the SDK loads nothing but its own modules at run time", () => {
    const outside = sources(join(root, "packages", "sdk", "src"))
      .flatMap((file) => runtimeImports(readFileSync(file, "utf8")).filter((s) => !s.startsWith("./") && !s.startsWith("../")).map((s) => `${relative(root, file)}: ${s}`));
    expect(outside).toEqual([]);
  });

  it("the CLI loads the server only in cli/src/server-package.ts, and only with a dynamic import", () => {
    const users = sources(join(root, "cli", "src"))
      .filter((file) => runtimeImports(readFileSync(file, "utf8")).includes("@agent-authority/server"))
      .map((file) => relative(root, file));
    expect(users).toEqual(["cli/src/server-package.ts"]);
    const text = readFileSync(join(root, "cli", "src", "server-package.ts"), "utf8");
    expect(text).not.toMatch(/^import\s+(?!type\b).*"@agent-authority\/server"/m);
  });

  it("the CLI's package.json keeps the server an optional peer, and the SDK's declares no dependency", () => {
    const cli = JSON.parse(readFileSync(join(root, "cli", "package.json"), "utf8"));
    expect(cli.dependencies["@agent-authority/server"]).toBeUndefined();
    expect(cli.peerDependenciesMeta["@agent-authority/server"]).toEqual({ optional: true });
    const sdk = JSON.parse(readFileSync(join(root, "packages", "sdk", "package.json"), "utf8"));
    expect(Object.keys(sdk.dependencies ?? {})).toEqual([]);
  });
});
