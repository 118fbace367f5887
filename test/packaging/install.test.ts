// The release as a user installs it: `npm run release`'s script packs every package into one folder
// with SHA256SUMS and a CycloneDX SBOM; the tarballs install into fresh projects outside the
// repository with no network (every registry package from npm's cache, as `npm install` of the
// repository left it), then the SDK, `authority` lint and test, the installed server and the
// gateway's help run there.
import { execFile, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, startServer, type AuthorityServer } from "@agent-authority/server";
import { compiledExample, EXAMPLES } from "../frameworks/docs-examples.js";
import { ATTESTATION, startPlatform } from "../frameworks/platform.js";
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
  "@agent-authority/analysis": "packages/analysis",
  "@agent-authority/sdk": "packages/sdk",
  "@agent-authority/gateway": "packages/gateway",
  "@agent-authority/ai-sdk": "packages/ai-sdk",
  "@agent-authority/openai-agents": "packages/openai-agents",
  "@agent-authority/langchain": "packages/langchain",
  "@agent-authority/lsp": "packages/lsp",
  "@agent-authority/cli": "cli",
  "@agent-authority/server": "server",
} as const);
type PackageName = keyof typeof PUBLIC;
/** What the project installs: the CLI's closure and the SDK, never the server nor the gateway. */
const INSTALLED: readonly PackageName[] = [
  "@agent-authority/grammar",
  "@agent-authority/api",
  "@agent-authority/language",
  "@agent-authority/lattice",
  "@agent-authority/engine",
  "@agent-authority/families",
  "@agent-authority/analysis",
  "@agent-authority/sdk",
  "@agent-authority/lsp",
  "@agent-authority/cli",
];
/** Packages that authoring must never pull in: the server, the gateway, their database, HTTP and MCP stacks. */
const SERVER_ONLY = [
  "@agent-authority/server",
  "@agent-authority/gateway",
  "@modelcontextprotocol/sdk",
  "better-sqlite3",
  "express",
  "pg",
  "prom-client",
];

interface CycloneDx {
  readonly components: readonly { readonly "bom-ref": string; readonly name: string; readonly version: string }[];
  readonly dependencies: readonly { readonly ref: string; readonly dependsOn: readonly string[] }[];
}

/** The CycloneDX JSON schemas as the CycloneDX library ships them (the BOM schema and the two it refers to). */
const CYCLONEDX_SCHEMAS = join(root, "node_modules", "@cyclonedx", "cyclonedx-library", "res", "schema");

/** The schema errors of `bom` against the CycloneDX 1.6 JSON schema; formats are checked where they can mislead a reader. */
function validateCycloneDx(bom: unknown): string[] {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
  ajv.addFormat("date-time", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
  ajv.addFormat("iri-reference", true);
  ajv.addFormat("idn-email", true);
  ajv.addFormat("uri", true);
  for (const file of ["spdx.SNAPSHOT.schema.json", "jsf-0.82.SNAPSHOT.schema.json"]) {
    const schema = JSON.parse(readFileSync(join(CYCLONEDX_SCHEMAS, file), "utf8")) as Record<string, unknown>;
    ajv.addSchema({ ...schema, $id: `http://cyclonedx.org/schema/${file}` });
  }
  const validate = ajv.compile(
    JSON.parse(readFileSync(join(CYCLONEDX_SCHEMAS, "bom-1.6.SNAPSHOT.schema.json"), "utf8")) as Record<string, unknown>,
  );
  return validate(bom) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ""}`);
}

/** What `npm ls --json` answers: each package with its version and what it depends on. */
interface NpmTree {
  readonly version?: string;
  readonly dependencies?: Readonly<Record<string, NpmTree>>;
}

/** Every package of an `npm ls --all --json` tree as `name@version`, once each, sorted. */
function installedPackages(tree: NpmTree): string[] {
  const found = new Set<string>();
  const walk = (node: NpmTree): void => {
    for (const [name, child] of Object.entries(node.dependencies ?? {})) {
      if (child.version !== undefined) found.add(`${name}@${child.version}`);
      walk(child);
    }
  };
  walk(tree);
  return [...found].sort();
}

/** The tarball's file name for a package at the release's version. */
const tarballOf = (name: PackageName): string => `${name.slice(1).replace("/", "-")}-${version}.tgz`;

const top = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string; engines: unknown };
const version = top.version;
const adminKey = "aa_packaging_suite_admin_0123456789abcdef";
const scratch = mkdtempSync(join(tmpdir(), "authority-packed-"));
const release = join(scratch, "release");
const project = join(scratch, "project");
const full = join(scratch, "full");
let server: AuthorityServer;
let dataDir: string;

/** An agent that registers itself, is issued a grant, and asks to act under it: the SDK as a user runs it. */
const AGENT_SCRIPT = `
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
`;

/** Settings of an `npm test` around this test that the inner npm keeps: where its cache and registry are. */
const KEPT_NPM_SETTINGS = new Set(["npm_config_cache", "npm_config_userconfig", "npm_config_registry"]);

/** The environment of every command: nothing else inherited from an `npm test` around it (its workspace, its package). */
function cleanEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1" };
  for (const name of Object.keys(env)) if (/^npm_/i.test(name) && !KEPT_NPM_SETTINGS.has(name.toLowerCase())) delete env[name];
  return env;
}

function run(
  command: string,
  args: readonly string[],
  cwd: string,
  timeout = 120_000,
): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(command, args, { cwd, env: cleanEnv(), encoding: "utf8", timeout });
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

/** The paths of the files inside a tarball, without npm's `package/` prefix. */
function filesOf(tarball: string): string[] {
  const listed = run("tar", ["-tzf", tarball], scratch);
  expect(listed.code, listed.stderr).toBe(0);
  return listed.stdout
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => line.replace(/^package\//, ""));
}

/** Writes a project outside the repository that depends on `names` by their tarballs in the release folder, locked for an offline install. */
function writeProject(dir: string, names: readonly PackageName[], extra: Record<string, unknown> = {}): void {
  mkdirSync(dir, { recursive: true });
  const installed: PackedPackage[] = names.map((name) => ({
    name,
    folder: PUBLIC[name],
    tarball: `${relative(dir, release)}/${tarballOf(name)}`,
  }));
  writeFileSync(join(dir, "package-lock.json"), JSON.stringify(offlineLock(root, "packed-project", installed), null, 2));
  const dependencies = Object.fromEntries(installed.map((p) => [p.name, `file:${p.tarball}`]));
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "packed-project", version: "1.0.0", private: true, type: "module", dependencies, ...extra }, null, 2),
  );
}

beforeAll(async () => {
  // The release command itself (`tsc -b`, then .ci/release.mjs), into a folder outside the repository.
  const made = run(npm, ["run", "release", "--", "--out", release], root);
  expect(made.code, made.stderr).toBe(0);
  writeProject(project, INSTALLED);
  // --offline: nothing is downloaded; a registry package missing from the cache fails the install.
  const install = run(npm, ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], project);
  expect(install.code, install.stderr).toBe(0);
  dataDir = mkdtempSync(join(scratch, "data-"));
  server = await startServer(
    loadConfig(
      {
        AUTHORITY_PORT: "0",
        AUTHORITY_DATA_DIR: dataDir,
        AUTHORITY_ADMIN_KEY: adminKey,
        AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "10000",
        AUTHORITY_LOG_LEVEL: "silent",
      },
      dataDir,
    ),
  );
}, 180_000);

afterAll(async () => {
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe("the release folder", () => {
  it("is made outside the repository and holds one tarball for every public package, SHA256SUMS, the SBOM and its lock", () => {
    expect(relative(root, release).startsWith("..")).toBe(true);
    const names = (Object.keys(PUBLIC) as PackageName[]).map(tarballOf);
    expect(readdirSync(release).sort()).toEqual([...names, "SHA256SUMS", "package-lock.json", "package.json", "sbom.cdx.json"].sort());
  });

  it("refuses an unknown option or a second folder with its usage, and makes no folder", () => {
    for (const args of [["--bogus"], ["--out"], ["--out", join(scratch, "a"), join(scratch, "b")]]) {
      const refused = run(npm, ["run", "release", "--", ...args], root);
      expect(refused.code, args.join(" ")).not.toBe(0);
      expect(refused.stderr, args.join(" ")).toMatch(/release: (unknown option "--bogus"|--out needs a folder|one output folder only)/);
      expect(refused.stderr).toContain("usage: npm run release [-- --out FOLDER]");
    }
    for (const name of ["--bogus", "--out", "a", "b"]) {
      expect(existsSync(join(root, name)), name).toBe(false);
      expect(existsSync(join(scratch, name)), name).toBe(false);
    }
  }, 120_000);

  it("installs with `npm ci` from its own lock, outside the repository, exactly the SBOM's components by name and version", () => {
    // A copy of the release folder alone: no lock of this repository is in reach, only the release's own.
    const installed = join(scratch, "installed");
    mkdirSync(installed);
    for (const name of readdirSync(release)) copyFileSync(join(release, name), join(installed, name));
    const install = run(npm, ["ci", "--omit=dev", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"], installed, 600_000);
    expect(install.code, install.stderr).toBe(0);
    const listed = run(npm, ["ls", "--all", "--omit=dev", "--json"], installed);
    expect(listed.code, listed.stderr).toBe(0);
    const tree = JSON.parse(listed.stdout) as NpmTree;
    const bom = JSON.parse(readFileSync(join(release, "sbom.cdx.json"), "utf8")) as CycloneDx;
    const expected = [...new Set(bom.components.map((c) => `${c.name}@${c.version}`))].sort();
    expect(installedPackages(tree)).toEqual(expected);
    // A comparison that cannot fail would prove nothing: one package at another version is seen.
    expect(installedPackages(tree)).not.toEqual(expected.map((p) => (p.startsWith("express@") ? "express@0.0.1" : p)));
  }, 660_000);

  it("has checksums that `sha256sum -c` accepts, and refuses a tarball changed after the release", () => {
    const sums = readFileSync(join(release, "SHA256SUMS"), "utf8");
    expect(sums.trim().split("\n")).toHaveLength(Object.keys(PUBLIC).length + 3);
    const checked = run("sha256sum", ["-c", "SHA256SUMS"], release);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    const copy = join(scratch, "tampered");
    mkdirSync(copy);
    writeFileSync(join(copy, "SHA256SUMS"), sums);
    for (const name of readdirSync(release)) writeFileSync(join(copy, name), readFileSync(join(release, name)));
    writeFileSync(
      join(copy, tarballOf("@agent-authority/sdk")),
      Buffer.concat([readFileSync(join(release, tarballOf("@agent-authority/sdk"))), Buffer.from([0])]),
    );
    const refused = run("sha256sum", ["-c", "--quiet", "SHA256SUMS"], copy);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(`${tarballOf("@agent-authority/sdk")}: FAILED`);
  });

  it("has a CycloneDX 1.6 SBOM valid against the CycloneDX JSON schema, naming every tarball by its SHA-256", () => {
    const bom = JSON.parse(readFileSync(join(release, "sbom.cdx.json"), "utf8")) as CycloneDx;
    expect(validateCycloneDx(bom)).toEqual([]);
    for (const name of Object.keys(PUBLIC) as PackageName[]) {
      const sha256 = createHash("sha256")
        .update(readFileSync(join(release, tarballOf(name))))
        .digest("hex");
      const component = bom.components.find((c) => c.name === name);
      expect(component, name).toMatchObject({
        version,
        purl: `pkg:npm/${name.replace("@", "%40")}@${version}`,
        hashes: [{ alg: "SHA-256", content: sha256 }],
      });
    }
    const refs = new Set(bom.components.map((c) => c["bom-ref"]));
    for (const edge of bom.dependencies) for (const ref of edge.dependsOn) expect(refs.has(ref), `${edge.ref} -> ${ref}`).toBe(true);
    // A schema that rejects nothing would prove nothing: a BOM without its format is refused.
    expect(validateCycloneDx({ ...bom, bomFormat: "SPDX" })).not.toEqual([]);
  });

  it("ships in each tarball dist with its types, a README and the LICENSE, and no tests or build state", () => {
    for (const name of Object.keys(PUBLIC) as PackageName[]) {
      const files = filesOf(join(release, tarballOf(name)));
      expect(files, name).toEqual(expect.arrayContaining(["package.json", "README.md", "LICENSE", "dist/index.js", "dist/index.d.ts"]));
      expect(
        files.filter((f) => /\.(test|spec)\.|tsbuildinfo|(^|\/)test\//.test(f) && !/commands\/test\./.test(f)),
        name,
      ).toEqual([]);
      if (name === "@agent-authority/server") expect(files).toEqual(expect.arrayContaining(["console/index.html", "dist/main.js"]));
      if (name === "@agent-authority/cli") expect(files).toContain("bin/authority.js");
    }
  });

  it("declares one version everywhere, a license and no URL the project does not own", () => {
    const licence = readFileSync(join(root, "LICENSE"), "utf8");
    expect(licence).toContain("Apache License");
    const changelog = readFileSync(join(root, "docs", "CHANGELOG.md"), "utf8");
    expect(changelog).toMatch(new RegExp(`^## ${version.replaceAll(".", "\\.")} \\(\\d{4}-\\d{2}-\\d{2}\\)$`, "m"));
    expect(changelog.indexOf("## Unreleased")).toBeLessThan(changelog.indexOf(`## ${version} `));
    for (const [name, folder] of Object.entries(PUBLIC)) {
      const text = readFileSync(join(root, folder, "package.json"), "utf8");
      const manifest = JSON.parse(text);
      expect(manifest, name).toMatchObject({
        name,
        version,
        license: "Apache-2.0",
        engines: top.engines,
        publishConfig: { access: "public" },
      });
      for (const field of ["dependencies", "peerDependencies", "devDependencies"]) {
        for (const [dependency, range] of Object.entries(manifest[field] ?? {}))
          if (dependency in PUBLIC) expect(range, `${name} ${field} ${dependency}`).toBe(version);
      }
      expect(text, name).not.toMatch(/https?:\/\//);
      expect(manifest.keywords, name).toContain("agent-authority");
      expect(manifest.private, name).toBeUndefined();
      expect(readFileSync(join(root, folder, "LICENSE"), "utf8"), name).toBe(licence);
    }
    expect(readFileSync(join(root, "package.json"), "utf8")).not.toMatch(/https?:\/\//);
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
    writeFileSync(join(project, "agent.mjs"), AGENT_SCRIPT);
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
    expect(serve.stderr).toContain(`npm install RELEASE/${tarballOf("@agent-authority/server")}`);
    expect(existsSync(join(project, "data"))).toBe(false);
    writeFileSync(join(project, "gateway.yaml"), "authority: {}\n");
    const gateway = run(join(project, "node_modules", ".bin", "authority"), ["gateway", "--config", "gateway.yaml"], project);
    expect(gateway.code).toBe(2);
    expect(gateway.stderr).toContain(`npm install RELEASE/${tarballOf("@agent-authority/gateway")}`);
  });
});

/** A free TCP port on the loopback interface. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
      .once("error", reject)
      .listen(0, "127.0.0.1", () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
      });
  });
}

describe("a project that installed every tarball, the server and the gateway too", () => {
  beforeAll(() => {
    // Install scripts run here: better-sqlite3 builds its native driver, as it does for a user.
    // The adapters are left out here: their frameworks are peers, installed by the project of their own below.
    writeProject(
      full,
      (Object.keys(PUBLIC) as PackageName[]).filter((name) => !(name in ADAPTERS)),
      { allowScripts: { "better-sqlite3": true } },
    );
    // Compiling the driver takes minutes on a busy machine; the limit only stops a hang.
    const install = run(npm, ["ci", "--offline", "--no-audit", "--no-fund"], full, 900_000);
    expect(install.code, install.stderr).toBe(0);
  }, 960_000);

  it("starts the installed server with `authority serve`, answers the installed SDK, and stops on SIGTERM", async () => {
    const port = await freePort();
    const data = mkdtempSync(join(scratch, "served-"));
    const env = {
      ...cleanEnv(),
      AUTHORITY_PORT: String(port),
      AUTHORITY_DATA_DIR: data,
      AUTHORITY_ADMIN_KEY: adminKey,
      AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "10000",
    };
    const served = spawn(join(full, "node_modules", ".bin", "authority"), ["serve"], { cwd: full, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    served.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    served.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => served.once("exit", (code) => resolve(code)));
    const baseUrl = `http://127.0.0.1:${port}/v1`;
    let healthy = false;
    for (let attempt = 0; attempt < 200 && !healthy && served.exitCode === null; attempt += 1) {
      healthy = await fetch(`${baseUrl}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (!healthy) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(healthy, output).toBe(true);
    expect(existsSync(join(data, "authority.db"))).toBe(true);
    writeFileSync(join(full, "agent.mjs"), AGENT_SCRIPT);
    const result = await runAsync(process.execPath, ["agent.mjs", baseUrl, adminKey], full);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ outcome: "allow", ledger: true, health: "ok" });
    served.kill("SIGTERM");
    expect(await exited, output).toBe(0);
  });

  it("runs the installed gateway's help", () => {
    const help = run(join(full, "node_modules", ".bin", "authority"), ["gateway", "--help"], full);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain("gateway");
    const loaded = run(
      process.execPath,
      ["--input-type=module", "-e", "const g = await import('@agent-authority/gateway'); process.stdout.write(g.GATEWAY_INFO.version)"],
      full,
    );
    expect(loaded.code, loaded.stderr).toBe(0);
    expect(loaded.stdout).toBe(version);
  });
});

/** The adapters, each with the framework it needs from the registry. */
const ADAPTERS = Object.freeze({
  "@agent-authority/ai-sdk": "ai",
  "@agent-authority/openai-agents": "@openai/agents",
  "@agent-authority/langchain": "@langchain/core",
} as const);

describe("a project outside the repository that installed the framework adapters and the frameworks", () => {
  const frameworks = join(scratch, "frameworks");

  beforeAll(() => {
    mkdirSync(join(frameworks, "tarballs"), { recursive: true });
    const installed: PackedPackage[] = (["@agent-authority/sdk", ...Object.keys(ADAPTERS)] as PackageName[]).map((name) => {
      const filename = tarballOf(name);
      copyFileSync(join(release, filename), join(frameworks, "tarballs", filename));
      return { name, folder: PUBLIC[name], tarball: `tarballs/${filename}` };
    });
    // The frameworks themselves come as the adapters' peers; `langchain` (for createAgent) and `zod` the project asks for.
    const lock = offlineLock(root, "frameworks-project", installed, ["langchain", "zod"]);
    writeFileSync(join(frameworks, "package-lock.json"), JSON.stringify(lock, null, 2));
    const dependencies = (lock["packages"] as Record<string, { dependencies: Record<string, string> }>)[""]!.dependencies;
    writeFileSync(
      join(frameworks, "package.json"),
      JSON.stringify({ name: "frameworks-project", version: "1.0.0", private: true, type: "module", dependencies }, null, 2),
    );
    const install = run(npm, ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], frameworks);
    expect(install.code, install.stderr).toBe(0);
  }, 180_000);

  it("has adapters that depend on the SDK alone and take their framework as a peer", () => {
    for (const [name, framework] of Object.entries(ADAPTERS)) {
      const manifest = JSON.parse(readFileSync(join(frameworks, "node_modules", name, "package.json"), "utf8"));
      expect(Object.keys(manifest.dependencies), name).toEqual(["@agent-authority/sdk"]);
      expect(Object.keys(manifest.peerDependencies), name).toEqual([framework]);
      expect(existsSync(join(frameworks, "node_modules", framework, "package.json")), framework).toBe(true);
    }
    for (const name of SERVER_ONLY) expect(existsSync(join(frameworks, "node_modules", name)), name).toBe(false);
  });

  it("runs each example agent of docs/frameworks.md there against a live server", async () => {
    const platform = await startPlatform();
    try {
      const grant = await platform.grant();
      const env = {
        AUTHORITY_URL: platform.baseUrl,
        AUTHORITY_AGENT_KEY: platform.agentKey,
        AUTHORITY_GRANT_ID: grant.id,
        AGENT_ATTESTATION: JSON.stringify(ATTESTATION),
        AUTHORITY_SIGNING_KEYS: await (await fetch(`${platform.baseUrl}/signing-keys`)).text(),
      };
      for (const file of EXAMPLES) {
        const path = join(frameworks, file.replace(/\.ts$/, ".mjs"));
        writeFileSync(path, compiledExample(file));
        const allowed = await runAsyncWith(process.execPath, [path, "o-1", "900"], frameworks, env);
        expect(allowed.code, allowed.stderr).toBe(0);
        expect(JSON.parse(allowed.stdout), file).toEqual({ order: "o-1", refunded_minor: 900 });
        const refused = await runAsyncWith(process.execPath, [path, "blocked", "100"], frameworks, env);
        expect(JSON.parse(refused.stdout), file).toMatchObject({ refused: true, outcome: "deny", gate: "policy" });
      }
      expect((await platform.ledger(grant.id)).filter((r) => r.kind === "decision").map((r) => r.outcome)).toEqual([
        "allow",
        "deny",
        "allow",
        "deny",
        "allow",
        "deny",
      ]);
    } finally {
      await platform.close();
    }
  }, 120_000);
});

/** `runAsync` with more environment. */
function runAsyncWith(
  command: string,
  args: readonly string[],
  cwd: string,
  extra: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, [...args], { cwd, env: { ...cleanEnv(), ...extra }, encoding: "utf8", timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr });
    });
  });
}
