// The text of the typed CST declarations, generated from the parser's grammar by chevrotain.
import { generateCstDts } from "./chevrotain.js";
import { policyParser } from "./parser.js";

const header = "// Generated from the parser by scripts/generate-cst-types.mjs; do not edit. A test fails when it drifts.\n";

/** The text that src/cst.generated.ts must hold. */
export function cstTypesText(): string {
  return header + generateCstDts(policyParser.getGAstProductions(), { visitorInterfaceName: "PolicyCstVisitor" });
}
