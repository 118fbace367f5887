// `npx authority serve` as a user starts it: SIGTERM sent to npx stops the server and frees its
// port (npx does not pass the signal on), stdout and stderr carry JSON lines only, the first admin
// secret goes to an owner-only file whose path is logged, and a port in use gets a hint that names
// AUTHORITY_PORT. Real processes, real ports.

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCli, root } from "./run-cli.js";

const dirs: string[] = [];
beforeAll(() => buildCli(), 180_000);
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Started {
  readonly child: ChildProcess;
  output(): { out: string; err: string };
  closed(): boolean;
}

/** Starts `npx authority serve` on a fresh data folder; its environment comes from the test's. */
function npxServe(dataDir: string, port: string): Started {
  const env: Record<string, string | undefined> = {
    ...process.env,
    AUTHORITY_DATA_DIR: dataDir,
    AUTHORITY_DATABASE_URL: "",
    AUTHORITY_LOG_LEVEL: "info",
  };
  delete env["AUTHORITY_ADMIN_KEY"];
  const child = spawn("npx", ["--offline", "authority", "serve", "--port", port], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk) => {
    out += String(chunk);
  });
  child.stderr!.on("data", (chunk) => {
    err += String(chunk);
  });
  let closed = false;
  child.stdout!.on("close", () => {
    closed = true;
  });
  return { child, output: () => ({ out, err }), closed: () => closed };
}

async function until(what: string, done: () => boolean, seconds = 60): Promise<void> {
  for (const deadline = Date.now() + seconds * 1000; !done(); ) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Whether nothing listens on the port: this process can take it. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

const jsonLines = (text: string): unknown[] =>
  text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));

describe("npx authority serve", () => {
  it("stops on SIGTERM sent to npx and frees its port; writes JSON lines only and the first admin key to an owner-only file", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "authority-npx-serve-"));
    dirs.push(dataDir);
    const started = npxServe(dataDir, "0");
    await until("the listening line", () => /"msg":"listening"/.test(started.output().out));
    const url = /"msg":"listening","url":"([^"]+)"/.exec(started.output().out)![1]!;
    const port = Number(new URL(url).port);
    await until("the key file's line", () => /first admin key written/.test(started.output().err));
    const { out, err } = started.output();
    expect(() => jsonLines(out), out).not.toThrow();
    expect(() => jsonLines(err), err).not.toThrow();
    expect(out).not.toContain("listening on");
    const path = join(dataDir, "first-admin-key");
    expect(err).toContain(JSON.stringify(path).slice(1, -1));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const key = readFileSync(path, "utf8").trim();
    expect(out + err).not.toContain(key);
    expect((await fetch(`${url}/keys`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);

    expect(await portFree(port)).toBe(false);
    started.child.kill("SIGTERM");
    // No time is asserted: the port is looked at until it is free, or a generous deadline passes.
    let free = false;
    for (const deadline = Date.now() + 60_000; !free && Date.now() < deadline; ) {
      free = await portFree(port);
      if (!free) await new Promise((r) => setTimeout(r, 200));
    }
    expect(free, "the server still holds its port after npx was sent SIGTERM").toBe(true);
    // The server itself ended: it logged its stop, and every holder of the output pipe closed it.
    await until("the stopped line", () => started.output().out.includes('"msg":"stopped"'));
    await until("the server's output to close", () => started.closed());
  }, 180_000);

  it("answers a port in use with one JSON line whose hint names AUTHORITY_PORT, and exits 1", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "authority-npx-taken-"));
    dirs.push(dataDir);
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    try {
      const started = npxServe(dataDir, String((blocker.address() as AddressInfo).port));
      const code = await new Promise<number | null>((resolve) => started.child.on("exit", resolve));
      expect(code).toBe(1);
      const { out, err } = started.output();
      expect(() => jsonLines(out + err)).not.toThrow();
      const failure = jsonLines(err).find((l) => (l as { msg?: string }).msg === "failed to start");
      expect(failure).toMatchObject({
        level: "error",
        error: expect.stringContaining("EADDRINUSE"),
        hint: expect.stringContaining("AUTHORITY_PORT"),
      });
    } finally {
      blocker.close();
    }
  }, 180_000);
});
