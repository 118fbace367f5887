// The example agent in docs/sdk.md compiles against the SDK, and its documented manifest is what the code gives.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModuleKind, ModuleResolutionKind, Project, ScriptTarget } from "ts-morph";
import { afterAll, describe, expect, it } from "vitest";
import { buildManifest } from "../../cli/src/manifest/index.js";
import { docsBlock, repositoryRoot, sdkDocs, writeExampleAgent } from "./docs-blocks.js";

const scratch = mkdtempSync(join(tmpdir(), "sdk-docs-"));
const agentDir = join(scratch, "refund-agent");
const agentSource = writeExampleAgent(agentDir);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

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
        typeRoots: [join(repositoryRoot, "node_modules", "@types")],
        paths: { "@agent-authority/sdk": [join(repositoryRoot, "packages", "sdk", "src", "index.ts")] },
      },
      skipAddingFilesFromTsConfig: true,
    });
    const source = project.addSourceFileAtPath(agentSource);
    const problems = source.getPreEmitDiagnostics().map((d) => project.formatDiagnosticsWithColorAndContext([d]));
    expect(problems).toEqual([]);
  });

  it("has the manifest the walkthrough shows", () => {
    const manifest = buildManifest(agentDir);
    expect(manifest.complete).toBe(true);
    const shown = JSON.parse(docsBlock("json", '{\n  "manifest_version": 1,') ?? "{}") as { tools: unknown; manifest_hash: string };
    expect(manifest.tools).toEqual(shown.tools);
    expect(manifest.manifest_hash).toBe(shown.manifest_hash);
    expect(sdkDocs).toContain(`manifest_hash: "${manifest.manifest_hash}"`);
  });
});

describe("the text the walkthrough shows for `authority manifest`", () => {
  it("is what the manifest renders for the example agent", async () => {
    const { renderManifest } = await import("../../cli/src/manifest/index.js");
    expect(docsBlock("text", "tools (2):")).toBe(renderManifest(buildManifest(agentDir)));
  });
});
