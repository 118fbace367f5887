import { readFileSync } from "node:fs";
import { formatFamilySource } from "./dist/index.js";
const text = readFileSync(process.argv[2], "utf8");
const t = performance.now();
const r = formatFamilySource(text.replace('policy: "true"', 'policy: "true  &&  true"'));
console.log(r.ok, r.changed, r.reason, (performance.now() - t).toFixed(0), "ms");
