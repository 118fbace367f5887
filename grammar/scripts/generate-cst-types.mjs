// Regenerates src/cst.generated.ts from the built parser; `--check` fails when the committed file drifts.
import { readFileSync, writeFileSync } from "node:fs";
import { cstTypesText } from "../dist/cst-types.js";

const target = new URL("../src/cst.generated.ts", import.meta.url);
const generated = cstTypesText();
if (process.argv.includes("--check")) {
  const committed = readFileSync(target, "utf8");
  if (committed !== generated) {
    process.stderr.write("grammar/src/cst.generated.ts is out of date: run node grammar/scripts/generate-cst-types.mjs\n");
    process.exit(1);
  }
} else {
  writeFileSync(target, generated);
}
