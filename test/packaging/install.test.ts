// The packages as a user installs them: `npm pack` each, install the tarballs into a fresh project
// outside the repository with no network (every registry package from npm's cache, as `npm install`
// of the repository left it), then run the SDK against a live server and `authority` there.
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, startServer, type AuthorityServer } from "@agent-authority/server";
import { offlineLock, type PackedPackage } from "./offline-lock.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** Every public package, by folder; the project installs the SDK and the CLI with what they need. */
const PUBLIC = Object.freeze({
  "@agent-authority/grammar": "grammar",
  "@agent-authority/api": "packages/api",
  "@agent-authority/language": "packages/language",
  "@agent-authority/lattice": "packages/lattice",
  "@agent-authority/engine": "packages/engine",
  "@agent-authority/families": "packages/families",
  "@agent-authority/sdk": "packages/sdk",
  "@agent-authority/gateway": "packages/gateway",
  "@agent-authority/lsp": "packages/lsp",
  "@agent-authority/cli": "cli",
  "@agent-authority/server": "server",
} as const);
type PackageName = keyof typeof PUBLIC;
/** What the project installs: the CLI's closure and the SDK, never the server nor the gateway. */
const INSTALLED: readonly PackageName[] = [
  "@agent-authority/grammar", "@agent-authority/api", "@agent-authority/language", "@agent-authority/lattice",
  "@agent-authority/engine", "@agent-authority/families", "@agent-authority/sdk", "@agent-authority/lsp", "@agent-authority/cli",
];
/** Packages that authoring must never pull in: the server, the gateway, their database, HTTP and MCP stacks. */
const SERVER_ONLY = ["@agent-authority/server", "@agent-authority/gateway", "@modelcontextprotocol/sdk", "better-sqlite3", "express", "pg", "prom-client"];

interface PackResult { readonly name: PackageName; readonly filename: string; readonly files: readonly { readonly path: string }[] }

const adminKey = "aa_packaging_suite_admin_0123456789abcdef";
const scratch = mkdtempSync(join(tmpdir(), "authority-packed-"));
const project = join(scratch, "project");
let packs: PackResult[];
let server: AuthorityServer;
let dataDir: string;

/** Settings of an `npm test` around this test that the inner npm keeps: where its cache and registry are. */
const KEPT_NPM_SETTINGS = new Set(["npm_config_cache", "npm_config_userconfig", "npm_config_registry"]);

/** The environment of every command: nothing else inherited from an `npm test` around it (its workspace, its package). */
function cleanEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1" };
  for (const name of Object.keys(env)) if (/^npm_/i.test(name) && !KEPT_NPM_SETTINGS.has(name.toLowerCase())) delete env[name];
  return env;
}

function run(command: string, args: readonly string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(command, args, { cwd, env: cleanEnv(), encoding: "utf8", timeout: 120_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The same without blocking, for a child that talks to the server this process serves. */
function runAsync(command: string, args: readonly string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, [...args], { cwd, env: cleanEnv(), encoding: "utf8", timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  const tarballs = join(project, "tarballs");
  mkdirSync(tarballs, { recursive: true });
  const workspaces = Object.values(PUBLIC).flatMap((folder) => ["--workspace", folder]);
  // What the CLI's `prepack` does, which `--ignore-scripts` below leaves out: ship the docs its help names.
  const copied = run(process.execPath, [join(root, "cli", "scripts", "copy-docs.mjs")], root);
  expect(copied.code, copied.stderr).toBe(0);
  const packed = run(npm, ["pack", ...workspaces, "--pack-destination", tarballs, "--json", "--ignore-scripts"], root);
  expect(packed.code, packed.stderr).toBe(0);
  packs = JSON.parse(packed.stdout) as PackResult[];
  const installed: PackedPackage[] = INSTALLED.map((name) => ({
    name, folder: PUBLIC[name], tarball: `tarballs/${packs.find((p) => p.name === name)!.filename}`,
  }));
  const lock = offlineLock(root, "packed-project", installed);
  writeFileSync(join(project, "package-lock.json"), JSON.stringify(lock, null, 2));
  const dependencies = Object.fromEntries(installed.map((p) => [p.name, `file:${p.tarball}`]));
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "packed-project", version: "1.0.0", private: true, type: "module", dependencies }, null, 2));
  // --offline: nothing is downloaded; a registry package missing from the cache fails the install.
  const install = run(npm, ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], project);
  expect(install.code, install.stderr).toBe(0);
  dataDir = mkdtempSync(join(scratch, "data-"));
  server = await startServer(loadConfig({ AUTHORITY_PORT: "0", AUTHORITY_DATA_DIR: dataDir, AUTHORITY_ADMIN_KEY: adminKey, AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "10000", AUTHORITY_LOG_LEVEL: "silent" }, dataDir));
}, 180_000);

afterAll(async () => {
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe("the packed tarballs", () => {
  it("are made outside the repository, one for every public package", () => {
    expect(relative(root, project).startsWith("..")).toBe(true);
    expect(packs.map((p) => p.name).sort()).toEqual(Object.keys(PUBLIC).sort());
  });

  it("ship dist with its types, a README and the LICENSE, and no tests or build state", () => {
    for (const pack of packs) {
      const files = pack.files.map((f) => f.path);
      expect(files, pack.name).toEqual(expect.arrayContaining(["package.json", "README.md", "LICENSE", "dist/index.js", "dist/index.d.ts"]));
      expect(files.filter((f) => /\.(test|spec)\.|tsbuildinfo|(^|\/)test\//.test(f) && !/commands\/test\./.test(f)), pack.name).toEqual([]);
    }
    expect(packs.find((p) => p.name === "@agent-authority/server")!.files.map((f) => f.path)).toEqual(expect.arrayContaining(["console/index.html", "dist/main.js"]));
    expect(packs.find((p) => p.name === "@agent-authority/cli")!.files.map((f) => f.path)).toContain("bin/authority.js");
  });

  it("declare what a registry needs to publish them, the same everywhere", () => {
    const top = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    const licence = readFileSync(join(root, "LICENSE"), "utf8");
    expect(licence).toContain("Apache License");
    for (const [name, folder] of Object.entries(PUBLIC)) {
      const manifest = JSON.parse(readFileSync(join(root, folder, "package.json"), "utf8"));
      expect(manifest, name).toMatchObject({
        name, license: "Apache-2.0", engines: top.engines, publishConfig: { access: "public" },
        repository: { type: "git", url: top.repository.url, directory: folder },
      });
      expect(manifest.homepage, name).toMatch(/^https:\/\//);
      expect(manifest.keywords, name).toContain("agent-authority");
      expect(manifest.private, name).toBeUndefined();
      expect(readFileSync(join(root, folder, "LICENSE"), "utf8"), name).toBe(licence);
      expect(readFileSync(join(root, folder, "README.md"), "utf8"), name).toContain(`npm install`);
    }
  });
});

describe("a project that installed the SDK and the CLI from the tarballs", () => {
  it("holds no server, database driver or web framework", () => {
    for (const name of SERVER_ONLY) expect(existsSync(join(project, "node_modules", name)), name).toBe(false);
  });

  it("has an SDK with no runtime dependency at all", () => {
    const sdk = JSON.parse(readFileSync(join(project, "node_modules", "@agent-authority", "sdk", "package.json"), "utf8"));
    expect(Object.keys({ ...sdk.dependencies, ...sdk.peerDependencies, ...sdk.optionalDependencies })).toEqual([]);
  });

  it("runs the SDK against a live server: registers an agent, issues a grant and is allowed a call", async () => {
    writeFileSync(join(project, "agent.mjs"), `
import { AuthorityClient } from "@agent-authority/sdk";
const [baseUrl, adminKey] = process.argv.slice(2);
const admin = new AuthorityClient({ baseUrl, apiKey: adminKey });
const issuer = new AuthorityClient({ baseUrl, apiKey: (await admin.keys.create({ identity: "packed-issuer", kind: "service", roles: ["issuer"] })).key });
const agent = await issuer.agents.register({ name: "packed-bot" });
const grant = await issuer.grants.issue({
  agent_id: agent.id, principal_type: "human", principal_id: "ops@example.com", scope: { tool: ["orders.lookup"] },
  budget_amount_minor: 1000, budget_currency: "EUR", budget_count: 5, enforcement_mode: "observe", delegation_policy: "attenuating",
});
const bot = new AuthorityClient({ baseUrl, apiKey: (await admin.keys.create({ identity: "packed-bot", kind: "service", roles: ["agent"], agent_id: agent.id })).key });
const decision = await bot.authorize({ grant_id: grant.id, tool: "orders.lookup" });
process.stdout.write(JSON.stringify({ outcome: decision.outcome, ledger: decision.ledger_id !== null, health: (await admin.service.health()).status }));
`);
    const result = await runAsync(process.execPath, ["agent.mjs", server.baseUrl, adminKey], project);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ outcome: "allow", ledger: true, health: "ok" });
  });

  it("runs `authority lint` and `authority test` on the repository's families, copied there", () => {
    mkdirSync(join(project, "policies"), { recursive: true });
    writeFileSync(join(project, "policies", "support-agent.yaml"), readFileSync(join(root, "policies", "support-agent.yaml")));
    const bin = join(project, "node_modules", ".bin", "authority");
    const lint = run(bin, ["lint", "policies"], project);
    expect(lint.code, lint.stderr).toBe(0);
    expect(lint.stdout).toContain("1 file checked: 0 errors");
    const broken = join(project, "policies", "broken.yaml");
    writeFileSync(broken, "id: broken\nversion: 1\n");
    const refused = run(bin, ["lint", "policies"], project);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/broken\.yaml:\d+:\d+/);
    rmSync(broken);
    const tested = run(bin, ["test", "policies"], project);
    expect(tested.code, tested.stdout).toBe(0);
    expect(tested.stdout).toMatch(/\d+ passed, 0 failed/);
  });

  it("points `authority --help` and every command's help at documentation pages the installed package holds", () => {
    const bin = join(project, "node_modules", ".bin", "authority");
    const help = run(bin, ["--help"], project);
    expect(help.code).toBe(0);
    const cliDoc = /Every command and a CI job: (\S+)/.exec(help.stdout)?.[1];
    expect(cliDoc, help.stdout).toBe(join(project, "node_modules", "@agent-authority", "cli", "docs", "cli.md"));
    expect(readFileSync(cliDoc!, "utf8")).toBe(readFileSync(join(root, "docs", "cli.md"), "utf8"));
    for (const command of ["serve", "gateway", "lsp"]) {
      const text = run(bin, [command, "--help"], project).stdout;
      const named = [...text.matchAll(/([^\s(]*docs\/[a-z-]+\.md)/g)].map((m) => m[1]!);
      expect(named.length, text).toBeGreaterThan(0);
      for (const page of named) expect(existsSync(page), `${command}: ${page}`).toBe(true);
    }
  });

  it("says how to install the server or the gateway for the commands that need them, and exits 2", () => {
    const serve = run(join(project, "node_modules", ".bin", "authority"), ["migrate"], project);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain("npm install @agent-authority/server");
    expect(existsSync(join(project, "data"))).toBe(false);
    writeFileSync(join(project, "gateway.yaml"), "authority: {}\n");
    const gateway = run(join(project, "node_modules", ".bin", "authority"), ["gateway", "--config", "gateway.yaml"], project);
    expect(gateway.code).toBe(2);
    expect(gateway.stderr).toContain("npm install @agent-authority/gateway");
  });
});

