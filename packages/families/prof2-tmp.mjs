import { readFileSync } from "node:fs";
import { parseDocument } from "yaml";
const text = readFileSync(process.argv[2], "utf8");
let t = performance.now();
parseDocument(text, { uniqueKeys: true });
console.log("doc", (performance.now()-t).toFixed(0));
