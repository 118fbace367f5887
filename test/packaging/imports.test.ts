// What the installable packages may import: the SDK only itself, the CLI the server and the gateway
// only lazily through one module, so that neither pulls in what its package.json does not promise.
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
  it("the SDK loads nothing but its own modules and Node's built-in ones at run time", () => {
    const outside = sources(join(root, "packages", "sdk", "src")).flatMap((file) =>
      runtimeImports(readFileSync(file, "utf8"))
        .filter((s) => !/^(\.\.?\/|node:)/.test(s))
        .map((s) => `${relative(root, file)}: ${s}`),
    );
    expect(outside).toEqual([]);
  });

  it.each(["@agent-authority/server", "@agent-authority/gateway"])(
    "the CLI loads %s only in cli/src/optional-packages.ts, and only with a dynamic import",
    (name) => {
      const users = sources(join(root, "cli", "src"))
        .filter((file) => runtimeImports(readFileSync(file, "utf8")).includes(name))
        .map((file) => relative(root, file));
      expect(users).toEqual(["cli/src/optional-packages.ts"]);
      const text = readFileSync(join(root, "cli", "src", "optional-packages.ts"), "utf8");
      expect(text).not.toMatch(new RegExp(`^import\\s+(?!type\\b).*"${name.replace("/", "\\/")}"`, "m"));
    },
  );

  it("the CLI's package.json keeps the server an optional peer, and the SDK's declares no dependency", () => {
    const cli = JSON.parse(readFileSync(join(root, "cli", "package.json"), "utf8"));
    for (const name of ["@agent-authority/server", "@agent-authority/gateway"]) {
      expect(cli.dependencies[name], name).toBeUndefined();
      expect(cli.peerDependenciesMeta[name], name).toEqual({ optional: true });
    }
    const sdk = JSON.parse(readFileSync(join(root, "packages", "sdk", "package.json"), "utf8"));
    expect(Object.keys(sdk.dependencies ?? {})).toEqual([]);
  });
});
