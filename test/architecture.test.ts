// The dependency direction, checked on every run: pure packages stay pure, nothing imports server or
// cli, the server's layers import only inwards (http → services → store), and no source file of the
// repository is part of an import circle; the services and the store are rooms, each reached only
// through its index.ts, with no circle between rooms.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  circlesUnder,
  filesOutsideRooms,
  importCircles,
  importGraph,
  layerViolations,
  relativeImports,
  roomGraph,
  roomViolations,
  sourceFilesUnder,
  typeScriptModulesUnder,
} from "./import-graph.js";

const root = fileURLToPath(new URL("..", import.meta.url));

/** Which workspace packages each package may import; a package absent here may import any. */
const allowedWorkspaceImports: Record<string, readonly string[]> = {
  grammar: [],
  "packages/api": [],
  "packages/language": ["grammar"],
  "packages/lattice": ["grammar", "language"],
  "packages/engine": ["grammar", "language", "lattice"],
  "packages/families": ["grammar", "api", "language", "lattice", "engine"],
  "packages/sdk": ["api"],
  "packages/lsp": ["grammar", "language", "families"],
  // The symbolic analysis: the language and the solver, loaded only by what uses it.
  "packages/analysis": ["language", "families"],
  // The framework adapters: the SDK and their framework's types, no I/O of their own.
  "packages/ai-sdk": ["sdk"],
  "packages/openai-agents": ["sdk"],
  "packages/langchain": ["sdk"],
};

/** Modules a pure package must never import: I/O, servers, drivers. */
const forbiddenInPure = [
  /^node:(fs|fs\/promises|net|http|https|http2|child_process|dgram|dns|tls|cluster|worker_threads|readline|repl|vm|v8|inspector)$/,
  /^(fs|fs\/promises|net|http|https|http2|child_process|dgram|dns|tls|cluster|worker_threads|readline)$/,
  /^express$/,
  /^better-sqlite3$/,
  /^pg$/,
  /^@agent-authority\/(server|cli)$/,
  /(^|\/)server\//,
  /(^|\/)cli\//,
];

/**
 * The one module of a pure package that may reach the network: the SDK's HTTP/1.1 client, which
 * sends the client's requests on its own connections (decisions 1903, 1953). Nothing else in it, or in any other
 * pure package, may import a module of I/O.
 */
const networkDoors: Readonly<Record<string, readonly string[]>> = {
  "packages/sdk/src/http1.ts": ["node:net", "node:tls"],
};

function importsOf(text: string): string[] {
  const specifiers: string[] = [];
  const pattern =
    /(?:^|\n)\s*(?:import|export)\b[^"'`;]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s*["']([^"']+)["']/g;
  for (const match of text.matchAll(pattern)) {
    const spec = match[1] ?? match[2] ?? match[3];
    if (spec !== undefined) specifiers.push(spec);
  }
  return specifiers;
}

describe("dependency direction", () => {
  for (const [pkg, allowed] of Object.entries(allowedWorkspaceImports)) {
    it(`${pkg} imports only what a pure package may`, () => {
      const violations: string[] = [];
      for (const file of typeScriptModulesUnder(join(root, pkg, "src"))) {
        const door = networkDoors[relative(root, file)] ?? [];
        for (const spec of importsOf(readFileSync(file, "utf8"))) {
          const where = `${relative(root, file)} imports \`${spec}\``;
          if (forbiddenInPure.some((rule) => rule.test(spec)) && !door.includes(spec)) violations.push(where);
          const workspace = /^@agent-authority\/([a-z-]+)$/.exec(spec);
          if (workspace && !allowed.includes(workspace[1]!)) violations.push(where);
        }
      }
      expect(violations).toEqual([]);
    });
  }

  it("packages/gateway, which does I/O, still imports neither the server nor the CLI", () => {
    const violations: string[] = [];
    for (const file of typeScriptModulesUnder(join(root, "packages/gateway", "src"))) {
      for (const spec of importsOf(readFileSync(file, "utf8"))) {
        // The MCP SDK's own `…/server/…` modules are its server side, not ours: only relative paths are checked.
        if (/^@agent-authority\/(server|cli)$|^\.{1,2}\/(.*\/)?(server|cli)\//.test(spec))
          violations.push(`${relative(root, file)} imports \`${spec}\``);
      }
    }
    expect(violations).toEqual([]);
  });

  it("the import scanner sees the forms it must see", () => {
    const sample =
      'import { a } from "node:fs";\nexport * from "express";\nimport "pg";\nconst m = await import("@agent-authority/server");';
    expect(importsOf(sample)).toEqual(["node:fs", "express", "pg", "@agent-authority/server"]);
  });
});

/** Imports of chevrotain that load it at run time (not `import type`), outside the one module that loads its single file. */
function chevrotainLoads(text: string): string[] {
  const found: string[] = [];
  const pattern =
    /(?:^|\n)\s*(import|export)\s+(?!type\b)[^"'`;]*?from\s*["']chevrotain(\/[^"']*)?["']|(?<!typeof\s)import\s*\(\s*["']chevrotain(\/[^"']*)?["']\s*\)/g;
  for (const match of text.matchAll(pattern)) found.push(match[0].trim());
  return found;
}

describe("chevrotain is loaded once, from the single file it ships", () => {
  const shim = join(root, "grammar", "src", "chevrotain.ts");

  it("no module but grammar/src/chevrotain.ts loads chevrotain at run time (types may be imported anywhere)", () => {
    const violations: string[] = [];
    for (const dir of ["grammar", ...Object.keys(allowedWorkspaceImports), "packages/gateway", "server", "cli"]) {
      for (const file of typeScriptModulesUnder(join(root, dir, "src"))) {
        if (file === shim) continue;
        for (const found of chevrotainLoads(readFileSync(file, "utf8"))) violations.push(`${relative(root, file)}: ${found}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it("a planted load is found; a type import and a type query are not", () => {
    const planted =
      'import type { IToken } from "chevrotain";\nimport { Lexer } from "chevrotain";\ntype C = typeof import("chevrotain");\nconst c = await import("chevrotain");';
    expect(chevrotainLoads(planted)).toEqual(['import { Lexer } from "chevrotain"', 'import("chevrotain")']);
  });
});

describe("import circles", () => {
  it("no source file of the repository is part of an import circle, type-only imports included", () => {
    expect(circlesUnder(root)).toEqual([]);
  });

  it("a planted circle of two files is found", () => {
    const dir = mkdtempSync(join(tmpdir(), "circle-"));
    try {
      writeFileSync(join(dir, "a.ts"), '// a\nimport type { B } from "./b.js";\nexport interface A { b?: B }\n');
      writeFileSync(join(dir, "b.ts"), '// b\nimport { type A } from "./a.js";\nexport interface B { a?: A }\n');
      writeFileSync(join(dir, "c.ts"), '// c\nimport type { A } from "./a.js";\nexport type C = A;\n');
      expect(circlesUnder(dir)).toEqual([["a.ts", "b.ts"]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("circles through re-exports, dynamic imports and .mjs files are found; a chain is not a circle", () => {
    const texts: Record<string, string> = {
      "/r/x.ts": 'export { y } from "./y.js";',
      "/r/y.ts": 'export const y = async () => import("./z.mjs");',
      "/r/z.mjs": 'import {\n  x,\n} from "./x.js";',
      "/r/self.ts": 'import "./self.js";',
      "/r/one.ts": 'import { two } from "./two.js";',
      "/r/two.ts": 'import type { Three } from "./three.js";',
      "/r/three.ts": "export type Three = 3;",
    };
    const graph = importGraph(Object.keys(texts), (file) => texts[file]!);
    expect(
      importCircles(graph)
        .map((c) => c.join(" "))
        .sort(),
    ).toEqual(["/r/self.ts", "/r/x.ts /r/y.ts /r/z.mjs"]);
  });

  it("the scanner reads every import form and ignores packages", () => {
    const sample =
      'import a from "./a.js";\nimport type { B } from "../b.js";\nexport * from "./c.js";\nimport "./d.js";\nconst e = await import("./e.js");\nimport { f } from "node:fs";';
    expect(relativeImports(sample)).toEqual(["./a.js", "../b.js", "./c.js", "./d.js", "./e.js"]);
  });
});

/** What a decide step imports against its rule: a store module other than for its types, or an I/O module. */
function decideStepViolations(text: string): string[] {
  const violations: string[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*import\s+(type\s+)?[^"'`;]*?from\s*["']([^"']+)["']/g)) {
    const [, typeOnly, spec] = match;
    if (/(^|\/)store\//.test(spec!) && typeOnly === undefined) violations.push(spec!);
    else if (forbiddenInPure.slice(0, 2).some((rule) => rule.test(spec!))) violations.push(spec!);
  }
  return violations;
}

/** The server's layers, outermost first: http may import services and store, services only store, store neither. */
const SERVER_LAYERS = ["http", "services", "store"] as const;

describe("server layers", () => {
  it("no server module imports against the direction http → services → store", () => {
    const base = join(root, "server/src");
    const files = sourceFilesUnder(base).filter((f) => !f.endsWith(".test.ts"));
    expect(layerViolations(importGraph(files), base, SERVER_LAYERS)).toEqual([]);
  });

  it("the decision path's decide step (services/decisions/steps/decide.ts) does no I/O: store modules only for their types", () => {
    // The decision path is three steps (decision 0318): read.ts and write.ts reach the store, decide.ts only computes.
    const dir = join(root, "server/src/services/decisions/steps");
    expect(
      readdirSync(dir)
        .filter((name) => name.endsWith(".ts"))
        .sort(),
    ).toEqual(["batch.ts", "decide.ts", "read.ts", "write.ts"]);
    expect(decideStepViolations(readFileSync(join(dir, "decide.ts"), "utf8"))).toEqual([]);
    // The rule finds what it must find.
    expect(
      decideStepViolations(
        'import { DecisionSql } from "../../../store/decisions/index.js";\nimport { hash } from "node:fs";\nimport type { Row } from "../../../store/sql/index.js";',
      ),
    ).toEqual(["../../../store/decisions/index.js", "node:fs"]);
  });

  it("a planted import against the direction is found, and one along it is not", () => {
    const dir = mkdtempSync(join(tmpdir(), "layers-"));
    try {
      for (const layer of SERVER_LAYERS) mkdirSync(join(dir, layer));
      writeFileSync(join(dir, "http/problem.ts"), '// p\nimport { refuse } from "../services/refuse.js";\nexport const p = refuse;\n');
      writeFileSync(
        join(dir, "services/refuse.ts"),
        '// r\nimport type { Row } from "../store/row.js";\nexport const refuse = (row: Row) => row;\n',
      );
      writeFileSync(join(dir, "services/planted.ts"), '// planted\nimport { p } from "../http/problem.js";\nexport const q = p;\n');
      writeFileSync(join(dir, "store/row.ts"), '// row\nimport type { q } from "../services/planted.js";\nexport type Row = typeof q;\n');
      writeFileSync(join(dir, "ids.ts"), '// ids\nimport { p } from "./http/problem.js";\nexport const ids = p;\n');
      const graph = importGraph(sourceFilesUnder(dir));
      expect(layerViolations(graph, dir, SERVER_LAYERS)).toEqual([
        "services/planted.ts → http/problem.ts",
        "store/row.ts → services/planted.ts",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The server's files that may call `JSON.parse`, by file name (decision 1821): sealed records only
 * through their decoders, rows only through the row decoder, and three texts that are neither.
 */
const JSON_PARSERS: Readonly<Record<string, string>> = {
  "sealed-records.ts": "the decoders of sealed records",
  "rows.ts": "the row decoder's JSON columns",
  "body.ts": "request bodies, checked against their schema next",
  "config.ts": "the configuration file, each value checked next",
  "evaluation.ts": "the answer text the decision path prepared for this request",
};

/** The `JSON.parse` calls of `files` (path and text) outside JSON_PARSERS, as `path:line`. */
function unsanctionedParses(files: readonly { path: string; text: string }[]): string[] {
  const found: string[] = [];
  for (const { path, text } of files) {
    if (Object.hasOwn(JSON_PARSERS, path.split("/").pop()!)) continue;
    for (const [i, line] of text.split("\n").entries()) if (/\bJSON\.parse\s*\(/.test(line)) found.push(`${path}:${i + 1}`);
  }
  return found;
}

describe("sealed records are decoded, never cast", () => {
  it("no server module parses JSON outside the decoders and the few texts that are not records", () => {
    const base = join(root, "server/src");
    const files = sourceFilesUnder(base)
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
      .map((f) => ({ path: relative(base, f), text: readFileSync(f, "utf8") }));
    expect(files.some((f) => f.path.endsWith("sealed-records.ts"))).toBe(true);
    expect(unsanctionedParses(files)).toEqual([]);
  });

  it("a planted parse of a record is found, in any folder; the decoder module's own is not", () => {
    const planted = [
      { path: "services/settle.ts", text: "// s\nconst sealed = JSON.parse(row.record) as Settlement;\n" },
      { path: "services/ledger/reads.ts", text: "const a = 1;\nconst b = JSON.parse (row.record);\n" },
      { path: "services/records/sealed-records.ts", text: "const v = JSON.parse(text);\n" },
    ];
    expect(unsanctionedParses(planted)).toEqual(["services/settle.ts:2", "services/ledger/reads.ts:2"]);
  });
});

/** The layers of the server that are divided into rooms, one folder per product noun (decision 1801). */
const ROOMED_LAYERS = ["services", "store"] as const;

describe("server rooms", () => {
  const base = join(root, "server/src");

  it("every file of services/ and store/ lies in a room, and every room has an index.ts opening with its purpose", () => {
    const files = sourceFilesUnder(base);
    expect(filesOutsideRooms(files, base, ROOMED_LAYERS)).toEqual([]);
    const faceless: string[] = [];
    for (const layer of ROOMED_LAYERS) {
      for (const room of readdirSync(join(base, layer), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)) {
        const index = join(base, layer, room, "index.ts");
        if (!existsSync(index) || !/^\/\/ \S/.test(readFileSync(index, "utf8"))) faceless.push(`${layer}/${room}`);
      }
    }
    expect(faceless).toEqual([]);
  });

  it("no file reaches into a room but through its index.ts: not another room, not http, not the tests", () => {
    const files = [...sourceFilesUnder(base), ...sourceFilesUnder(join(root, "test")), ...sourceFilesUnder(join(root, "cli/src"))];
    expect(roomViolations(importGraph(files), base, ROOMED_LAYERS)).toEqual([]);
  });

  it("no circle between rooms", () => {
    const rooms = roomGraph(importGraph(sourceFilesUnder(base)), base, ROOMED_LAYERS);
    expect(rooms.size).toBeGreaterThan(10);
    expect(importCircles(rooms)).toEqual([]);
  });

  it("a planted reach into another room, a loose file and a circle of two rooms are found; imports through an index or within a room are not", () => {
    const dir = mkdtempSync(join(tmpdir(), "rooms-"));
    try {
      const plant = (path: string, text: string): void => {
        mkdirSync(join(dir, path, ".."), { recursive: true });
        writeFileSync(join(dir, path), text);
      };
      plant("services/grants/index.ts", '// grants\nexport { issue } from "./issue.js";\n');
      plant("services/grants/issue.ts", '// issue\nimport { check } from "./deep/check.js";\nexport const issue = check;\n');
      plant(
        "services/grants/deep/check.ts",
        '// check\nimport type { Row } from "../../../store/rows/index.js";\nexport const check = (r?: Row) => r;\n',
      );
      plant("services/breakers/index.ts", '// breakers\nexport { trip } from "./trip.js";\n');
      plant("services/breakers/trip.ts", '// trip\nimport { issue } from "../grants/index.js";\nexport const trip = issue;\n');
      plant("services/breakers/planted.ts", '// planted\nimport { check } from "../grants/deep/check.js";\nexport const p = check;\n');
      plant("services/loose.ts", "// loose\nexport const loose = 1;\n");
      plant("store/rows/index.ts", '// rows\nexport type { Row } from "./row.js";\n');
      plant("store/rows/row.ts", '// row\nimport type { Log } from "../log/index.js";\nexport type Row = Log;\n');
      plant("store/log/index.ts", '// log\nexport type { Log } from "./log.js";\n');
      plant("store/log/log.ts", '// log\nimport type { Row } from "../rows/index.js";\nexport interface Log { row?: Row }\n');
      plant(
        "http/handler.ts",
        '// handler\nimport { trip } from "../services/breakers/trip.js";\nimport { issue } from "../services/grants/index.js";\nexport const h = [trip, issue];\n',
      );
      const files = sourceFilesUnder(dir);
      const graph = importGraph(files);
      expect(roomViolations(graph, dir, ROOMED_LAYERS)).toEqual([
        "http/handler.ts → services/breakers/trip.ts",
        "services/breakers/planted.ts → services/grants/deep/check.ts",
      ]);
      expect(filesOutsideRooms(files, dir, ROOMED_LAYERS)).toEqual(["services/loose.ts"]);
      expect(importCircles(roomGraph(graph, dir, ROOMED_LAYERS))).toEqual([["store/log", "store/rows"]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
