// Formatting a family: the policy string gets the language's canonical form; nothing else moves.
import { formatPolicy } from "@agent-authority/language";
import { isDeepStrictEqual } from "node:util";
import { parseDocument, Scalar } from "yaml";
import { FAMILY_LIMITS } from "./schema.js";
import { parseYamlDocument } from "./yaml-document.js";
import { scalarAt } from "./locate.js";
import { placeholdersIn } from "./placeholders.js";

export type FormatFamilyResult =
  | { readonly ok: true; readonly text: string; readonly changed: boolean }
  /** `offset` (into the file) is where the problem lies, when it lies in the policy. */
  | { readonly ok: false; readonly reason: string; readonly offset?: number };

/** Placeholders are not policy syntax; while formatting, each stands as a dynamic `args` name. */
const PROTECT_PREFIX = "args.__placeholder__";

/**
 * Rewrites the `grant.policy` scalar of a family in canonical form, keeping its YAML style where it
 * can (a multi-line result becomes a `|-` block), and every other byte of the file as it was. The
 * result is parsed again and must hold the same data with the formatted policy, or nothing changes.
 */
export function formatFamilySource(text: string): FormatFamilyResult {
  // A family the compiler refuses for its size is not formatted either: the work stays bounded.
  if (text.length > FAMILY_LIMITS.sourceBytesMax) {
    return {
      ok: false,
      reason: `the file has ${text.length} characters, more than ${FAMILY_LIMITS.sourceBytesMax} [family-too-large]`,
      offset: 0,
    };
  }
  const doc = parseYamlDocument(text);
  if (doc.errors.length > 0) return { ok: false, reason: "the file is not valid YAML" };
  const node = scalarAt(doc, ["grant", "policy"]);
  if (node === null || typeof node.value !== "string" || node.range == null) return { ok: true, text, changed: false };
  const template = node.value;
  const protectedText = template.replace(/\$\{([a-z][a-z0-9_]*)\}/g, (_m, name: string) => `${PROTECT_PREFIX}${name}`);
  if (placeholdersIn(protectedText).length > 0) return { ok: false, reason: "the policy has a malformed placeholder" };
  const formatted = formatPolicy(protectedText);
  if (!formatted.ok) {
    const first = formatted.diagnostics[0];
    return {
      ok: false,
      reason: first === undefined ? "the policy cannot be formatted" : `the policy: ${first.message} [${first.code}]`,
      offset: node.range[0],
    };
  }
  const canonical = formatted.text.replace(
    new RegExp(`${PROTECT_PREFIX.replace(/\./g, "\\.")}([a-z][a-z0-9_]*)`, "g"),
    (_m, name: string) => `\${${name}}`,
  );
  if (canonical === template || canonical === template.replace(/\n$/, "")) return { ok: true, text, changed: false };
  const [start, valueEnd] = node.range;
  const lineStart = text.lastIndexOf("\n", start - 1) + 1;
  const keyIndent = /^[ ]*/.exec(text.slice(lineStart, start))![0].length;
  const replacement = scalarText(node, canonical, keyIndent + 2);
  const rewritten = text.slice(0, start) + replacement + text.slice(valueEnd);
  const check = parseYamlDocument(rewritten);
  const before = doc.toJS() as Record<string, Record<string, unknown>>;
  const after = check.toJS() as Record<string, Record<string, unknown>>;
  const expected = { ...before, grant: { ...before["grant"], policy: canonical } };
  if (check.errors.length > 0 || !isDeepStrictEqual(after, expected)) {
    return { ok: false, reason: "the formatted policy could not be written back in the same YAML style" };
  }
  return { ok: true, text: rewritten, changed: true };
}

function scalarText(node: Scalar, value: string, indent: number): string {
  const pad = " ".repeat(indent);
  if (value.includes("\n") || node.type === Scalar.BLOCK_LITERAL || node.type === Scalar.BLOCK_FOLDED) {
    return `|-\n${value
      .split("\n")
      .map((line) => (line.length > 0 ? pad + line : line))
      .join("\n")}\n`;
  }
  if (node.type === Scalar.QUOTE_SINGLE) return `'${value.replace(/'/g, "''")}'`;
  if (node.type === Scalar.PLAIN) {
    const plain = parseDocument(`x: ${value}\n`);
    if (plain.errors.length === 0 && (plain.toJS() as Record<string, unknown>)["x"] === value) return value;
  }
  return JSON.stringify(value);
}
