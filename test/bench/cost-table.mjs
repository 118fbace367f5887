// Measures what each priced operation costs on this machine: nanoseconds per code unit (strings)
// or per element (lists) of its input, and the code units (or elements) one unit of work may pay
// for, at a unit of 1 ms / LIMITS.evaluationUnitsMax. Prints the table the cost model records
// (docs/decisions/0144-measured-cost-table.md). A benchmark: it prints, it asserts nothing.
import { LIMITS } from "@agent-authority/language";
import { codePointLength } from "../../packages/language/dist/values.js";
import { PATH_URL_FUNCTIONS } from "../../packages/language/dist/paths.js";

const N = 60_000;
const UNIT_NS = 1e6 / LIMITS.evaluationUnitsMax;
const copy = (s) => s.split("").join("");
const str = copy("a".repeat(N));
const str2 = copy("a".repeat(N));
const path = copy("/a".repeat(N / 2));
const path2 = copy("/a".repeat(N / 2));
const rel = copy(`${"a/".repeat(N / 2 - 1)}a`);
const rel2 = copy(`${"a/".repeat(N / 2 - 1)}a`);
const url = `https://e.com/${"a/".repeat(N / 2 - 8)}`;
const url2 = copy(url);
const list = Array.from({ length: 1024 }, (_, i) => `e${i}`);
const list2 = list.map(copy);
const p = (name) => PATH_URL_FUNCTIONS.get(name).apply;

/** Each operation on its dearest input of size `n`. */
const ops = [
  ["size (code points of a string)", N, () => codePointLength(str)],
  ["startsWith (equal strings)", N, () => str.startsWith(str2)],
  ["endsWith (equal strings)", N, () => str.endsWith(str2)],
  ["== on strings (equal)", N, () => str === str2],
  ["lower", N, () => str.toLowerCase()],
  ["pathNormalize", N, () => p("pathNormalize")(path, "")],
  ["pathWithin (both sides)", 2 * N, () => p("pathWithin")(path, path2)],
  ["relPathNormalize", N, () => p("relPathNormalize")(rel, "")],
  ["relPathWithin (both sides)", 2 * N, () => p("relPathWithin")(rel, rel2)],
  ["urlPath", N, () => p("urlPath")(url, "")],
  ["urlWithin (both sides)", 2 * N, () => p("urlWithin")(url, url2)],
  ["== on lists of strings (per element)", 1024, () => list.every((x, i) => x === list2[i])],
  ["in over a list (per element)", 1024, () => list2.includes("missing")],
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
console.log(`${"operation".padEnd(40)} ${"ns per input".padStart(12)} ${"input per unit".padStart(15)}`);
for (const [name, n, f] of ops) {
  const ns = nsPer(n, f);
  console.log(`${name.padEnd(40)} ${ns.toFixed(3).padStart(12)} ${(UNIT_NS / ns).toFixed(1).padStart(15)}`);
}
