// The canonical form of a tool manifest and its `manifest_hash`, the value certification pins and agents attest.
import { createHash } from "node:crypto";
import { canonicalJson } from "./canonical-json.js";

/** How a tool is registered: `mcp` for an MCP server's tool, `guard` for a call guarded by the SDK. */
export type ToolKind = "mcp" | "guard";

/** Version of the canonical form of a manifest of names; a change to the form changes this number and every hash. */
export const MANIFEST_VERSION = 1;

/** Version of the canonical form of a manifest whose tools carry their definitions (docs/decisions/0502). */
export const MANIFEST_DEFINITIONS_VERSION = 2;

/** The parts of an MCP tool that a model reads or that shape its call; all of them are hashed. */
export interface ToolDefinition {
  readonly name: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly inputSchema?: unknown;
  readonly outputSchema?: unknown;
  readonly annotations?: unknown;
}

/** A manifest entry; an MCP tool read from a running server carries its definition. */
export interface ManifestTool {
  readonly name: string;
  readonly kind: ToolKind;
  readonly definition?: ToolDefinition | undefined;
}

/**
 * The definition of an MCP tool as hashed: its own name, title, description, input and output
 * schemas and annotations, nothing else (`_meta`, icons and unknown fields are left out).
 */
export function toolDefinition(tool: ToolDefinition): ToolDefinition {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
  };
}

/** Orders strings by UTF-16 code units, the order every canonical form of this project uses. */
export function compareText(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The canonical JSON of a manifest (docs/decisions/0502-manifest-hash.md). Of names only (version
 * 1): an object with exactly the keys `manifest_version` and `tools`, in that order; `tools` is an
 * array of `{"kind","name"}` objects, keys in that order, one per distinct (name, kind) pair, sorted
 * by name and then kind; no whitespace; strings escaped as `JSON.stringify` escapes them. Locations
 * are left out, so moving code does not change the hash; anything that changes which tools exist
 * does. When any tool carries its definition (version 2), the whole manifest is RFC 8785 canonical
 * JSON and each entry holds its `definition`, so a changed description, schema or annotation
 * changes the hash too.
 */
export function canonicalManifest(tools: readonly ManifestTool[]): string {
  if (tools.some((tool) => tool.definition !== undefined)) return canonicalDefinitions(tools);
  const pairs = new Map<string, { name: string; kind: ToolKind }>();
  for (const tool of tools) pairs.set(`${tool.kind}\u0000${tool.name}`, { name: tool.name, kind: tool.kind });
  const sorted = [...pairs.values()].sort((a, b) => compareText(a.name, b.name) || compareText(a.kind, b.kind));
  const entries = sorted.map((tool) => `{"kind":${JSON.stringify(tool.kind)},"name":${JSON.stringify(tool.name)}}`);
  return `{"manifest_version":${MANIFEST_VERSION},"tools":[${entries.join(",")}]}`;
}

/** Version 2: entries `{kind, name, definition}` in RFC 8785 form, distinct, sorted by name, kind and text. */
function canonicalDefinitions(tools: readonly ManifestTool[]): string {
  const entries = new Map<string, { name: string; kind: ToolKind; text: string }>();
  for (const tool of tools) {
    const entry = {
      kind: tool.kind,
      name: tool.name,
      definition: tool.definition === undefined ? undefined : toolDefinition(tool.definition),
    };
    const text = canonicalJson(entry);
    entries.set(text, { name: tool.name, kind: tool.kind, text });
  }
  const sorted = [...entries.values()].sort(
    (a, b) => compareText(a.name, b.name) || compareText(a.kind, b.kind) || compareText(a.text, b.text),
  );
  return `{"manifest_version":${MANIFEST_DEFINITIONS_VERSION},"tools":[${sorted.map((entry) => entry.text).join(",")}]}`;
}

/** `sha256:` and the lower-case hex SHA-256 of the canonical JSON's UTF-8 bytes. */
export function manifestHash(tools: readonly ManifestTool[]): string {
  return `sha256:${createHash("sha256").update(canonicalManifest(tools), "utf8").digest("hex")}`;
}
