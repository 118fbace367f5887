// Functions a reader can hold: no function, method, arrow function or constructor in the source of the
// packages, the grammar, the server or the CLI is longer than 60 lines. Tests, generated files and
// built output are out of scope. Lines are counted from the line where the function starts to the
// line where it ends, both included.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { sourceFilesUnder } from "./import-graph.js";

const root = fileURLToPath(new URL("..", import.meta.url));

/** The longest a function may be, in lines. */
const functionLinesMax = 60;

/** A function over the limit: where it starts, what it is called, how long it is. */
interface LongFunction {
  readonly file: string;
  readonly line: number;
  readonly name: string;
  readonly lines: number;
}

/** The source directories in scope: `src` of every package, the grammar, the server and the CLI. */
function sourceDirectories(base: string): string[] {
  const packages = readdirSync(join(base, "packages")).map((name) => join(base, "packages", name, "src"));
  return [...packages, join(base, "grammar", "src"), join(base, "server", "src"), join(base, "cli", "src")].filter((dir) =>
    existsSync(dir),
  );
}

/** Whether a file is in scope: a source module, not a test, a declaration or a generated file. */
function inScope(path: string): boolean {
  if (/\.(test|prop\.test|spec)\.[cm]?[jt]s$/.test(path) || /\.d\.[cm]?ts$/.test(path)) return false;
  return !/(^|[\\/])(generated|test|tests|dist)([\\/])/.test(path) && !/\.generated\.[cm]?[jt]s$/.test(path);
}

/** The name a reader would look for: the declaration's own, or the variable or property it is bound to. */
function functionName(node: ts.Node): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name !== undefined && (ts.isIdentifier(named.name) || ts.isPrivateIdentifier(named.name) || ts.isStringLiteral(named.name))) {
    return named.name.text;
  }
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) &&
    ts.isIdentifier(parent.name)
  ) {
    return parent.name.text;
  }
  return "(anonymous)";
}

function isFunctionLike(node: ts.Node): boolean {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** Every function in `text` longer than `limit` lines, nested ones included. */
function longFunctionsIn(file: string, text: string, limit: number): LongFunction[] {
  const kind = /\.[cm]?ts$/.test(file) ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunctionLike(node)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > limit) found.push({ file, line: first + 1, name: functionName(node), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every function over the limit in the source files under `dirs`, paths relative to `base`. */
function longFunctions(base: string, dirs: readonly string[], limit = functionLinesMax): LongFunction[] {
  const files = dirs.flatMap((dir) => sourceFilesUnder(dir)).filter((path) => inScope(relative(base, path)));
  return files.flatMap((path) => longFunctionsIn(relative(base, path), readFileSync(path, "utf8"), limit));
}

const describeLong = (f: LongFunction): string => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`;

/** A function of exactly `lines` lines. */
function functionOfLines(name: string, lines: number): string {
  const body = Array.from({ length: lines - 4 }, (_, i) => `  total += ${i};`);
  return [`export function ${name}(): number {`, "  let total = 0;", ...body, "  return total;", "}"].join("\n");
}

describe("function length", () => {
  const offenders = longFunctions(root, sourceDirectories(root));

  it(`no function outside tests is over ${functionLinesMax} lines`, () => {
    expect(offenders.map(describeLong)).toEqual([]);
  });

  it("a planted 61-line function is reported with its file and line; a 60-line one is not", () => {
    const dir = mkdtempSync(join(tmpdir(), "function-length-"));
    try {
      writeFileSync(join(dir, "long.ts"), `// planted\n${functionOfLines("sixtyOne", 61)}\n`);
      writeFileSync(join(dir, "short.ts"), functionOfLines("sixty", 60));
      writeFileSync(join(dir, "arrows.js"), `export const arrow = () => {\n${"  void 0;\n".repeat(60)}};\n`);
      writeFileSync(join(dir, "long.test.ts"), functionOfLines("inATest", 80));
      const found = longFunctions(dir, [dir]).map(describeLong).sort();
      expect(found).toEqual(["arrows.js:1 arrow (62 lines)", "long.ts:2 sixtyOne (61 lines)"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("methods, constructors and nested functions are measured too", () => {
    const method = `class C {\n  constructor() {\n${"    void 0;\n".repeat(59)}  }\n  run() {\n    const inner = function () {\n${"      void 0;\n".repeat(59)}    };\n    return inner;\n  }\n}\n`;
    const found = longFunctionsIn("c.ts", method, functionLinesMax).map(describeLong);
    expect(found).toEqual(["c.ts:2 constructor (61 lines)", "c.ts:63 run (64 lines)", "c.ts:64 inner (61 lines)"]);
  });

  it("tests, generated files and built output are out of scope", () => {
    expect(inScope("server/src/app.ts")).toBe(true);
    expect(inScope("server/src/app.test.ts")).toBe(false);
    expect(inScope("packages/language/src/x.prop.test.ts")).toBe(false);
    expect(inScope("packages/api/src/generated/openapi.ts")).toBe(false);
    expect(inScope("packages/sdk/dist/index.js")).toBe(false);
    expect(inScope("packages/sdk/src/types.d.ts")).toBe(false);
  });
});
