// Least privilege: compares the tools an agent's code uses with the tools a grant family grants.
import { entryCovers } from "@agent-authority/lattice";
import { compareText } from "./hash.js";
import type { Manifest } from "./build.js";

export interface ManifestComparison {
  /** Tools the code registers that no granted entry covers: calls that will be refused. */
  readonly used_not_granted: readonly string[];
  /** Granted entries (an exact name or an `ns.*` pattern) that cover no tool the code registers. */
  readonly granted_not_used: readonly string[];
  /** True when the manifest is complete and both lists are empty. */
  readonly least_privilege: boolean;
  /** False when the manifest has unresolved registrations: the code may use tools neither list shows. */
  readonly complete: boolean;
}

/** Compares a manifest with the `scope.tool` entries of a family or grant; `ns.*` covers `ns.` names. */
export function compareManifest(manifest: Manifest, grantedTools: readonly string[]): ManifestComparison {
  const used = [...new Set(manifest.tools.map((tool) => tool.name))].sort(compareText);
  const granted = [...new Set(grantedTools)].sort(compareText);
  const usedNotGranted = used.filter((name) => !granted.some((entry) => entryCovers(entry, name)));
  const grantedNotUsed = granted.filter((entry) => !used.some((name) => entryCovers(entry, name)));
  return {
    used_not_granted: usedNotGranted,
    granted_not_used: grantedNotUsed,
    least_privilege: manifest.complete && usedNotGranted.length === 0 && grantedNotUsed.length === 0,
    complete: manifest.complete,
  };
}

/** The tool entries a compiled family (`grant.scope.tool`) or a grant (`scope.tool`) grants. */
export function grantedToolsOf(source: unknown): { readonly tools: readonly string[]; readonly placeholders: readonly string[] } {
  const record = asRecord(source);
  const grant = asRecord(record?.["grant"]) ?? record;
  const entries = asRecord(grant?.["scope"])?.["tool"];
  const strings = Array.isArray(entries) ? entries.filter((entry): entry is string => typeof entry === "string") : [];
  // A `${param}` entry is chosen at instantiation; it cannot be compared until then.
  return { tools: strings.filter((entry) => !entry.includes("${")), placeholders: strings.filter((entry) => entry.includes("${")) };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
