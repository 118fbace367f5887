// Lists the 20 slowest test files of the last `npm test` (kept in `.test-times.json` by test/run.mjs),
// with their times, so that a file which became slow is seen before the suite outgrows its budget.
// Without a kept run it runs the suite first. `-- N` lists N files instead of 20.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const timesFile = process.env["AUTHORITY_TEST_TIMES_FILE"] ?? join(root, ".test-times.json");
const count = Number(process.argv[2] ?? "20");
if (!Number.isSafeInteger(count) || count < 1) {
  process.stderr.write(`test:slowest: the number of files must be a positive integer, not \`${process.argv[2]}\`\n`);
  process.exit(2);
}

if (!existsSync(timesFile)) {
  process.stdout.write("test:slowest: no kept run; running the suite first\n");
  spawnSync(process.execPath, [join(root, "test", "run.mjs")], { cwd: root, stdio: "inherit" });
  if (!existsSync(timesFile)) {
    process.stderr.write("test:slowest: the suite kept no times\n");
    process.exit(1);
  }
}

const run = JSON.parse(readFileSync(timesFile, "utf8"));
const files = [...run.files].sort((a, b) => b.seconds - a.seconds).slice(0, count);
const total = run.files.reduce((sum, file) => sum + file.seconds, 0);
process.stdout.write(
  `the ${files.length} slowest of ${run.files.length} files, run ${run.finished_at} (wall ${run.wall_seconds} s, files' own ${Math.round(total)} s)\n`,
);
for (const file of files)
  process.stdout.write(`${file.seconds.toFixed(1).padStart(7)} s  ${String(file.tests).padStart(4)} tests  ${file.file}\n`);
