// Reads fenced code blocks out of docs/sdk.md, so tests run exactly what the documentation shows.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url));
export const sdkDocs = readFileSync(join(repositoryRoot, "docs", "sdk.md"), "utf8");

/** The fenced block of `language` whose text starts with `firstLine`, or undefined when there is none. */
export function docsBlock(language: string, firstLine: string): string | undefined {
  const fence = "`".repeat(3);
  const start = sdkDocs.indexOf(`${fence}${language}\n${firstLine}`);
  if (start < 0) return undefined;
  const from = start + fence.length + language.length + 1;
  return sdkDocs.slice(from, sdkDocs.indexOf(`${fence}\n`, from));
}

/** Writes the example agent of the docs into `dir` as an ES module package; answers the source path. */
export function writeExampleAgent(dir: string): string {
  const text = docsBlock("ts", "// refund-agent.ts");
  if (text === undefined) throw new Error("docs/sdk.md has no block starting with `// refund-agent.ts`");
  mkdirSync(join(dir, "src"), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  const path = join(dir, "src", "refund-agent.ts");
  writeFileSync(path, text);
  return path;
}
