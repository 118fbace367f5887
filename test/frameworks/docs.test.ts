// The examples of docs/frameworks.md, each taken from the page, compiled as written and run as a user runs it against a real server.
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
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
/** The server's public keys as the samples pin them (`authority signing-keys list --format json`). */
let signingKeys: string;

/** Writes the compiled example into the scratch project, whose node_modules are the repository's. */
function write(file: string): string {
  const path = join(scratch, file.replace(/\.ts$/, ".mjs"));
  writeFileSync(path, compiledExample(file));
  return path;
}

function run(path: string, args: string[], cwd = scratch): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    AUTHORITY_URL: platform.baseUrl,
    AUTHORITY_AGENT_KEY: platform.agentKey,
    AUTHORITY_GRANT_ID: grantId,
    AGENT_ATTESTATION: JSON.stringify(ATTESTATION),
    AUTHORITY_SIGNING_KEYS: signingKeys,
  };
  return new Promise((resolve) => {
    execFile(process.execPath, [path, ...args], { cwd, env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr });
    });
  });
}

beforeAll(async () => {
  writeFileSync(join(scratch, "package.json"), JSON.stringify({ type: "module", private: true }));
  symlinkSync(join(root, "node_modules"), join(scratch, "node_modules"), "dir");
  platform = await startPlatform();
  grantId = (await platform.grant()).id;
  signingKeys = await (await fetch(`${platform.baseUrl}/signing-keys`)).text();
});

afterAll(async () => {
  await platform?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** The shell block of the page that compiles an example: its commands, comments cut, one a line. */
function compileCommands(): string[] {
  const page = readFileSync(join(root, "docs", "frameworks.md"), "utf8");
  const fence = "`".repeat(3);
  const start = page.indexOf(`${fence}sh\nnpm pkg set type=module`);
  expect(start, "docs/frameworks.md has the block that compiles an example").toBeGreaterThan(0);
  const body = page.slice(start + fence.length + 3, page.indexOf(`${fence}\n`, start + fence.length));
  return body
    .split("\n")
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter((line) => line.length > 0);
}

describe("the examples of docs/frameworks.md", () => {
  it("compile with the page's commands on this Node.js in a project without a type, and the .js files run", async () => {
    const commands = compileCommands();
    expect(commands[0]).toBe("npm pkg set type=module");
    expect(commands[1]).toBe("npm install --save-dev typescript");
    expect(commands[2]).toMatch(/^npx tsc .* ai-sdk-agent\.ts$/);
    const project = join(scratch, "compiled");
    mkdirSync(project);
    // A project as a user starts it: no "type" yet; TypeScript is the repository's, linked in place of the install.
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "compiled", version: "1.0.0", private: true }));
    symlinkSync(join(root, "node_modules"), join(project, "node_modules"), "dir");
    const shell = (command: string) => spawnSync("sh", ["-c", command], { cwd: project, encoding: "utf8", timeout: 180_000 });
    const typed = shell(commands[0]!);
    expect(typed.status, typed.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(project, "package.json"), "utf8")).type).toBe("module");
    for (const file of EXAMPLES) {
      writeFileSync(join(project, file), example(file));
      const stem = file.replace(/\.ts$/, "");
      const compiled = shell(commands[2]!.replace("ai-sdk-agent", stem));
      expect(compiled.status, compiled.stdout + compiled.stderr).toBe(0);
      expect(existsSync(join(project, `${stem}.js`)), file).toBe(true);
      const allowed = await run(join(project, `${stem}.js`), ["o-1", "900"], project);
      expect(allowed.code, allowed.stderr).toBe(0);
      expect(JSON.parse(allowed.stdout), file).toEqual({ order: "o-1", refunded_minor: 900 });
    }
  }, 600_000);

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
