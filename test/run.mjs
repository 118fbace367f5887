// Runs every test once and ends with the plain summary line `N passed, N failed`.
// The summary is derived from vitest's JSON report, so it counts exactly what vitest ran.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const reportDir = mkdtempSync(join(tmpdir(), "authority-test-"));
const reportFile = join(reportDir, "report.json");
const extra = process.argv.slice(2);

const run = spawnSync(
  process.execPath,
  [
    join(root, "node_modules", "vitest", "vitest.mjs"),
    "run",
    "--config",
    join(root, "test", "vitest.config.ts"),
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${reportFile}`,
    ...extra,
  ],
  { cwd: root, stdio: "inherit", env: process.env },
);

let passed = 0;
let failed = 0;
let skipped = 0;
let readable = true;
/** What failed, named once more just above the summary, where a long log is read from. */
const failures = [];
try {
  const report = JSON.parse(readFileSync(reportFile, "utf8"));
  passed = report.numPassedTests ?? 0;
  failed = report.numFailedTests ?? 0;
  skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  // A suite that fails to load reports no failed test, so count such files as failures.
  writeTimes(report);
  for (const file of report.testResults ?? []) {
    if (file.status === "failed" && (file.assertionResults ?? []).length === 0) {
      failed += 1;
      failures.push(`${relative(root, file.name)}: the file did not load`);
    }
    for (const test of file.assertionResults ?? []) {
      if (test.status === "failed") failures.push(`${relative(root, file.name)} > ${test.fullName}`);
    }
  }
} catch (error) {
  readable = false;
  process.stderr.write(`test/run: no readable JSON report (${error instanceof Error ? error.message : error})\n`);
}
rmSync(reportDir, { recursive: true, force: true });

const ok = readable && run.status === 0 && failed === 0 && passed > 0;
if (!ok && failed === 0) failed = 1;
for (const failure of failures) process.stdout.write(`\nfailed: ${failure}`);
process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`);
process.exit(ok ? 0 : 1);

/**
 * Keeps each file's time of this run in `.test-times.json` (not committed), which
 * `npm run test:slowest` lists, so a file that became slow is seen.
 */
function writeTimes(report) {
  const files = (report.testResults ?? []).map((file) => ({
    file: relative(root, file.name),
    seconds: Math.round((file.endTime - file.startTime) / 100) / 10,
    tests: (file.assertionResults ?? []).length,
  }));
  const run = { finished_at: new Date().toISOString(), wall_seconds: Math.round((Date.now() - report.startTime) / 1000), files };
  try {
    writeFileSync(join(root, ".test-times.json"), `${JSON.stringify(run, null, 1)}\n`);
  } catch (error) {
    process.stderr.write(`test/run: the files' times were not kept (${error instanceof Error ? error.message : error})\n`);
  }
}
