// Symbolic analysis benchmark: the solver's start, then the median and p95 time of `diffPolicies`
// on pairs of policies of about 4 KiB (one limit raised, a tool added, an approver condition
// loosened, a guard dropped), each answer checked; and lint of the example families, which never
// loads the solver. A benchmark, never a timed test: it prints, it fails only on a wrong answer.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createAnalyzer, diffPolicies } from "@agent-authority/analysis";
import { compileFamily } from "@agent-authority/families";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** A policy of about 4 KiB: a long tool list, currencies, limits, hours, weekdays and argument checks. */
function bigPolicy(seed, { limit = 250000, extraTool = false, loose = false, guard = true } = {}) {
  const tools = Array.from({ length: 190 }, (_, i) => `"svc${seed}.tool_${String(i).padStart(3, "0")}"`);
  if (extraTool) tools.push(`"svc${seed}.admin"`);
  const parts = [
    `tool in [${tools.join(", ")}]`,
    'currency in ["EUR", "USD", "GBP"]',
    `amount_minor <= ${limit}`,
    "hour_utc >= 8 && hour_utc < 18",
    'weekday_utc in ["mon", "tue", "wed", "thu", "fri"]',
    guard ? '(args.country == null || args.country in ["DE", "FR", "NL", "BE", "AT", "IT", "ES"])' : "true",
    `(amount_minor < ${Math.floor(limit / 10)} || ${loose ? "approver != null" : 'approver in ["cfo@example.com", "ceo@example.com"]'})`,
    'startsWith(agent, "agt_") && !endsWith(principal, ".test")',
    "spent_minor + amount_minor <= 1000000 && uses < 500",
  ];
  return parts.join(" && ");
}

const pairs = [];
for (let seed = 0; seed < 5; seed++) {
  const base = bigPolicy(seed);
  pairs.push(
    { old: base, next: bigPolicy(seed, { limit: 300000 }), expect: "widens" },
    { old: base, next: bigPolicy(seed, { extraTool: true }), expect: "widens" },
    { old: base, next: bigPolicy(seed, { loose: true }), expect: "widens" },
    { old: bigPolicy(seed, { limit: 300000 }), next: base, expect: "narrows" },
    { old: base, next: base.split(" && ").reverse().join(" && "), expect: undefined },
  );
}

const started = performance.now();
const analyzer = await createAnalyzer();
const startMs = performance.now() - started;
const times = [];
let wrong = 0;
for (const { old, next, expect } of pairs) {
  const t0 = performance.now();
  const r = await diffPolicies(analyzer, old, next);
  times.push(performance.now() - t0);
  if (expect !== undefined && r.relation !== expect) {
    wrong++;
    process.stdout.write(`wrong answer: expected ${expect}, got ${r.relation} ${r.reason ?? ""}\n`);
  }
}
await analyzer.close();
times.sort((a, b) => a - b);
const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
const bytes = Math.max(...pairs.map((p) => Buffer.byteLength(p.old)));
process.stdout.write(`solver start: ${startMs.toFixed(0)} ms\n`);
process.stdout.write(
  `diff of two policies up to ${bytes} bytes: median ${at(0.5).toFixed(0)} ms, p95 ${at(0.95).toFixed(0)} ms over ${times.length} pairs (target: median < 1000 ms, p95 < 5000 ms)\n`,
);

const familyDir = join(root, "policies");
for (const file of readdirSync(familyDir)
  .filter((f) => f.endsWith(".yaml"))
  .sort()) {
  const text = readFileSync(join(familyDir, file), "utf8");
  const runs = [];
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now();
    compileFamily(text, file);
    runs.push(performance.now() - t0);
  }
  runs.sort((a, b) => a - b);
  process.stdout.write(`lint ${file}: median ${runs[10].toFixed(1)} ms (no solver; target < 20 ms)\n`);
}
process.exit(wrong > 0 ? 1 : 0);
