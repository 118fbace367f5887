// The release: `npm pack` of every public workspace into one folder, a CycloneDX SBOM of what they
// ship and need at run time (read from package-lock.json), the lock that installs exactly that, and
// SHA256SUMS of every file made.
// Usage: `npm run release [-- --out FOLDER]` (builds first) or `node .ci/release.mjs [--out FOLDER | FOLDER]`;
// FOLDER defaults to ./release.
import { spawnSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const SBOM_FILE = "sbom.cdx.json";
const SUMS_FILE = "SHA256SUMS";
const USAGE = "usage: npm run release [-- --out FOLDER]  (or: node .ci/release.mjs [--out FOLDER | FOLDER])";

/** Reads a JSON file of the repository. */
const readJson = (path) => JSON.parse(readFileSync(join(root, path), "utf8"));

/** Stops the release with a message on stderr and exit status 1. */
function fail(message) {
  process.stderr.write(`release: ${message}\n`);
  process.exit(1);
}

/** The output folder from the command line: `--out FOLDER`, `--out=FOLDER` or one FOLDER; anything else stops the release. */
function outFolder(args) {
  let folder;
  const take = (value) => {
    if (folder !== undefined) fail(`one output folder only (got ${JSON.stringify(folder)} and ${JSON.stringify(value)})\n${USAGE}`);
    if (value === undefined || value.length === 0) fail(`--out needs a folder\n${USAGE}`);
    folder = value;
  };
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    if (arg === "--help" || arg === "-h") {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    if (arg === "--out") {
      i += 1;
      take(args[i]);
    } else if (arg.startsWith("--out=")) take(arg.slice("--out=".length));
    else if (arg.startsWith("-")) fail(`unknown option ${JSON.stringify(arg)}\n${USAGE}`);
    else take(arg);
  }
  return resolve(folder ?? join(root, "release"));
}

/** The public workspaces (no `private: true`), each with its folder and manifest. */
function publicWorkspaces(top) {
  return top.workspaces
    .map((folder) => ({ folder, manifest: readJson(`${folder}/package.json`) }))
    .filter(({ manifest }) => manifest.private !== true);
}

/** One version for every package: each public package and each dependency between them carries the top one. */
function checkVersions(top, workspaces) {
  const names = new Set(workspaces.map((w) => w.manifest.name));
  for (const { folder, manifest } of workspaces) {
    if (manifest.version !== top.version) fail(`${folder}/package.json has version ${manifest.version}, not ${top.version}`);
    for (const field of ["dependencies", "peerDependencies", "devDependencies"]) {
      for (const [name, range] of Object.entries(manifest[field] ?? {})) {
        if (names.has(name) && range !== top.version) fail(`${folder}/package.json wants ${name}@${range}, not ${top.version}`);
      }
    }
  }
  const changelog = readFileSync(join(root, "docs", "CHANGELOG.md"), "utf8");
  if (!new RegExp(`^## ${top.version.replaceAll(".", "\\.")} \\(\\d{4}-\\d{2}-\\d{2}\\)$`, "m").test(changelog)) {
    fail(`docs/CHANGELOG.md has no section "## ${top.version} (YYYY-MM-DD)"`);
  }
}

/** Packs every public workspace into `out` and answers npm's report of each tarball. */
function pack(workspaces) {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  // What the CLI's `prepack` does, which `--ignore-scripts` leaves out: ship the docs its help names.
  const copied = spawnSync(process.execPath, [join(root, "cli", "scripts", "copy-docs.mjs")], { cwd: root, encoding: "utf8" });
  if (copied.status !== 0) fail(`copying the CLI's docs failed:\n${copied.stderr}`);
  const args = ["pack", ...workspaces.flatMap((w) => ["--workspace", w.folder]), "--pack-destination", out, "--json", "--ignore-scripts"];
  const result = spawnSync(npm, args, { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) fail(`npm pack failed:\n${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** The package URL of an npm package (the scope's `@` percent-encoded). */
const purl = (name, version) => `pkg:npm/${name.replace(/^@/, "%40")}@${version}`;

/** The lock path Node resolves `name` to from the package at lock path `from`, or undefined. */
function resolveFrom(entries, from, name) {
  let dir = from;
  for (;;) {
    const candidate = dir === "" ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    const entry = entries[candidate];
    if (entry !== undefined && entry.link !== true) return candidate;
    if (entry?.link === true) return entry.resolved;
    if (dir === "") return undefined;
    const cut = dir.lastIndexOf("/node_modules/");
    dir = cut < 0 ? "" : dir.slice(0, cut);
  }
}

/** What a lock entry needs at run time: dependencies, optional ones and peers that are not optional. */
function runtimeNeeds(entry) {
  const optionalPeers = entry.peerDependenciesMeta ?? {};
  return [
    ...Object.keys(entry.dependencies ?? {}).map((name) => ({ name, optional: false })),
    ...Object.keys(entry.optionalDependencies ?? {}).map((name) => ({ name, optional: true })),
    ...Object.keys(entry.peerDependencies ?? {})
      .filter((name) => optionalPeers[name]?.optional !== true)
      .map((name) => ({ name, optional: false })),
  ];
}

/** The name of the package at a lock path. */
const nameAt = (entries, path) => entries[path].name ?? path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);

/** A CycloneDX license list from an npm `license` field, or undefined when there is none. */
function licensesOf(license) {
  if (typeof license !== "string" || license.length === 0) return undefined;
  return [{ expression: license }];
}

/** The SHA-512 of an npm integrity string as CycloneDX hashes (hex), or undefined. */
function hashesOf(integrity) {
  const sha512 = typeof integrity === "string" ? /sha512-([A-Za-z0-9+/=]+)/.exec(integrity) : null;
  return sha512 === null ? undefined : [{ alg: "SHA-512", content: Buffer.from(sha512[1], "base64").toString("hex") }];
}

/** The components and dependency graph of the public packages and everything they need at run time. */
function bomGraph(workspaces, packs) {
  const entries = readJson("package-lock.json").packages;
  const refOf = new Map();
  const components = [];
  const queue = [];
  for (const { folder, manifest } of workspaces) {
    const tarball = packs.find((p) => p.name === manifest.name);
    const ref = purl(manifest.name, manifest.version);
    refOf.set(folder, ref);
    const sha256 = createHash("sha256")
      .update(readFileSync(join(out, tarball.filename)))
      .digest("hex");
    components.push({
      type: "library",
      "bom-ref": ref,
      name: manifest.name,
      version: manifest.version,
      description: manifest.description,
      licenses: licensesOf(manifest.license),
      purl: ref,
      hashes: [{ alg: "SHA-256", content: sha256 }],
    });
    queue.push(folder);
  }
  const dependsOn = new Map();
  const reached = [];
  while (queue.length > 0) {
    const from = queue.shift();
    const needs = [];
    for (const need of runtimeNeeds(entries[from])) {
      const found = resolveFrom(entries, from, need.name);
      if (found === undefined) {
        if (need.optional) continue;
        fail(`${need.name}, needed by ${from}, is not in package-lock.json`);
      }
      if (!refOf.has(found)) {
        const entry = entries[found];
        const name = nameAt(entries, found);
        const ref = purl(name, entry.version);
        refOf.set(found, ref);
        if (!components.some((c) => c["bom-ref"] === ref)) {
          components.push({
            type: "library",
            "bom-ref": ref,
            name,
            version: entry.version,
            licenses: licensesOf(entry.license),
            purl: ref,
            hashes: hashesOf(entry.integrity),
          });
        }
        queue.push(found);
        reached.push(found);
      }
      needs.push(refOf.get(found));
    }
    const ref = refOf.get(from);
    dependsOn.set(ref, [...new Set([...(dependsOn.get(ref) ?? []), ...needs])].sort());
  }
  return { components, dependencies: [...dependsOn].map(([ref, refs]) => ({ ref, dependsOn: refs })), reached };
}

/** Fields of a lock entry that say where it sits in the repository's tree, or what only its development needs. */
const TREE_FIELDS = ["dev", "devOptional", "peer", "extraneous", "inBundle", "devDependencies"];

/** A lock entry without the repository's tree flags, with the registry tarball it came from when the lock leaves it out. */
function installEntry(path, entry) {
  const kept = Object.fromEntries(Object.entries(entry).filter(([field]) => !TREE_FIELDS.includes(field)));
  if (typeof kept.resolved === "string" || typeof kept.version !== "string") return kept;
  const name = path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
  return { ...kept, resolved: `https://registry.npmjs.org/${name}/-/${name.slice(name.lastIndexOf("/") + 1)}-${kept.version}.tgz` };
}

/**
 * The package.json and package-lock.json of the release folder as a project: every tarball by its
 * file name, every registry package at the version, tarball and integrity of the SBOM (the
 * repository's lock), so that `npm ci` there installs exactly the SBOM's components.
 */
function installProject(top, workspaces, packs, reached) {
  const entries = readJson("package-lock.json").packages;
  const tarballs = workspaces.map(({ folder, manifest }) => ({
    folder,
    name: manifest.name,
    file: `file:${packs.find((p) => p.name === manifest.name).filename}`,
  }));
  const dependencies = Object.fromEntries(tarballs.map((t) => [t.name, t.file]));
  const name = `${top.name}-release`;
  const manifest = {
    name,
    version: top.version,
    private: true,
    description: `Installs ${top.name} ${top.version} as its SBOM lists it: npm ci --omit=dev`,
    dependencies,
  };
  const packages = { "": { name, version: top.version, dependencies } };
  /** Where a repository lock path lands in the release's tree: a workspace's folder becomes its package's. */
  const placed = (path) => {
    const owner = tarballs.find((t) => path.startsWith(`${t.folder}/`));
    return owner === undefined ? path : `node_modules/${owner.name}${path.slice(owner.folder.length)}`;
  };
  for (const t of tarballs) packages[`node_modules/${t.name}`] = { ...installEntry(t.folder, entries[t.folder]), resolved: t.file };
  for (const path of reached) packages[placed(path)] = installEntry(path, entries[path]);
  return { manifest, lock: { name, version: top.version, lockfileVersion: 3, requires: true, packages } };
}

/** The CycloneDX 1.6 SBOM of the release, as JSON. */
function sbom(top, workspaces, { components, dependencies }) {
  const rootRef = purl(top.name, top.version);
  const timestamp = process.env.SOURCE_DATE_EPOCH === undefined ? new Date() : new Date(Number(process.env.SOURCE_DATE_EPOCH) * 1000);
  return {
    bomFormat: "CycloneDX",
    specVersion: "1.6",
    serialNumber: `urn:uuid:${randomUUID()}`,
    version: 1,
    metadata: {
      timestamp: timestamp.toISOString().replace(/\.\d{3}Z$/, "Z"),
      lifecycles: [{ phase: "build" }],
      tools: { components: [{ type: "application", name: "agent-authority release", version: top.version }] },
      component: {
        type: "application",
        "bom-ref": rootRef,
        name: top.name,
        version: top.version,
        description: top.description,
        licenses: licensesOf(top.license),
      },
    },
    components: components.sort((a, b) => (a["bom-ref"] < b["bom-ref"] ? -1 : 1)),
    dependencies: [{ ref: rootRef, dependsOn: workspaces.map((w) => purl(w.manifest.name, w.manifest.version)).sort() }, ...dependencies],
  };
}

const out = outFolder(process.argv.slice(2));
const top = readJson("package.json");
const workspaces = publicWorkspaces(top);
checkVersions(top, workspaces);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const packs = pack(workspaces);
const graph = bomGraph(workspaces, packs);
writeFileSync(join(out, SBOM_FILE), `${JSON.stringify(sbom(top, workspaces, graph), null, 2)}\n`);
const project = installProject(top, workspaces, packs, graph.reached);
writeFileSync(join(out, "package.json"), `${JSON.stringify(project.manifest, null, 2)}\n`);
writeFileSync(join(out, "package-lock.json"), `${JSON.stringify(project.lock, null, 2)}\n`);
const sums = readdirSync(out)
  .filter((name) => name !== SUMS_FILE && name !== "node_modules")
  .sort()
  .map(
    (name) =>
      `${createHash("sha256")
        .update(readFileSync(join(out, name)))
        .digest("hex")}  ${name}\n`,
  )
  .join("");
writeFileSync(join(out, SUMS_FILE), sums);
process.stdout.write(`release ${top.version}: ${packs.length} packages, ${SBOM_FILE} and ${SUMS_FILE} in ${out}\n`);
