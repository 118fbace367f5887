// The SQLite backup and restore of docs/operations.md, run as written: an online backup of a
// serving database, a clean shutdown (which removes the -wal and -shm files), the restore block,
// and a server that starts on the restored file with the backup's data and verifying chains.

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, type AuthorityServer } from "@agent-authority/server";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentList } from "@agent-authority/sdk";

const operations = readFileSync(new URL("../../docs/operations.md", import.meta.url), "utf8");
const ADMIN = "aa_restore-admin-0123456789abcdefghijklmnopqrstuv";
const BACKUP = "/backups/authority-2026-11-25.db";
const root = mkdtempSync(join(tmpdir(), "authority-restore-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The shell block of the page that contains `marker`. */
function block(marker: string): string {
  const found = [...operations.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes(marker));
  if (found === undefined) throw new Error(`docs/operations.md has no shell block with \`${marker}\``);
  return found;
}

function serve(dataDir: string): Promise<AuthorityServer> {
  return startServer({
    host: "127.0.0.1",
    port: 0,
    dataDir,
    databaseUrl: join(dataDir, "authority.db"),
    environment: "restore",
    adminKey: ADMIN,
    autoApprovalCeilingMinor: 0,
    logLevel: "silent",
    serverKeyFile: join(dataDir, "server.key"),
  } as Parameters<typeof startServer>[0]);
}

async function call<T = Record<string, unknown>>(
  server: AuthorityServer,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const reply = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: reply.status, body: (await reply.json()) as T };
}

describe.skipIf(spawnSync("sqlite3", ["-version"]).error !== undefined)("docs/operations.md: SQLite backup and restore", () => {
  it("restores a backup after a clean shutdown, moving aside only the files that exist", async () => {
    const data = join(root, "data");
    const backups = join(root, "backups");
    mkdirSync(backups);
    const first = await serve(data);
    expect((await call(first, "POST", "/agents", { name: "before-backup" })).status).toBe(201);
    // The online backup, as written, while the server serves.
    const backup = block(".backup").replaceAll("/backups/", `${backups}/`);
    expect(execFileSync("bash", ["-euo", "pipefail", "-c", backup], { cwd: root, encoding: "utf8" })).toContain("ok");
    expect((await call(first, "POST", "/agents", { name: "after-backup" })).status).toBe(201);
    await first.close();
    // A clean shutdown left no -wal or -shm beside the database: the restore must not need them.
    expect([existsSync(join(data, "authority.db-wal")), existsSync(join(data, "authority.db-shm"))]).toEqual([false, false]);

    const restore = block("authority.db-wal").replace(BACKUP, join(backups, "authority-2026-11-25.db"));
    execFileSync("bash", ["-euo", "pipefail", "-c", restore], {
      cwd: root,
      env: { ...process.env, AUTHORITY_DATA_DIR: data },
      encoding: "utf8",
    });
    expect(existsSync(join(data, "replaced", "authority.db"))).toBe(true);

    const second = await serve(data);
    try {
      const names = (await call<AgentList>(second, "GET", "/agents")).body.agents.map((a) => a.name);
      expect(names).toContain("before-backup");
      expect(names).not.toContain("after-backup");
      expect((await call(second, "GET", "/ledger/verify")).body).toMatchObject({ ok: true });
    } finally {
      await second.close();
    }
  });
});
