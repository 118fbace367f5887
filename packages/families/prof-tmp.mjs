import { readFileSync } from "node:fs";
import { parseDocument, Parser, LineCounter } from "yaml";
const full = readFileSync(process.argv[2], "utf8");
for (const n of [125000, 250000, 500000, 1000000]) {
  const text = full.slice(0, full.lastIndexOf("\n  - name", n));
  let t = performance.now();
  let k=0; for (const tok of new Parser().parse(text)) k++;
  const p = performance.now()-t; t = performance.now();
  parseDocument(text);
  console.log(n, "cst", p.toFixed(0), "doc", (performance.now()-t).toFixed(0));
}
