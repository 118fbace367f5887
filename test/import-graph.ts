// The repository's import graph and its circles: every relative import of every source file
// (`import type` included, and `export … from` and `import()`), and the strongly connected
// components of more than one file (or a file importing itself), found by Tarjan's algorithm.

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/** Directories never walked: installed and built code, and version control. */
const SKIPPED = new Set(["node_modules", "dist", ".git"]);

const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;

/** Every source file under `root`, skipping installed and built code. */
export function sourceFilesUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      if (SKIPPED.has(name)) continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (SOURCE.test(name)) out.push(path);
    }
  };
  walk(root);
  return out.sort();
}

/** The TypeScript modules under `dir`: every `.ts` file but tests and declarations. */
export function typeScriptModulesUnder(dir: string): string[] {
  return sourceFilesUnder(dir).filter((path) => path.endsWith(".ts") && !path.endsWith(".test.ts") && !path.endsWith(".d.ts"));
}

/** The relative module specifiers of a source text, every form that ties two files together. */
export function relativeImports(text: string): string[] {
  const specifiers: string[] = [];
  const pattern =
    /(?:^|[\n;])\s*(?:import|export)\b[^"'`;]*?\bfrom\s*["'](\.{1,2}\/[^"']+)["']|\bimport\s*\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)|(?:^|[\n;])\s*import\s*["'](\.{1,2}\/[^"']+)["']/g;
  for (const match of text.matchAll(pattern)) specifiers.push((match[1] ?? match[2] ?? match[3])!);
  return specifiers;
}

/** The file a relative specifier names, among `files`: `./x.js` is `x.ts` when that is the source. */
function target(from: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(js|mjs|cjs)$/, "");
  const ext = base.slice(stem.length);
  const candidates = [
    base,
    ...(ext === ".mjs" ? [`${stem}.mts`] : ext === ".cjs" ? [`${stem}.cts`] : [`${stem}.ts`, `${stem}.tsx`]),
    `${base}.ts`,
    `${base}.js`,
    join(base, "index.ts"),
    join(base, "index.js"),
  ];
  return candidates.find((c) => files.has(c));
}

/** Who imports whom among `files`, given how to read each. */
export function importGraph(
  files: readonly string[],
  read: (file: string) => string = (f) => readFileSync(f, "utf8"),
): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const out = new Set<string>();
    for (const specifier of relativeImports(read(file))) {
      const to = target(file, specifier, known);
      if (to !== undefined) out.add(to);
    }
    graph.set(file, [...out]);
  }
  return graph;
}

/** The circles of a graph: each strongly connected component of two or more files, or a file that imports itself. */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  // Iterative, so that a long chain of imports cannot overflow the call stack.
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next);
    next += 1;
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge]!;
        frame.edge += 1;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next);
          next += 1;
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length > 1 || edges.includes(frame.node)) circles.push(component.sort());
      }
    }
  }
  return circles;
}

/** The circles among the source files under `root`, as paths relative to it. */
export function circlesUnder(root: string): string[][] {
  if (!existsSync(root)) return [];
  return importCircles(importGraph(sourceFilesUnder(root))).map((c) => c.map((f) => relative(root, f)));
}

/**
 * The imports against a layering: `layers` are folders under `base`, outermost first, and a file of
 * one may import its own layer and the ones after it, never one before. Files outside every layer
 * are not constrained. Answers each offending import as `from → to`, paths relative to `base`.
 */
export function layerViolations(graph: ReadonlyMap<string, readonly string[]>, base: string, layers: readonly string[]): string[] {
  const layerOf = (file: string): number => {
    const path = relative(base, file);
    return layers.findIndex((layer) => path.startsWith(`${layer}/`));
  };
  const violations: string[] = [];
  for (const [from, imports] of graph) {
    const own = layerOf(from);
    if (own === -1) continue;
    for (const to of imports) {
      const theirs = layerOf(to);
      if (theirs !== -1 && theirs < own) violations.push(`${relative(base, from)} → ${relative(base, to)}`);
    }
  }
  return violations.sort();
}

/**
 * The room of a file: `<layer>/<room>` when the file lies in a folder `<room>` of one of `layers`
 * (folders under `base`), at any depth inside it; undefined for a file outside every room.
 */
export function roomOf(file: string, base: string, layers: readonly string[]): string | undefined {
  const parts = relative(base, file).split(sep);
  if (parts.length < 3 || !layers.includes(parts[0]!)) return undefined;
  return `${parts[0]}/${parts[1]}`;
}

/** The files lying directly in a layer's folder under `base`, outside every room, as paths relative to `base`. */
export function filesOutsideRooms(files: readonly string[], base: string, layers: readonly string[]): string[] {
  return files
    .map((file) => relative(base, file).split(sep))
    .filter((parts) => parts.length === 2 && layers.includes(parts[0]!))
    .map((parts) => parts.join("/"))
    .sort();
}

/**
 * The imports that reach into a room other than through its one public face: a file may import a
 * file of its own room directly, and another room's (or, outside every room, any room's) `index.ts`
 * only. Answers each offending import as `from → to`, paths relative to `base`.
 */
export function roomViolations(graph: ReadonlyMap<string, readonly string[]>, base: string, layers: readonly string[]): string[] {
  const violations: string[] = [];
  for (const [from, imports] of graph) {
    const own = roomOf(from, base, layers);
    for (const to of imports) {
      const theirs = roomOf(to, base, layers);
      if (theirs === undefined || theirs === own) continue;
      if (relative(base, to).split(sep).join("/") !== `${theirs}/index.ts`)
        violations.push(`${relative(base, from)} → ${relative(base, to)}`);
    }
  }
  return violations.sort();
}

/** The rooms' own import graph: room `a` imports room `b` when a file of `a` imports a file of `b`. */
export function roomGraph(graph: ReadonlyMap<string, readonly string[]>, base: string, layers: readonly string[]): Map<string, string[]> {
  const rooms = new Map<string, Set<string>>();
  for (const [from, imports] of graph) {
    const own = roomOf(from, base, layers);
    if (own === undefined) continue;
    const out = rooms.get(own) ?? new Set<string>();
    rooms.set(own, out);
    for (const to of imports) {
      const theirs = roomOf(to, base, layers);
      if (theirs !== undefined && theirs !== own) out.add(theirs);
    }
  }
  return new Map([...rooms].map(([room, out]) => [room, [...out].sort()]));
}
