// Measures what each priced operation costs on this machine: nanoseconds per code unit (strings)
// or per element (lists) of its input, and the units of work 64 of them take at a unit of
// 1 ms / LIMITS.evaluationUnitsMax, beside the rate UNITS_PER_64_CODE_UNITS charges. Prints the table the cost model records
// (docs/decisions/0144-measured-cost-table.md). A benchmark: it prints, it asserts nothing.
import { LIMITS } from "@agent-authority/language";
import { UNITS_PER_64_CODE_UNITS as RATE } from "../../packages/language/dist/cost.js";
import { codePointLength } from "../../packages/language/dist/values.js";
import { PATH_URL_FUNCTIONS } from "../../packages/language/dist/paths.js";

const N = 60_000;
const UNIT_NS = 1e6 / LIMITS.evaluationUnitsMax;
const copy = (s) => s.split("").join("");
const str = copy("a".repeat(N));
const str2 = copy("a".repeat(N));
// Paths and URLs at their longest (a longer one is refused after its length is read).
const P = LIMITS.pathBytesMax;
const U = LIMITS.urlBytesMax;
const path = copy("/a".repeat(P / 2));
const path2 = copy("/a".repeat(P / 2));
const rel = copy(`${"a/".repeat(P / 2 - 1)}a`);
const rel2 = copy(`${"a/".repeat(P / 2 - 1)}a`);
const url = `https://e.com/${"a/".repeat(U / 2 - 8)}`;
const url2 = copy(url);
const list = Array.from({ length: 1024 }, (_, i) => `e${i}`);
const list2 = list.map(copy);
const p = (name) => PATH_URL_FUNCTIONS.get(name).apply;

/** Each operation on its dearest input of size `n`. */
const ops = [
  ["size (code points of a string)", N, () => codePointLength(str), RATE.codePoints],
  ["startsWith (equal strings)", N, () => str.startsWith(str2), RATE.affix],
  ["endsWith (equal strings)", N, () => str.endsWith(str2), RATE.affix],
  ["== on strings (equal)", N, () => str === str2, 1],
  ["lower", N, () => str.toLowerCase(), RATE.lower],
  ["pathNormalize", P, () => p("pathNormalize")(path, ""), RATE.path],
  ["pathWithin (both sides)", 2 * P, () => p("pathWithin")(path, path2), RATE.path],
  ["relPathNormalize", P, () => p("relPathNormalize")(rel, ""), RATE.path],
  ["relPathWithin (both sides)", 2 * P, () => p("relPathWithin")(rel, rel2), RATE.path],
  ["urlPath", U, () => p("urlPath")(url, ""), RATE.url],
  ["urlWithin (both sides)", 2 * U, () => p("urlWithin")(url, url2), RATE.url],
  ["== on lists of strings (per element)", 1024, () => list.every((x, i) => x === list2[i]), 64],
  ["in over a list (per element)", 1024, () => list2.includes("missing"), 64],
];

function nsPer(n, f) {
  for (let i = 0; i < 5; i++) f();
  const times = [];
  for (let i = 0; i < 21; i++) {
    const start = process.hrtime.bigint();
    f();
    times.push(Number(process.hrtime.bigint() - start));
  }
  return times.sort((a, b) => a - b)[10] / n;
}

console.log(`one unit = ${UNIT_NS.toFixed(1)} ns (1 ms / ${LIMITS.evaluationUnitsMax} units)`);
console.log(`${"operation".padEnd(40)} ${"ns per input".padStart(12)} ${"units per 64".padStart(13)} ${"charged".padStart(8)}`);
for (const [name, n, f, rate] of ops) {
  const ns = nsPer(n, f);
  console.log(
    `${name.padEnd(40)} ${ns.toFixed(3).padStart(12)} ${((64 * ns) / UNIT_NS).toFixed(2).padStart(13)} ${String(rate).padStart(8)}`,
  );
}
