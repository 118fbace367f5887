// Plain-text reports of a manifest and of a least-privilege comparison, for the command line.
import type { Manifest } from "./build.js";
import type { ManifestComparison } from "./compare.js";

/** One line per tool and registration, then the hash, then every warning as `file:line:col`. */
export function renderManifest(manifest: Manifest): string {
  const lines: string[] = [`tools (${manifest.tools.length}):`];
  const width = Math.max(0, ...manifest.tools.map((tool) => tool.name.length));
  for (const tool of manifest.tools) {
    for (const [index, where] of tool.registrations.entries()) {
      const name = index === 0 ? tool.name.padEnd(width) : " ".repeat(width);
      const kind = index === 0 ? tool.kind.padEnd(5) : " ".repeat(5);
      lines.push(`  ${name}  ${kind}  ${where.file}:${where.line}:${where.column}  ${where.call}`);
    }
  }
  lines.push(`manifest_hash: ${manifest.manifest_hash}`);
  for (const warning of manifest.warnings) {
    lines.push(`warning: ${warning.file}:${warning.line}:${warning.column}: ${warning.message}`);
    if (warning.help !== undefined) lines.push(`  help: ${warning.help}`);
  }
  if (!manifest.complete) lines.push(`incomplete: ${manifest.warnings.length} problem(s) above; do not certify this manifest`);
  return `${lines.join("\n")}\n`;
}

/** The two lists of a comparison and the verdict; `against` names the family or grant compared with. */
export function renderComparison(comparison: ManifestComparison, against: string): string {
  const lines: string[] = [`against ${against}:`];
  lines.push(`  used but not granted (refused at run time): ${comparison.used_not_granted.length === 0 ? "none" : ""}`.trimEnd());
  for (const name of comparison.used_not_granted) lines.push(`    ${name}`);
  lines.push(`  granted but never used (remove for least privilege): ${comparison.granted_not_used.length === 0 ? "none" : ""}`.trimEnd());
  for (const entry of comparison.granted_not_used) lines.push(`    ${entry}`);
  const verdict = comparison.least_privilege ? "yes" : comparison.complete ? "no" : "unknown: the manifest is incomplete";
  lines.push(`  least privilege: ${verdict}`);
  return `${lines.join("\n")}\n`;
}
