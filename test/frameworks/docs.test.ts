// The examples of docs/frameworks.md, each taken from the page, compiled as written and run as a user runs it against a real server.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compiledExample, example, EXAMPLES } from "./docs-examples.js";
import { ATTESTATION, startPlatform, type Platform } from "./platform.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "authority-frameworks-docs-"));
let platform: Platform;
let grantId: string;

/** Writes the compiled example into the scratch project, whose node_modules are the repository's. */
function write(file: string): string {
  const path = join(scratch, file.replace(/\.ts$/, ".mjs"));
  writeFileSync(path, compiledExample(file));
  return path;
}

function run(path: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    AUTHORITY_URL: platform.baseUrl,
    AUTHORITY_AGENT_KEY: platform.agentKey,
    AUTHORITY_GRANT_ID: grantId,
    AGENT_ATTESTATION: JSON.stringify(ATTESTATION),
  };
  return new Promise((resolve) => {
    execFile(process.execPath, [path, ...args], { cwd: scratch, env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr });
    });
  });
}

beforeAll(async () => {
  writeFileSync(join(scratch, "package.json"), JSON.stringify({ type: "module", private: true }));
  symlinkSync(join(root, "node_modules"), join(scratch, "node_modules"), "dir");
  platform = await startPlatform();
  grantId = (await platform.grant()).id;
});

afterAll(async () => {
  await platform?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe("the examples of docs/frameworks.md", () => {
  it("type-check as written under strict settings, against the packages' published types", () => {
    const files = EXAMPLES.map((file) => {
      writeFileSync(join(scratch, file), example(file));
      return join(scratch, file);
    });
    const program = ts.createProgram(files, {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ["node"],
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(problems).toEqual([]);
  }, 120_000);

  for (const file of EXAMPLES) {
    it(`${file} is at most 30 lines and runs: allowed, refused by the policy, and gated`, async () => {
      expect(example(file).trimEnd().split("\n").length).toBeLessThanOrEqual(30);
      const path = write(file);
      const allowed = await run(path, ["o-1", "900"]);
      expect(allowed.stderr.replace(/.*EBADENGINE.*\n?/g, "")).toBe("");
      expect(JSON.parse(allowed.stdout)).toEqual({ order: "o-1", refunded_minor: 900 });
      const refused = await run(path, ["blocked", "100"]);
      expect(JSON.parse(refused.stdout)).toMatchObject({ refused: true, outcome: "deny", gate: "policy", reason_code: "policy.deny" });
      const gated = await run(path, ["o-2", "2500"]);
      expect(JSON.parse(gated.stdout)).toMatchObject({
        refused: true,
        outcome: "gated",
        waiting_for_approval: true,
        approvable_by: 'approver in ["cfo@example.com"]',
      });
      const records = (await platform.ledger(grantId)).filter((record) => record.kind === "decision").slice(-3);
      expect(records.map((record) => [record.outcome, record.request?.["tool"]])).toEqual([
        ["allow", "shop.refund"],
        ["deny", "shop.refund"],
        ["gated", "shop.refund"],
      ]);
    });
  }
});
