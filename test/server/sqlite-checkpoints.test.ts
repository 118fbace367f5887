// How often each SQLite connection checkpoints the write-ahead log inside its own commits
// (`wal_autocheckpoint`): SQLite's usual 1,000 frames alone; 10,000 for the connection of the
// compiled server's checkpoint thread and for a connection told so (the server's main connection
// beside that worker), so that those commits leave the copying to the thread.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteDriver, THREADED_WRITER_CHECKPOINT_FRAMES, WRITER_CHECKPOINT_FRAMES } from "../../server/src/store/drivers/index.js";
import { SERVER_BUILT, SERVER_MAIN } from "./server-processes.js";

const dir = mkdtempSync(join(tmpdir(), "authority-checkpoints-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function checkpointFrames(driver: Pick<SqliteDriver, "get" | "close">): Promise<number> {
  try {
    return Number((await driver.get("PRAGMA wal_autocheckpoint"))!["wal_autocheckpoint"]);
  } finally {
    await driver.close();
  }
}

describe("SQLite checkpoint lengths", () => {
  it("keeps SQLite's 1,000 frames by default, and takes the length it is told", async () => {
    expect(WRITER_CHECKPOINT_FRAMES).toBe(1_000);
    expect(await checkpointFrames(new SqliteDriver(join(dir, "plain.db")))).toBe(WRITER_CHECKPOINT_FRAMES);
    expect(await checkpointFrames(new SqliteDriver(join(dir, "told.db"), { walCheckpointFrames: THREADED_WRITER_CHECKPOINT_FRAMES }))).toBe(
      THREADED_WRITER_CHECKPOINT_FRAMES,
    );
  });

  it("without the compiled checkpoint thread (sources), a connection asking for one keeps 1,000 frames", async () => {
    expect(await checkpointFrames(new SqliteDriver(join(dir, "sources.db"), { checkpointThread: true }))).toBe(WRITER_CHECKPOINT_FRAMES);
  });

  it.skipIf(!SERVER_BUILT)("with the compiled checkpoint thread, the writer checkpoints at 10,000 frames", async () => {
    const compiled = pathToFileURL(join(dirname(SERVER_MAIN), "store", "drivers", "sqlite-driver.js")).href;
    const { SqliteDriver: CompiledDriver } = (await import(compiled)) as { SqliteDriver: typeof SqliteDriver };
    expect(await checkpointFrames(new CompiledDriver(join(dir, "threaded.db"), { checkpointThread: true }))).toBe(
      THREADED_WRITER_CHECKPOINT_FRAMES,
    );
  });
});
