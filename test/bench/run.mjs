// Runs benchmarks: `npm run bench` runs every test/bench/*.mjs, `npm run bench -- language` runs one.
// Each benchmark runs in its own process; a benchmark asked for by name that does not exist is reported.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const here = fileURLToPath(new URL(".", import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith(".mjs") && f !== "run.mjs")
  .map((f) => f.slice(0, -".mjs".length))
  .sort();
const requested = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const names = requested.length > 0 ? requested : available;

let failed = 0;
let missing = 0;
for (const name of names) {
  const file = join(here, `${name}.mjs`);
  if (!/^[a-z0-9-]+$/.test(name) || !existsSync(file)) {
    missing++;
    process.stdout.write(`bench: no benchmark named \`${name}\` (available: ${available.join(", ") || "none"})\n`);
    continue;
  }
  process.stdout.write(`\n== ${name} ==\n`);
  const run = spawnSync(process.execPath, [file], { stdio: "inherit", env: process.env });
  if (run.status !== 0) {
    failed++;
    process.stdout.write(`bench: \`${name}\` exited with ${run.status ?? run.signal}\n`);
  }
}
process.stdout.write(`\nbench: ${names.length - missing - failed} ran, ${failed} failed, ${missing} missing\n`);
process.exit(failed > 0 ? 1 : 0);
