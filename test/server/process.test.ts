// The real server process as `npm start` runs it (node server/dist/main.js, built by `tsc -b`):
// configuration from the environment, the first admin key printed once, graceful shutdown.

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const main = fileURLToPath(new URL("../../server/dist/main.js", import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), "authority-process-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

interface Running {
  readonly child: ChildProcess;
  readonly baseUrl: string;
  stdout(): string;
  stderr(): string;
  exit: Promise<number | null>;
}

async function start(env: Record<string, string>): Promise<Running> {
  return startIn(dataDir, env);
}

async function startIn(dir: string, env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, [main], {
    env: { PATH: process.env["PATH"] ?? "", AUTHORITY_PORT: "0", AUTHORITY_DATA_DIR: dir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk) => {
    out += String(chunk);
  });
  child.stderr!.on("data", (chunk) => {
    err += String(chunk);
  });
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const deadline = Date.now() + 20_000;
  while (!/"msg":"listening"/.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      // A server that did not start in time is not left running behind the failed test.
      if (child.exitCode === null) child.kill("SIGKILL");
      throw new Error(`server did not start: ${out}\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const baseUrl = /"url":"([^"]+)"/.exec(out.split("\n").find((l) => l.includes('"listening"'))!)![1]!;
  return { child, baseUrl, stdout: () => out, stderr: () => err, exit };
}

/** Waits until `done` holds or `ms` have passed, whichever is first. */
async function until(done: () => boolean, ms: number): Promise<void> {
  for (const deadline = Date.now() + ms; !done() && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
}

// Skipped (visibly) only when the server is not built; `npm test` builds it first with `tsc -b`.
describe.skipIf(!existsSync(main))("the server process", () => {
  it("writes a generated admin key to an owner-only file when no terminal is attached, logs its path only, serves with it, and stops on SIGTERM", async () => {
    const first = await start({});
    // The line comes on standard error once the server listens: after the listening line on
    // standard output, but not ordered with it (two pipes), so it is waited for.
    const written = /"msg":"first admin key written to a file[^"]*","identity":"admin","path":"([^"]+)"/;
    await until(() => written.test(first.stderr()), 10_000);
    const path = written.exec(first.stderr())?.[1];
    expect(path, first.stderr()).toBe(join(dataDir, "first-admin-key"));
    expect(statSync(path!).mode & 0o777).toBe(0o600);
    const key = readFileSync(path!, "utf8").trim();
    expect(key).toMatch(/^aa_[A-Za-z0-9_-]{43}$/);
    // The secret is in no stream, and both streams carry JSON lines only.
    expect(first.stderr() + first.stdout()).not.toContain(key);
    for (const line of (first.stdout() + first.stderr()).split("\n").filter((l) => l !== ""))
      expect(() => JSON.parse(line), line).not.toThrow();
    const keys = await fetch(`${first.baseUrl}/keys`, { headers: { authorization: `Bearer ${key}` } });
    expect(keys.status).toBe(200);
    rmSync(path!);
    first.child.kill("SIGTERM");
    expect(await first.exit).toBe(0);
    expect(first.stdout()).toContain('"msg":"stopped"');

    // The second start finds the key and prints none; AUTHORITY_ADMIN_KEY is ignored now.
    const second = await start({ AUTHORITY_ADMIN_KEY: "aa_ignored-because-keys-exist-0123456789abcdef", AUTHORITY_ENVIRONMENT: "staging" });
    expect(second.stderr()).not.toMatch(/aa_[A-Za-z0-9_-]{43}/);
    expect(existsSync(join(dataDir, "first-admin-key"))).toBe(false);
    const health = await (await fetch(`${second.baseUrl}/health`)).json();
    expect(health).toMatchObject({ status: "ok", environment: "staging" });
    expect((await fetch(`${second.baseUrl}/keys`, { headers: { "x-api-key": key! } })).status).toBe(200);
    second.child.kill("SIGINT");
    expect(await second.exit).toBe(0);
  });

  // `script` gives the server a terminal, as an operator starting it by hand has.
  it.skipIf(spawnSync("script", ["--version"]).error !== undefined)(
    "shows a generated admin key on the terminal when one is attached, and writes no file",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "authority-tty-"));
      const child = spawn("script", ["-qec", `"${process.execPath}" "${main}"`, "/dev/null"], {
        env: { PATH: process.env["PATH"] ?? "", AUTHORITY_PORT: "0", AUTHORITY_DATA_DIR: dir },
        stdio: ["pipe", "pipe", "pipe"],
      });
      let out = "";
      child.stdout!.on("data", (chunk) => {
        out += String(chunk);
      });
      const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      try {
        const deadline = Date.now() + 20_000;
        while (!/"msg":"first admin key shown on the terminal"/.test(out)) {
          if (Date.now() > deadline || child.exitCode !== null) throw new Error(`server did not start: ${out}`);
          await new Promise((r) => setTimeout(r, 50));
        }
        const key = /First start: an admin key was created[^\n]*\r?\n\s*\r?\n\s*(aa_[A-Za-z0-9_-]{43})/.exec(out)?.[1];
        expect(key, out).toBeDefined();
        const baseUrl = /"url":"([^"]+)"/.exec(out)![1]!;
        expect((await fetch(`${baseUrl}/keys`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
        expect(existsSync(join(dir, "first-admin-key"))).toBe(false);
        // The log line says where the key went, never the key.
        expect(out.split("\n").find((l) => l.includes("first admin key shown"))).not.toContain(key!);
      } finally {
        child.kill("SIGTERM");
        await exit;
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it("refuses a short AUTHORITY_ADMIN_KEY with exit 2 naming the variable, before anything is written", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "authority-short-key-")), "data");
    try {
      const child = spawn(process.execPath, [main], {
        env: { PATH: process.env["PATH"] ?? "", AUTHORITY_PORT: "0", AUTHORITY_DATA_DIR: dir, AUTHORITY_ADMIN_KEY: "secret" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let err = "";
      child.stderr!.on("data", (chunk) => {
        err += String(chunk);
      });
      expect(await new Promise<number | null>((resolve) => child.on("exit", resolve))).toBe(2);
      expect(err).toContain("AUTHORITY_ADMIN_KEY must be at least 32 printable characters");
      // Not even the data directory was made, so no database file exists either.
      expect(existsSync(dir)).toBe(false);
    } finally {
      rmSync(join(dir, ".."), { recursive: true, force: true });
    }
  });

  it("shows no key when the first start cannot listen, and the next start prints one that works", async () => {
    const dir = mkdtempSync(join(tmpdir(), "authority-port-taken-"));
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    let second: Running | undefined;
    try {
      const taken = (blocker.address() as AddressInfo).port;
      const child = spawn(process.execPath, [main], {
        env: { PATH: process.env["PATH"] ?? "", AUTHORITY_PORT: String(taken), AUTHORITY_DATA_DIR: dir },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout!.on("data", (chunk) => {
        out += String(chunk);
      });
      child.stderr!.on("data", (chunk) => {
        out += String(chunk);
      });
      expect(await new Promise<number | null>((resolve) => child.on("exit", resolve))).toBe(1);
      expect(out).toContain("EADDRINUSE");
      // One JSON line, with a hint naming the variable that picks another port.
      const failure = out.split("\n").find((l) => l.includes('"failed to start"'));
      expect(JSON.parse(failure!)).toMatchObject({ level: "error", hint: expect.stringContaining("AUTHORITY_PORT") });
      expect(out).not.toMatch(/aa_[A-Za-z0-9_-]{43}/);
      expect(out).not.toContain("first admin key created");

      second = await startIn(dir, {});
      const started = second;
      // Standard error is a pipe of its own, not ordered with the listening line: waited for.
      await until(() => started.stderr().includes('"msg":"first admin key written to a file'), 10_000);
      expect(second.stderr()).toContain('"msg":"first admin key written to a file');
      const key = readFileSync(join(dir, "first-admin-key"), "utf8").trim();
      expect((await fetch(`${second.baseUrl}/keys`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
      second.child.kill("SIGTERM");
      expect(await second.exit).toBe(0);
      // Like every info line, "shutting down" goes to stdout; stderr holds only the key file's warning.
      expect(second.stdout()).toMatch(/"level":"info","msg":"shutting down","signal":"SIGTERM"/);
      expect(second.stderr()).not.toContain("shutting down");
    } finally {
      // A server left running by a failed assertion would outlive the suite.
      if (second !== undefined && second.child.exitCode === null) second.child.kill("SIGKILL");
      blocker.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses an invalid configuration with a message naming the variable", async () => {
    const child = spawn(process.execPath, [main], {
      env: { PATH: process.env["PATH"] ?? "", AUTHORITY_PORT: "eighty" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr!.on("data", (chunk) => {
      err += String(chunk);
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(2);
    expect(err).toContain("AUTHORITY_PORT");
  });
});
