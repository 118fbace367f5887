// Builds an agent's tool manifest from its TypeScript sources with ts-morph.
import { existsSync, readdirSync, type Stats, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { ModuleKind, ModuleResolutionKind, Project, ScriptTarget } from "ts-morph";
import { compareText, manifestHash, MANIFEST_VERSION, type ToolKind } from "./hash.js";
import { findRegistrations, type RegistrationCall, type SourceLocation } from "./registrations.js";

/** Bounds on what one scan reads, units last. */
export const MANIFEST_LIMITS = Object.freeze({ filesMax: 5_000, fileBytesMax: 2_000_000, directoryDepthMax: 32 });

export interface ManifestTool {
  readonly name: string;
  readonly kind: ToolKind;
  /** Every place the tool is registered, sorted by file, line and column. */
  readonly registrations: readonly (SourceLocation & { readonly call: RegistrationCall })[];
}

export type ManifestWarningCode =
  | "unresolved-tool-name"
  | "dynamic-tool-dispatch"
  | "unreadable-path"
  | "limit-reached"
  | "tsconfig-ignored";

/** Warnings that leave the tool list itself whole: any other warning makes the manifest incomplete. */
const informational: ReadonlySet<ManifestWarningCode> = new Set(["tsconfig-ignored"]);

export interface ManifestWarning extends SourceLocation {
  readonly code: ManifestWarningCode;
  /** Lower case, no final period, the user's input in backticks. */
  readonly message: string;
  readonly help?: string;
}

export interface Manifest {
  readonly manifest_version: typeof MANIFEST_VERSION;
  /** Sorted by name, then kind; one entry per (name, kind). */
  readonly tools: readonly ManifestTool[];
  /** SHA-256 of the canonical form of the tools (docs/decisions/0502-manifest-hash.md). */
  readonly manifest_hash: string;
  /** False when some registration could not be resolved or some source not read: do not certify it. */
  readonly complete: boolean;
  readonly warnings: readonly ManifestWarning[];
  /** The source files scanned, relative to the directory. */
  readonly files: readonly string[];
}

/** TypeScript and JavaScript alike: an agent written in JavaScript registers tools too. */
const sourceExtensions = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];
const skippedDirectories = new Set(["node_modules", "dist", "build", "coverage", "__tests__"]);

/**
 * Reads every TypeScript and JavaScript source under `dir` (tests, declarations, dependencies and build output
 * left out) and returns the tools it registers. Never throws for what it finds on disk.
 */
export function buildManifest(dir: string): Manifest {
  const root = resolve(dir);
  const warnings: ManifestWarning[] = [];
  const paths = listSources(root, warnings);
  const project = createProject(root, warnings);
  for (const path of paths) project.addSourceFileAtPath(path);
  const byTool = new Map<string, { name: string; kind: ToolKind; registrations: (SourceLocation & { call: RegistrationCall })[] }>();
  for (const path of paths) {
    const source = project.getSourceFileOrThrow(path);
    const { found, unresolved, dispatches } = findRegistrations(source, displayPath(root, path));
    for (const registration of found) {
      const key = `${registration.kind}\u0000${registration.name}`;
      const entry = byTool.get(key) ?? { name: registration.name, kind: registration.kind, registrations: [] };
      entry.registrations.push({ file: registration.file, line: registration.line, column: registration.column, call: registration.call });
      byTool.set(key, entry);
    }
    for (const miss of unresolved) {
      warnings.push({
        code: "unresolved-tool-name",
        file: miss.file,
        line: miss.line,
        column: miss.column,
        message: `the tool name \`${miss.expression}\` of a \`${miss.call}\` call is not a static string`,
        help: "use a string literal or an `as const` constant so the manifest can name the tool",
      });
    }
    for (const dispatch of dispatches) {
      warnings.push({
        code: "dynamic-tool-dispatch",
        file: dispatch.file,
        line: dispatch.line,
        column: dispatch.column,
        message: `\`${dispatch.expression}(CallToolRequestSchema, …)\` serves tools chosen at run time`,
        help: "register each tool with `tool` or `registerTool`, or guard each call with the SDK's `guard`",
      });
    }
  }
  const tools = [...byTool.values()]
    .map((tool) => ({ ...tool, registrations: tool.registrations.sort(compareLocations) }))
    .sort((a, b) => compareText(a.name, b.name) || compareText(a.kind, b.kind));
  return {
    manifest_version: MANIFEST_VERSION,
    tools,
    manifest_hash: manifestHash(tools),
    complete: warnings.every((warning) => informational.has(warning.code)),
    warnings: warnings.sort(compareLocations),
    files: paths.map((path) => displayPath(root, path)).sort(compareText),
  };
}

/** Settings used when the agent has no readable tsconfig.json of its own. */
const defaultCompilerOptions = {
  target: ScriptTarget.ES2022,
  module: ModuleKind.NodeNext,
  moduleResolution: ModuleResolutionKind.NodeNext,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  allowJs: true,
  types: [],
};

/** A project with the agent's own tsconfig.json when it has one (its path aliases resolve names), else defaults. */
function createProject(root: string, warnings: ManifestWarning[]): Project {
  const tsconfig = join(root, "tsconfig.json");
  if (existsSync(tsconfig)) {
    try {
      return new Project({
        tsConfigFilePath: tsconfig,
        compilerOptions: { noEmit: true, skipLibCheck: true, allowJs: true, types: [] },
        skipAddingFilesFromTsConfig: true,
        skipFileDependencyResolution: true,
      });
    } catch {
      warnings.push({
        code: "tsconfig-ignored",
        file: "tsconfig.json",
        line: 0,
        column: 0,
        message: "cannot read `tsconfig.json`; default settings used, so names imported through its path aliases stay unresolved",
      });
    }
  }
  return new Project({ compilerOptions: defaultCompilerOptions, skipAddingFilesFromTsConfig: true, skipFileDependencyResolution: true });
}

/** The source files under `root`, depth-first in name order, within the limits. */
function listSources(root: string, warnings: ManifestWarning[]): string[] {
  const out: string[] = [];
  const visit = (dir: string, depth: number): void => {
    let names: string[];
    try {
      names = readdirSync(dir).sort(compareText);
    } catch {
      warnings.push(pathWarning("unreadable-path", displayPath(root, dir), `cannot read the directory \`${displayPath(root, dir)}\``));
      return;
    }
    for (const name of names) {
      if (name.startsWith(".")) continue;
      const path = join(dir, name);
      let stats: Stats;
      try {
        stats = statSync(path);
      } catch {
        warnings.push(pathWarning("unreadable-path", displayPath(root, path), `cannot read \`${displayPath(root, path)}\``));
        continue;
      }
      if (stats.isDirectory()) {
        if (skippedDirectories.has(name)) continue;
        if (depth >= MANIFEST_LIMITS.directoryDepthMax) {
          warnings.push(
            pathWarning(
              "limit-reached",
              displayPath(root, path),
              `\`${displayPath(root, path)}\` is nested deeper than ${MANIFEST_LIMITS.directoryDepthMax} directories`,
            ),
          );
          continue;
        }
        visit(path, depth + 1);
      } else if (isAgentSource(name)) {
        if (stats.size > MANIFEST_LIMITS.fileBytesMax) {
          warnings.push(
            pathWarning(
              "limit-reached",
              displayPath(root, path),
              `\`${displayPath(root, path)}\` is larger than ${MANIFEST_LIMITS.fileBytesMax} bytes`,
            ),
          );
        } else if (out.length >= MANIFEST_LIMITS.filesMax) {
          warnings.push(pathWarning("limit-reached", displayPath(root, path), `more than ${MANIFEST_LIMITS.filesMax} source files`));
          return;
        } else out.push(path);
      }
    }
  };
  visit(root, 0);
  return out;
}

/** An agent's own runtime source: TypeScript or JavaScript, not a declaration file, not a test. */
function isAgentSource(name: string): boolean {
  if (!sourceExtensions.some((extension) => name.endsWith(extension))) return false;
  if (/\.d\.[mc]?ts$/.test(name)) return false;
  return !/\.(test|spec)\.[mc]?[jt]sx?$/.test(name);
}

function pathWarning(code: ManifestWarningCode, file: string, message: string): ManifestWarning {
  return { code, file, line: 0, column: 0, message };
}

function displayPath(root: string, path: string): string {
  const shown = relative(root, path).split(sep).join("/");
  return shown === "" ? "." : shown;
}

function compareLocations(a: SourceLocation, b: SourceLocation): number {
  return compareText(a.file, b.file) || a.line - b.line || a.column - b.column;
}
