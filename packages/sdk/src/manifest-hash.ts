// The canonical form of a tool manifest and its `manifest_hash`, the value certification pins and agents attest.
import { createHash } from "node:crypto";

/** How a tool is registered: `mcp` for an MCP server's tool, `guard` for a call guarded by the SDK. */
export type ToolKind = "mcp" | "guard";

/** Version of the canonical form; a change to the form changes this number and every hash. */
export const MANIFEST_VERSION = 1;

/** Orders strings by UTF-16 code units, the order every canonical form of this project uses. */
export function compareText(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The canonical JSON of a manifest (docs/decisions/0502-manifest-hash.md): an object with exactly
 * the keys `manifest_version` and `tools`, in that order; `tools` is an array of `{"kind","name"}`
 * objects, keys in that order, one per distinct (name, kind) pair, sorted by name and then kind;
 * no whitespace; strings escaped as `JSON.stringify` escapes them. Locations are left out, so moving
 * code does not change the hash; anything that changes which tools exist does.
 */
export function canonicalManifest(tools: readonly { readonly name: string; readonly kind: ToolKind }[]): string {
  const pairs = new Map<string, { name: string; kind: ToolKind }>();
  for (const tool of tools) pairs.set(`${tool.kind}\u0000${tool.name}`, { name: tool.name, kind: tool.kind });
  const sorted = [...pairs.values()].sort((a, b) => compareText(a.name, b.name) || compareText(a.kind, b.kind));
  const entries = sorted.map((tool) => `{"kind":${JSON.stringify(tool.kind)},"name":${JSON.stringify(tool.name)}}`);
  return `{"manifest_version":${MANIFEST_VERSION},"tools":[${entries.join(",")}]}`;
}

/** `sha256:` and the lower-case hex SHA-256 of the canonical JSON's UTF-8 bytes. */
export function manifestHash(tools: readonly { readonly name: string; readonly kind: ToolKind }[]): string {
  return `sha256:${createHash("sha256").update(canonicalManifest(tools), "utf8").digest("hex")}`;
}
