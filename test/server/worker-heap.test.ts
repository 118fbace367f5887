// The worker threads' young generation starts at full size once the server has asked for it, and
// only then: each case runs in a fresh process, since the setting holds for the whole process.

import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { WORKER_SEMI_SPACE_MIB } from "../../server/src/http/worker-heap.js";

const COMPILED = fileURLToPath(new URL("../../server/dist/http/worker-heap.js", import.meta.url));

/** The young generation's size (bytes) of a worker started in a fresh process, after `keepYoungGenerationFull()` or not. */
function workerNewSpace(full: boolean): number {
  const script = `
    import { Worker } from "node:worker_threads";
    if (${full}) (await import(${JSON.stringify(pathToFileURL(COMPILED).href)})).keepYoungGenerationFull();
    const worker = new Worker(
      'import { parentPort } from "node:worker_threads"; import { getHeapSpaceStatistics } from "node:v8";' +
        ' parentPort.postMessage(getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size);',
      { eval: true },
    );
    worker.once("message", (size) => { process.stdout.write(String(size)); process.exit(0); });
  `;
  return Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 }));
}

describe.skipIf(!existsSync(COMPILED))("the worker threads' young generation (compiled server)", () => {
  it("starts at full size in a thread started after keepYoungGenerationFull, and smaller without it", () => {
    const full = workerNewSpace(true);
    const plain = workerNewSpace(false);
    expect(full).toBeGreaterThanOrEqual(WORKER_SEMI_SPACE_MIB * 1024 * 1024);
    expect(plain).toBeLessThan(full);
  });
});
