// The example agent in docs/sdk.md compiles against the SDK, and its documented manifest is what the code gives.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ModuleKind, ModuleResolutionKind, Project, ScriptTarget } from "ts-morph";
import { afterAll, describe, expect, it } from "vitest";
import { buildManifest } from "../../cli/src/manifest/index.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const docs = readFileSync(join(root, "docs", "sdk.md"), "utf8");
const scratch = mkdtempSync(join(tmpdir(), "sdk-docs-"));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The fenced block of `language` whose first line is `firstLine`. */
function block(language: string, firstLine: string): string {
  const fence = "`".repeat(3);
  const start = docs.indexOf(`${fence}${language}\n${firstLine}`);
  expect(start, `docs/sdk.md has a ${language} block starting with ${firstLine}`).toBeGreaterThanOrEqual(0);
  const from = start + fence.length + language.length + 1;
  return docs.slice(from, docs.indexOf(`${fence}\n`, from));
}

const agentDir = join(scratch, "refund-agent");
mkdirSync(join(agentDir, "src"), { recursive: true });
writeFileSync(join(agentDir, "package.json"), JSON.stringify({ type: "module" }));
writeFileSync(join(agentDir, "src", "refund-agent.ts"), block("ts", "// refund-agent.ts"));

describe("the example agent of docs/sdk.md", () => {
  it("type-checks against the SDK's sources under strict settings", () => {
    const project = new Project({
      compilerOptions: {
        target: ScriptTarget.ES2022,
        module: ModuleKind.NodeNext,
        moduleResolution: ModuleResolutionKind.NodeNext,
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        lib: ["lib.es2023.d.ts"],
        types: ["node"],
        typeRoots: [join(root, "node_modules", "@types")],
        paths: { "@agent-authority/sdk": [join(root, "packages", "sdk", "src", "index.ts")] },
      },
      skipAddingFilesFromTsConfig: true,
    });
    const source = project.addSourceFileAtPath(join(agentDir, "src", "refund-agent.ts"));
    const problems = source.getPreEmitDiagnostics().map((d) => `${d.getLineNumber() ?? 0}: ${project.formatDiagnosticsWithColorAndContext([d])}`);
    expect(problems).toEqual([]);
  });

  it("has the manifest the walkthrough shows", () => {
    const manifest = buildManifest(agentDir);
    expect(manifest.complete).toBe(true);
    const shown = JSON.parse(block("json", "{\n  \"manifest_version\": 1,")) as { tools: unknown; manifest_hash: string };
    expect(manifest.tools).toEqual(shown.tools);
    expect(manifest.manifest_hash).toBe(shown.manifest_hash);
    expect(docs).toContain(`manifest_hash: "${manifest.manifest_hash}"`);
  });
});
