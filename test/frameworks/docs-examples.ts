// The example agents of docs/frameworks.md, read from the page and compiled as written, for the tests that run them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = fileURLToPath(new URL("../../", import.meta.url));
const page = readFileSync(join(root, "docs", "frameworks.md"), "utf8");

/** The example files of the page, one per framework. */
export const EXAMPLES = Object.freeze(["ai-sdk-agent.ts", "openai-agents-agent.ts", "langchain-agent.ts"] as const);

/** The fenced TypeScript block whose first line names `file`. */
export function example(file: string): string {
  const fence = "`".repeat(3);
  const start = page.indexOf(`${fence}ts\n// ${file}:`);
  if (start < 0) throw new Error(`docs/frameworks.md has no example \`${file}\``);
  const from = start + fence.length + 3;
  return page.slice(from, page.indexOf(`${fence}\n`, from));
}

/** The example compiled to an ES module exactly as written; a syntax error in the page throws. */
export function compiledExample(file: string): string {
  const compiled = ts.transpileModule(example(file), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    reportDiagnostics: true,
  });
  const problems = (compiled.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  if (problems.length > 0) throw new Error(`${file}: ${problems.join("; ")}`);
  return compiled.outputText;
}
