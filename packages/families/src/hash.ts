// The content hash that pins a family's reviewed content: SHA-256 over a canonical JSON text.
import { createHash } from "node:crypto";

/**
 * Canonical JSON: object keys sorted by code unit, no white space, integers and strings as
 * `JSON.stringify` writes them. Family content holds only strings, safe integers, booleans, null,
 * arrays and objects, for which this is the JSON Canonicalization Scheme (RFC 8785).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) throw new TypeError("canonicalJson: non-finite number");
    if (value === undefined) throw new TypeError("canonicalJson: undefined");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * The fields a reviewer approves: what the family does and the examples that show it. `version`,
 * `reviewed_by` and `content_hash` describe the review and are not part of the hashed content,
 * so the same content under a new version number is recognisably the same (see decision 0401).
 */
export const hashedFields = ["id", "description", "parameters", "grant", "approval", "examples"] as const;

/** `sha256:<64 hex digits>` over the canonical JSON of the hashed fields of a family body. */
export function familyContentHash(body: Readonly<Record<string, unknown>>): string {
  const content: Record<string, unknown> = {};
  for (const field of hashedFields) if (body[field] !== undefined) content[field] = body[field];
  return `sha256:${sha256Hex(canonicalJson(content))}`;
}
