// A package-lock.json for a project outside the repository that installs packed tarballs: every
// registry package comes from the repository's own lock (version, resolved, integrity), so that
// `npm ci --offline` fetches only tarballs that `npm install` of the repository already cached.
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** One packed workspace package: its folder in the repository and its tarball, relative to the project. */
export interface PackedPackage {
  readonly name: string;
  readonly folder: string;
  readonly tarball: string;
}

type LockEntry = Record<string, unknown> & {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

/** Fields of a lock entry that say where a package sits in the repository's own tree; recomputed here. */
const TREE_FLAGS = ["dev", "devOptional", "peer", "extraneous", "inBundle"];

/** The lock path of `name` as Node resolves it from the package at lock path `from`, or undefined. */
function resolveFrom(entries: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = dir === "" ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    const entry = entries[candidate];
    if (entry !== undefined && entry["link"] !== true) return candidate;
    if (dir === "") return undefined;
    const cut = dir.lastIndexOf("/node_modules/");
    dir = cut < 0 ? "" : dir.slice(0, cut);
  }
}

/** The registry dependencies a lock entry needs at run time (optional ones only when present). */
function runtimeNeeds(entry: LockEntry): { name: string; optional: boolean }[] {
  const peersOptional = entry.peerDependenciesMeta ?? {};
  return [
    ...Object.keys(entry.dependencies ?? {}).map((name) => ({ name, optional: false })),
    ...Object.keys(entry.optionalDependencies ?? {}).map((name) => ({ name, optional: true })),
    ...Object.keys(entry.peerDependencies ?? {}).map((name) => ({ name, optional: peersOptional[name]?.optional === true })),
  ];
}

/**
 * Builds the lock of a project whose dependencies are `packed` (each by its tarball) and, when
 * given, `registry` packages at the version the repository's lock holds at its top.
 */
export function offlineLock(
  repositoryRoot: string,
  project: string,
  packed: readonly PackedPackage[],
  registry: readonly string[] = [],
): Record<string, unknown> {
  const repoLock = JSON.parse(readFileSync(join(repositoryRoot, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };
  const entries = repoLock.packages;
  const byName = new Map(packed.map((p) => [p.name, p]));
  const out: Record<string, LockEntry> = {
    "": {
      name: project,
      version: "1.0.0",
      dependencies: { ...Object.fromEntries(packed.map((p) => [p.name, `file:${p.tarball}`])), ...registryVersions(entries, registry) },
    },
  };
  /** Where a repository lock path lands in the project: workspace folders become their package's folder. */
  const placed = (path: string): string => {
    for (const p of packed)
      if (path === p.folder || path.startsWith(`${p.folder}/`)) return `node_modules/${p.name}${path.slice(p.folder.length)}`;
    return path;
  };
  const queue: string[] = [];
  for (const p of packed) {
    const { dev: _dev, devDependencies: _devDeps, ...entry } = entries[p.folder] as LockEntry & { devDependencies?: unknown };
    out[`node_modules/${p.name}`] = { ...entry, resolved: `file:${p.tarball}` };
    queue.push(p.folder);
  }
  for (const name of registry) {
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = entries[`node_modules/${name}`]!;
    out[`node_modules/${name}`] = withTarball(`node_modules/${name}`, entry);
    queue.push(`node_modules/${name}`);
  }
  const seen = new Set(queue);
  while (queue.length > 0) {
    const from = queue.shift()!;
    for (const need of runtimeNeeds(entries[from]!)) {
      if (byName.has(need.name)) continue;
      const found = resolveFrom(entries, from, need.name);
      if (found === undefined) {
        if (need.optional) continue;
        throw new Error(`\`${need.name}\`, needed by \`${from}\`, is not in the repository's lock`);
      }
      if (seen.has(found)) continue;
      seen.add(found);
      const entry: LockEntry = withTarball(found, { ...entries[found]! });
      for (const flag of TREE_FLAGS) delete entry[flag];
      out[placed(found)] = entry;
      queue.push(found);
    }
  }
  return { name: project, version: "1.0.0", lockfileVersion: 3, requires: true, packages: out };
}

/** The exact version of each registry package at the top of the repository's lock. */
function registryVersions(entries: Record<string, LockEntry>, registry: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    registry.map((name) => {
      const entry = entries[`node_modules/${name}`];
      if (entry === undefined) throw new Error(`\`${name}\` is not at the top of the repository's lock`);
      return [name, String(entry["version"])];
    }),
  );
}

/**
 * The entry with the registry tarball it came from, when the lock leaves it out: with `resolved`
 * and `integrity`, `npm ci --offline` takes the tarball from the cache without asking for the
 * package's metadata, which an install of the repository need not have cached.
 */
function withTarball(path: string, entry: LockEntry): LockEntry {
  if (typeof entry["resolved"] === "string" || typeof entry["version"] !== "string") return entry;
  const name = path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
  const registry = (process.env["npm_config_registry"] ?? "https://registry.npmjs.org/").replace(/\/?$/, "/");
  return { ...entry, resolved: `${registry}${name}/-/${name.slice(name.lastIndexOf("/") + 1)}-${entry["version"]}.tgz` };
}
