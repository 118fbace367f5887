// `npm run test:slowest` lists the slowest files of a kept run, slowest first, and refuses a bad count.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const script = fileURLToPath(new URL("./slowest.mjs", import.meta.url));

it("lists the kept run's files slowest first, as many as asked, and refuses a count that is not a positive integer", () => {
  const dir = mkdtempSync(join(tmpdir(), "authority-slowest-"));
  try {
    const timesFile = join(dir, "times.json");
    const files = Array.from({ length: 25 }, (_, i) => ({ file: `test/f${i}.test.ts`, seconds: (i * 7) % 25, tests: i }));
    writeFileSync(timesFile, JSON.stringify({ finished_at: "2026-11-28T00:00:00.000Z", wall_seconds: 60, files }));
    const env = { ...process.env, AUTHORITY_TEST_TIMES_FILE: timesFile };
    const listed = spawnSync(process.execPath, [script], { env, encoding: "utf8" });
    expect(listed.status).toBe(0);
    const lines = listed.stdout.trim().split("\n");
    expect(lines[0]).toContain("the 20 slowest of 25 files");
    const seconds = lines.slice(1).map((line) => Number(line.trim().split(" ")[0]));
    expect(seconds).toHaveLength(20);
    expect(seconds).toEqual([...seconds].sort((a, b) => b - a));
    expect(seconds[0]).toBe(24);
    expect(spawnSync(process.execPath, [script, "3"], { env, encoding: "utf8" }).stdout.trim().split("\n")).toHaveLength(4);
    const refused = spawnSync(process.execPath, [script, "-1"], { env, encoding: "utf8" });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain("positive integer");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
