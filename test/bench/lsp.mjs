// Language-server benchmark: the time from a `didChange` to its `publishDiagnostics`, as an editor
// sees it, over stdio with the built `authority lsp`, for a 4 KiB policy and a 200-line family.
// A benchmark, never a timed test: it prints figures and fails only if the server answers wrongly.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";

const root = fileURLToPath(new URL("../..", import.meta.url));
const CHANGES = Number(process.env.BENCH_LSP_CHANGES ?? 200);
const WARMUP = 20;

/** A valid policy of about 4 KiB: a chain of conditions over names, args and lists. */
function policyOf(bytes) {
  const parts = [];
  for (let i = 0; parts.join("\n  && ").length < bytes - 120; i++) {
    parts.push(
      i % 3 === 0
        ? `(amount_minor <= ${10000 + i} || approver in ["cfo@example.com", "head${i}@example.com"])`
        : i % 3 === 1
          ? `args.field_${i} != "value ${i}"`
          : `tool != "tool.${i}"`,
    );
  }
  return `${parts.join("\n  && ")}\n`;
}

/** The procurement family with examples added until it is 200 lines long. */
function familyOf(lines) {
  const out = readFileSync(join(root, "policies", "procurement-agent.yaml"), "utf8")
    .trimEnd()
    .split("\n");
  for (let i = 0; out.length + 3 <= lines; i++) {
    out.push(
      `  - name: generated example ${i}`,
      "    action: {tool: purchase.create, amount_minor: 1000, currency: EUR, audience: erp, args: {supplier: acme}}",
      "    expect: allow",
    );
  }
  while (out.length < lines) out.push("# padding");
  return `${out.join("\n")}\n`;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function measure(connection, waiters, uri, text, edit) {
  await connection.sendNotification("textDocument/didOpen", {
    textDocument: { uri, languageId: uri.endsWith(".policy") ? "policy" : "yaml", version: 1, text },
  });
  await new Promise((resolve) => waiters.set(`${uri}@1`, resolve));
  const times = [];
  let current = text;
  for (let version = 2; version < 2 + WARMUP + CHANGES; version++) {
    const { next, change } = edit(current, version);
    current = next;
    const published = new Promise((resolve) => waiters.set(`${uri}@${version}`, resolve));
    const started = process.hrtime.bigint();
    await connection.sendNotification("textDocument/didChange", { textDocument: { uri, version }, contentChanges: [change] });
    const diagnostics = await published;
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    if (diagnostics.some((d) => d.severity === 1))
      throw new Error(`${uri} has errors after change ${version}: ${JSON.stringify(diagnostics[0])}`);
    if (version >= 2 + WARMUP) times.push(elapsed);
  }
  times.sort((a, b) => a - b);
  return { median: percentile(times, 50), p95: percentile(times, 95), max: times.at(-1) };
}

/** An incremental edit of one digit on a line that holds `needle`, alternating between two values. */
function digitEdit(needle) {
  return (text, version) => {
    const lines = text.split("\n");
    const line = lines.findIndex((l) => l.includes(needle));
    const character = lines[line].indexOf(needle) + needle.length;
    const digit = String(version % 2 === 0 ? 7 : 3);
    const next = lines.map((l, i) => (i === line ? l.slice(0, character) + digit + l.slice(character + 1) : l)).join("\n");
    return { next, change: { range: { start: { line, character }, end: { line, character: character + 1 } }, text: digit } };
  };
}

const child = spawn(process.execPath, [join(root, "cli", "bin", "authority.js"), "lsp", "--stdio"], { stdio: ["pipe", "pipe", "inherit"] });
const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
const waiters = new Map();
connection.onNotification("textDocument/publishDiagnostics", (p) => {
  const key = `${p.uri}@${p.version}`;
  waiters.get(key)?.(p.diagnostics);
  waiters.delete(key);
});
connection.listen();
await connection.sendRequest("initialize", { processId: process.pid, rootUri: null, capabilities: {} });
await connection.sendNotification("initialized", {});

const policy = policyOf(4096);
const family = familyOf(200);
const cases = [
  {
    name: `policy, ${Buffer.byteLength(policy)} bytes`,
    uri: "file:///bench/large.policy",
    text: policy,
    edit: digitEdit("amount_minor <= 1000"),
  },
  {
    name: `family, ${family.split("\n").length - 1} lines`,
    uri: "file:///bench/family.yaml",
    text: family,
    edit: digitEdit("amount_minor: 100"),
  },
];
process.stdout.write(
  `time from didChange to publishDiagnostics, ${CHANGES} changes each after ${WARMUP} to warm up (target: under 50 ms)\n`,
);
for (const c of cases) {
  const r = await measure(connection, waiters, c.uri, c.text, c.edit);
  process.stdout.write(
    `  ${c.name.padEnd(24)} median ${r.median.toFixed(2)} ms   p95 ${r.p95.toFixed(2)} ms   max ${r.max.toFixed(2)} ms\n`,
  );
}
await connection.sendRequest("shutdown");
await connection.sendNotification("exit");
connection.dispose();
