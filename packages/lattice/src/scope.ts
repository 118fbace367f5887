// The scope axis: which tool names a grant covers, with `ns.*` entries covering a namespace.

/** True when `entry` is a namespace pattern such as `payments.*` (a non-empty prefix, then `.*`). */
export function isPattern(entry: string): boolean {
  return entry.length > 2 && entry.endsWith(".*");
}

/** The prefix a pattern covers: `payments.*` covers names starting with `payments.`. */
function patternPrefix(entry: string): string {
  return entry.slice(0, -1);
}

/**
 * True when one scope entry covers another entry: an equal entry, or a pattern whose prefix starts
 * the other entry (`a.*` covers `a.b`, `a.b.*` and `a.*`, but not `a` nor `ab.c`).
 */
export function entryCovers(parentEntry: string, childEntry: string): boolean {
  if (parentEntry === childEntry) return true;
  return isPattern(parentEntry) && childEntry.startsWith(patternPrefix(parentEntry));
}

/** True when some entry of `scope` covers the tool name (or entry) `tool`. */
export function toolCovered(tool: string, scope: readonly string[]): boolean {
  for (const entry of scope) if (entryCovers(entry, tool)) return true;
  return false;
}

/** The child entries that no parent entry covers, in the child's order. */
export function uncoveredEntries(child: readonly string[], parent: readonly string[]): string[] {
  return child.filter((entry) => !toolCovered(entry, parent));
}

/** Every entry of `child` is covered by `parent`: the child's tools are a subset of the parent's. */
export function scopeLeq(child: readonly string[], parent: readonly string[]): boolean {
  return uncoveredEntries(child, parent).length === 0;
}

/**
 * The canonical form of a scope: entries covered by another entry dropped, duplicates dropped,
 * sorted by code point. Two scopes cover the same names exactly when their canonical forms are equal.
 */
export function normalizeScope(scope: readonly string[]): string[] {
  const unique = [...new Set(scope)];
  const maximal = unique.filter((entry) => !unique.some((other) => other !== entry && entryCovers(other, entry)));
  return maximal.sort(compareText);
}

/** The names covered by both scopes, in canonical form: the greatest lower bound on this axis. */
export function scopeMeet(a: readonly string[], b: readonly string[]): string[] {
  const fromA = a.filter((entry) => toolCovered(entry, b));
  const fromB = b.filter((entry) => toolCovered(entry, a));
  return normalizeScope([...fromA, ...fromB]);
}

/** A fixed total order on strings (UTF-16 code units), used only to make canonical forms deterministic. */
export function compareText(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}
