// `authority migrate`, `serve` and `keys …` against the real reference server on the loopback address.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorityAsync, buildCli, root } from "./run-cli.js";

const ADMIN_KEY = "test-admin-key-0123456789abcdefghijklmnop";
let dataDir = "";
let serve: ChildProcess | undefined;
let base = "";

function env(extra: Record<string, string> = {}): Record<string, string> {
  return { AUTHORITY_DATA_DIR: dataDir, AUTHORITY_LOG_LEVEL: "silent", AUTHORITY_ADMIN_KEY: ADMIN_KEY, AUTHORITY_DATABASE_URL: "", ...extra };
}

beforeAll(async () => {
  buildCli();
  dataDir = mkdtempSync(join(tmpdir(), "authority-serve-"));
  const migrated = await authorityAsync(["migrate"], { env: env() });
  expect(migrated.code, migrated.stderr).toBe(0);
  expect(migrated.stdout).toMatch(/^applied migrations? /);
  serve = spawn(process.execPath, [join(root, "cli", "bin", "authority.js"), "serve", "--port", "0"], {
    cwd: root, env: { ...process.env, ...env(), NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"],
  });
  base = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 30_000);
    serve!.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    serve!.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
  });
}, 180_000);

afterAll(async () => {
  if (serve !== undefined && serve.exitCode === null) {
    const exited = new Promise<number | null>((resolve) => serve!.once("exit", (code) => resolve(code)));
    serve.kill("SIGTERM");
    expect(await exited).toBe(0);
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the server commands", () => {
  it("migrate again finds the database up to date", async () => {
    const run = await authorityAsync(["migrate"], { env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("is up to date");
  });

  it("keys create, list and revoke manage keys over HTTP", async () => {
    const admin = env({ AUTHORITY_SERVER: base, AUTHORITY_KEY: ADMIN_KEY });
    const created = await authorityAsync(["keys", "create", "--identity", "ci@example.com", "--kind", "service", "--role", "issuer", "--format", "json"], { env: admin });
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout) as { id: string; key: string; roles: string[] };
    expect(key.roles).toEqual(["issuer"]);

    const listed = await authorityAsync(["keys", "list"], { env: admin });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`${key.id}\\s+ci@example.com\\s+service\\s+issuer\\s+active`));
    expect(listed.stdout).not.toContain(key.key);

    const asIssuer = await authorityAsync(["keys", "list"], { env: env({ AUTHORITY_SERVER: base, AUTHORITY_KEY: key.key }) });
    expect(asIssuer.code).toBe(1);
    expect(asIssuer.stderr).toContain("HTTP 403");

    const revoked = await authorityAsync(["keys", "revoke", key.id, "--reason", "rotated"], { env: admin });
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(`revoked ${key.id} (ci@example.com)\n`);
    const afterwards = await authorityAsync(["keys", "list", "--key", key.key, "--server", base]);
    expect(afterwards.code).toBe(1);
    expect(afterwards.stderr).toContain("HTTP 401");
  });

  it("keys create refuses an incomplete request before sending it", async () => {
    const run = await authorityAsync(["keys", "create", "--identity", "x@example.com", "--kind", "human"], { env: env({ AUTHORITY_SERVER: base, AUTHORITY_KEY: ADMIN_KEY }) });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("at least one `--role`");
  });
});
