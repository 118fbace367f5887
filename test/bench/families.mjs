// Families benchmark: `fmt` and compile of families from 32 KiB to the 256 KiB limit, in two shapes
// (many examples; one mapping of many keys, the shape on which yaml's own unique-key check was
// quadratic), each size against the first in the same run: linear work doubles with the size. Then a
// 1 MB family (refused at once) and the hostile patterns of issue 33 on the linear-time engine.
// A benchmark, never a timed test: it prints figures and fails only if an answer is wrong.
import { compileFamily, compilePattern, FAMILY_LIMITS, formatFamilySource } from "@agent-authority/families";
import { parseDocument } from "yaml";

const HEAD = `id: bench
version: 1
reviewed_by: [alice@example.com]
parameters:
  code: {type: string, pattern: "[a-z]{2,8}", example: ops}
grant:
  agent_id: agt_6ys3c4dwa7n36096q14dr9gpqy
  principal_type: team
  principal_id: \${code}
  scope: {tool: [payments.refund]}
  policy: "tool  ==  \\"payments.refund\\"  &&  amount_minor <= 500"
`;

/** A family of about `bytes` characters made of examples of about 1 KiB each (at most 256 of them). */
function examplesFamily(bytes) {
  let text = `${HEAD}examples:\n`;
  const args = Array.from({ length: 100 }, (_, k) => `a${k}: v${k}`).join(", ");
  for (let i = 0; text.length < bytes - 1_200; i++) {
    text += `  - name: example ${i}\n    action: {tool: payments.refund, amount_minor: ${i % 500}, currency: EUR, args: {${args}}}\n    expect: allow\n`;
  }
  return text;
}

/** A family of about `bytes` characters whose one example has a mapping of many keys. */
function wideFamily(bytes) {
  let text = `${HEAD}examples:\n  - name: wide\n    expect: allow\n    action:\n      tool: payments.refund\n      args:\n`;
  for (let i = 0; text.length < bytes - 40; i++) text += `        k${i}: ${i}\n`;
  return text;
}

function median(run, rounds = 5) {
  const times = [];
  for (let i = 0; i < rounds; i++) {
    const started = process.hrtime.bigint();
    run();
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return times.sort((a, b) => a - b)[Math.floor(rounds / 2)];
}

const sizes = [32_768, 65_536, 131_072, FAMILY_LIMITS.sourceBytesMax - 1_024];
let failed = false;
for (const [shape, make] of [
  ["examples", examplesFamily],
  ["wide mapping", wideFamily],
]) {
  console.log(`\n${shape}: size, fmt ms, compile ms, each ÷ (its time at ${sizes[0]} × the size ratio); 1.0 is linear`);
  let base;
  for (const size of sizes) {
    const text = make(size);
    const formatted = formatFamilySource(text);
    const compiled = compileFamily(text, "bench.yaml");
    if (!formatted.ok || !formatted.changed || !compiled.ok) {
      console.log(`  wrong answer at ${size}: ${JSON.stringify(formatted.ok ? compiled.diagnostics[0] : formatted)}`);
      failed = true;
      continue;
    }
    const fmt = median(() => formatFamilySource(text));
    const compile = median(() => compileFamily(text, "bench.yaml"));
    base ??= { fmt, compile, size };
    const scale = size / base.size;
    console.log(
      `  ${String(text.length).padStart(7)}  fmt ${fmt.toFixed(1).padStart(7)}  compile ${compile.toFixed(1).padStart(7)}  ratios ${(fmt / base.fmt / scale).toFixed(2)} ${(compile / base.compile / scale).toFixed(2)}`,
    );
  }
}

// The step that was quadratic, measured in this run: yaml's unique-key check on the wide mapping.
const wide = wideFamily(65_536);
const theirs = median(() => parseDocument(wide, { uniqueKeys: true }), 3);
const ours = median(() => parseDocument(wide, { uniqueKeys: false }), 3);
console.log(
  `\nwide mapping, 64 KiB: parse with yaml's unique-key check ${theirs.toFixed(1)} ms, without it (ours checks keys in one pass) ${ours.toFixed(1)} ms`,
);

const mega = wideFamily(1_000_000);
const refused = median(() => formatFamilySource(mega));
const result = formatFamilySource(mega);
console.log(`1 MB family: fmt refuses it (${result.ok ? "ok?" : result.reason}) in ${refused.toFixed(2)} ms`);
if (result.ok) failed = true;

console.log("\nhostile patterns, 1,023 characters and a `!` (ms per match, median of 5)");
for (const source of ["(a+)+$", "(a|aa)+$", "(a*)*b", "((a+)+)+$", "(?:[\\pL\\pN]{1,900})"]) {
  const compiled = compilePattern(source);
  if (!compiled.ok) {
    console.log(`  ${source}: refused: ${compiled.reason}`);
    continue;
  }
  const input = `${"a".repeat(FAMILY_LIMITS.stringParameterCharsMax - 1)}!`;
  if (compiled.pattern.matches(input)) failed = true;
  console.log(
    `  ${source.padEnd(22)} ${compiled.pattern.instructions} instructions  ${median(() => compiled.pattern.matches(input)).toFixed(2)} ms`,
  );
}
process.exit(failed ? 1 : 0);
