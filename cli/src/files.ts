// Finding the files a command works on: family YAML and `.policy` files, directories walked in order.
import { readdirSync, readFileSync, type Stats, statSync } from "node:fs";
import { extname, join, relative, resolve, sep } from "node:path";
import { UsageError } from "./args.js";

export type FileKind = "family" | "policy";

export interface InputFile {
  /** The path as reported: relative to the working directory, with `/` separators. */
  readonly path: string;
  readonly absolute: string;
  readonly kind: FileKind;
}

/** The most files one run reads; a larger tree is refused rather than read without end. */
export const FILES_MAX = 10_000;

export function kindOf(path: string): FileKind | undefined {
  const ext = extname(path).toLowerCase();
  if (ext === ".yaml" || ext === ".yml") return "family";
  if (ext === ".policy") return "policy";
  return undefined;
}

export function displayPath(cwd: string, absolute: string): string {
  const rel = relative(cwd, absolute);
  return (rel === "" ? "." : rel).split(sep).join("/");
}

/**
 * The inputs named on the command line: a file is taken as given (its kind from its extension),
 * a directory is walked for `.yaml`, `.yml` and `.policy` files, skipping `node_modules` and
 * hidden directories. Sorted, so every run reports in the same order.
 */
export function collectInputs(cwd: string, paths: readonly string[], kinds: readonly FileKind[]): InputFile[] {
  const found: InputFile[] = [];
  const visit = (absolute: string, named: boolean): void => {
    if (found.length >= FILES_MAX) throw new UsageError(`more than ${FILES_MAX} files under the given paths`);
    let stats: Stats;
    try {
      stats = statSync(absolute);
    } catch {
      throw new UsageError(`\`${displayPath(cwd, absolute)}\` does not exist`);
    }
    if (stats.isDirectory()) {
      for (const name of readdirSync(absolute).sort()) {
        if (name.startsWith(".") || name === "node_modules") continue;
        visit(join(absolute, name), false);
      }
      return;
    }
    const kind = kindOf(absolute);
    if (kind === undefined || !kinds.includes(kind)) {
      if (named)
        throw new UsageError(
          `\`${displayPath(cwd, absolute)}\` is not a ${kinds.map((k) => (k === "family" ? "family (.yaml, .yml)" : ".policy")).join(" or ")} file`,
        );
      return;
    }
    found.push({ path: displayPath(cwd, absolute), absolute, kind });
  };
  for (const path of paths) visit(resolve(cwd, path), true);
  const unique = new Map(found.map((f) => [f.absolute, f]));
  return [...unique.values()].sort((a, b) => a.path.localeCompare(b.path));
}

export function readText(file: InputFile): string {
  return readFileSync(file.absolute, "utf8");
}
