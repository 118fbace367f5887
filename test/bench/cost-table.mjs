// Measures what each priced operation costs on this machine: nanoseconds per code unit (strings)
// or per element (lists) of its input, and the units of work 64 of them take at a unit of
// 1 ms / LIMITS.evaluationUnitsMax, beside the rate UNITS_PER_64_CODE_UNITS charges. Prints the table
// the cost model records (docs/decisions/0144, 0147). Each operation runs on its dearest shapes;
// each is timed in CPU time (less sensitive to other processes than the wall clock) over rounds
// interleaved with the other operations, and the lowest and the median round are printed.
// A benchmark: it prints, it asserts nothing.
import { LIMITS } from "@agent-authority/language";
import { UNITS_PER_64_CODE_UNITS as RATE } from "../../packages/language/dist/cost.js";
import { codePointLength } from "../../packages/language/dist/values.js";
import { PATH_URL_FUNCTIONS, UrlReading } from "../../packages/language/dist/paths.js";

const N = 60_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const UNIT_NS = 1e6 / LIMITS.evaluationUnitsMax;
const copy = (s) => s.split("").join("");
const str = copy("a".repeat(N));
const str2 = copy("a".repeat(N));
// Paths and URLs at their longest (a longer one is refused after its length is read), in the shapes
// that cost the most per code unit: one-letter segments (a string per segment), letters outside the
// plain blocks (each tested for hidden characters and look-alikes), and segments that differ only
// in case (each compared as a case-insensitive file system reads it).
const P = LIMITS.pathBytesMax;
const U = LIMITS.urlBytesMax;
const path = copy("/a".repeat(P / 2));
const path2 = copy("/a".repeat(P / 2));
const upper = copy("/A".repeat(P / 2));
const math = copy("/∂".repeat(P / 6));
const rel = copy(`${"a/".repeat(P / 2 - 1)}a`);
const relUpper = copy(`${"A/".repeat(P / 2 - 1)}A`);
const url = `https://e.com/${"a/".repeat(U / 2 - 8)}`;
const url2 = copy(url);
const urlMath = `https://e.com/${"∂/".repeat((U - 16) / 10)}`;
const urlEscaped = `https://e.com/${"%E2%88%82/".repeat((U - 16) / 10)}`;
const file = `file://${"/a".repeat(U / 2 - 4)}`;
const fileUpper = `file://${"/A".repeat(U / 2 - 4)}`;
const list = Array.from({ length: 1024 }, (_, i) => `e${i}`);
const list2 = list.map(copy);
const p = (name) => PATH_URL_FUNCTIONS.get(name).apply;
const read = (name) => PATH_URL_FUNCTIONS.get(name).read;

/** A string's fresh readings: the URL functions' own work on a string not read before in an evaluation. */
const both = (text) => {
  const r = new UrlReading(text);
  return [r.url, r.file];
};
const readA = new UrlReading(file);
const readB = new UrlReading(fileUpper);
const readU = new UrlReading(url);
const readV = new UrlReading(url2);

/** Each operation on its dearest inputs of size `n`: [name, n, work, charged rate]. */
const ops = [
  ["size (code points of a string)", N, () => codePointLength(str), RATE.codePoints],
  ["startsWith (equal strings)", N, () => str.startsWith(str2), RATE.affix],
  ["endsWith (equal strings)", N, () => str.endsWith(str2), RATE.affix],
  ["== on strings (equal)", N, () => str === str2, 1],
  ["lower", N, () => str.toLowerCase(), RATE.lower],
  ["pathNormalize `/a/a/…`", P, () => p("pathNormalize")(path, ""), RATE.path],
  ["pathNormalize `/∂/∂/…`", math.length, () => p("pathNormalize")(math, ""), RATE.path],
  ["pathWithin, both sides, equal", 2 * P, () => p("pathWithin")(path, path2), RATE.path],
  ["pathWithin, both sides, case differs", 2 * P, () => p("pathWithin")(upper, path), RATE.path],
  ["relPathNormalize", P, () => p("relPathNormalize")(rel, ""), RATE.path],
  ["relPathWithin, both sides, case differs", 2 * P, () => p("relPathWithin")(relUpper, rel), RATE.path],
  ["URL reading `https://e.com/a/a/…`", url.length, () => both(url), RATE.url],
  ["URL reading, `∂` segments", urlMath.length, () => both(urlMath), RATE.url],
  ["URL reading, `%E2%88%82` segments", urlEscaped.length, () => both(urlEscaped), RATE.url],
  ["URL reading `file:///a/a/…` (both readings)", file.length, () => both(file), RATE.url],
  ["urlWithin, file: case differs (2 readings)", 2 * file.length, () => p("urlWithin")(fileUpper, file), RATE.url],
  ["urlWithin past its readings, https", url.length, () => read("urlWithin")(readU, readV), RATE.affix],
  ["urlWithin past its readings, file:", file.length, () => read("urlWithin")(readB, readA), RATE.affix],
  ["== on lists of strings (per element)", 1024, () => list.every((x, i) => x === list2[i]), 64],
  ["in over a list (per element)", 1024, () => list2.includes("missing"), 64],
];

/** CPU nanoseconds of one call of `f`, over a batch of calls long enough for the clock. */
function cpuNs(f) {
  let calls = 1;
  for (;;) {
    const start = process.cpuUsage();
    for (let i = 0; i < calls; i++) f();
    const used = process.cpuUsage(start);
    const us = used.user + used.system;
    if (us >= 2000) return (us * 1000) / calls;
    calls *= 2;
  }
}

for (const [, , f] of ops) for (let i = 0; i < 5; i++) f();
const rounds = ops.map(() => []);
for (let round = 0; round < ROUNDS; round++) for (const [i, [, n, f]] of ops.entries()) rounds[i].push(cpuNs(f) / n);

const units = (ns) => ((64 * ns) / UNIT_NS).toFixed(2);
console.log(`one unit = ${UNIT_NS.toFixed(1)} ns (1 ms / ${LIMITS.evaluationUnitsMax} units); ${ROUNDS} interleaved rounds of CPU time`);
console.log(
  `${"operation".padEnd(46)} ${"ns per input".padStart(12)} ${"units per 64: lowest".padStart(21)} ${"median".padStart(8)} ${"charged".padStart(8)}`,
);
for (const [i, [name, , , rate]] of ops.entries()) {
  const sorted = rounds[i].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  console.log(
    `${name.padEnd(46)} ${median.toFixed(3).padStart(12)} ${units(sorted[0]).padStart(21)} ${units(median).padStart(8)} ${String(rate).padStart(8)}`,
  );
}
