// RFC 8785 JSON Canonicalization Scheme: one byte sequence for every JSON value, for hashing.

/** Levels of arrays and objects within each other; deeper input is refused rather than recursed into. */
export const CANONICAL_DEPTH_MAX = 64;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The RFC 8785 canonical form of a JSON value: object members sorted by their names' UTF-16 code
 * units, no whitespace, numbers as ECMAScript prints them (`1e+30`, `4.5`, `-0` as `0`), strings
 * escaped as JSON.stringify escapes them. Members whose value is `undefined` are left out, as JSON
 * leaves them out. Throws on what RFC 8785 has no form for (a non-finite number, a lone surrogate,
 * a value that is no JSON) and on nesting deeper than CANONICAL_DEPTH_MAX.
 */
export function canonicalJson(value: unknown): string {
  return write(value, 0);
}

function write(value: unknown, depth: number): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new TypeError("canonical JSON has no form for a non-finite number");
      return JSON.stringify(value);
    case "string":
      if (LONE_SURROGATE.test(value)) throw new TypeError("canonical JSON has no form for a lone surrogate");
      return JSON.stringify(value);
    case "object":
      break;
    default:
      throw new TypeError(`canonical JSON has no form for a ${typeof value}`);
  }
  if (depth >= CANONICAL_DEPTH_MAX) throw new RangeError(`canonical JSON nests at most ${CANONICAL_DEPTH_MAX} levels`);
  if (Array.isArray(value)) return `[${value.map((item) => write(item, depth + 1)).join(",")}]`;
  const members = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  // UTF-16 code unit order, as RFC 8785 sorts member names.
  members.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${members.map(([name, v]) => `${write(name, depth + 1)}:${write(v, depth + 1)}`).join(",")}}`;
}
