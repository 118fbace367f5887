// The policy axis: a grant's policy as a list of conjuncts, and the conjunction of several policies.
//
// The lattice never evaluates a policy. It orders policies syntactically: a policy made of the
// conjuncts of another plus more is narrower, which is sound (a conjunction implies each of its
// parts) without deciding implication between arbitrary expressions.

import { LATTICE_LIMITS } from "./limits.js";

/**
 * Splits a policy text into its top-level conjuncts: `a && (b && c)` gives `a`, `b`, `c`. Outer
 * parentheses around a whole conjunct are removed; string literals and brackets are respected.
 * A text the scanner cannot split (unbalanced, or no `&&` at top level) is one conjunct. `null`,
 * blank text and the conjunct `true` contribute nothing.
 */
export function policyConjuncts(policy: string | null): string[] {
  if (policy === null) return [];
  const out: string[] = [];
  splitInto(policy.trim(), out, 0);
  return out;
}

function splitInto(text: string, out: string[], depth: number): void {
  const stripped = stripOuterParens(text);
  if (stripped.length === 0 || stripped === "true") return;
  const splittable = depth < LATTICE_LIMITS.conjunctDepthMax && stripped.length <= LATTICE_LIMITS.policyScanCharsMax;
  const parts = splittable ? topLevelAndParts(stripped) : null;
  if (parts === null || parts.length === 1) {
    out.push(stripped);
    return;
  }
  for (const part of parts) splitInto(part.trim(), out, depth + 1);
}

/** Removes parentheses that enclose the whole text, as many levels as there are. */
function stripOuterParens(text: string): string {
  let current = text.trim();
  while (current.startsWith("(") && current.endsWith(")") && closingIndex(current, 0) === current.length - 1) {
    current = current.slice(1, -1).trim();
  }
  return current;
}

/** The index of the bracket closing the one opened at `open`, or -1 when unbalanced. */
function closingIndex(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i += 1) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'") {
      i = stringEnd(text, i);
      if (i < 0) return -1;
    } else if (ch === "(" || ch === "[") depth += 1;
    else if (ch === ")" || ch === "]") {
      depth -= 1;
      if (depth === 0) return i;
      if (depth < 0) return -1;
    }
  }
  return -1;
}

/** The index of the quote closing the string literal opened at `open`, or -1. */
function stringEnd(text: string, open: number): number {
  const quote = text[open];
  for (let i = open + 1; i < text.length; i += 1) {
    if (text[i] === "\\") i += 1;
    else if (text[i] === quote) return i;
  }
  return -1;
}

/** The parts between top-level `&&`, or null when brackets or strings are unbalanced. */
function topLevelAndParts(text: string): string[] | null {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'") {
      i = stringEnd(text, i);
      if (i < 0) return null;
    } else if (ch === "(" || ch === "[") depth += 1;
    else if (ch === ")" || ch === "]") {
      depth -= 1;
      if (depth < 0) return null;
    } else if (depth === 0 && ch === "&" && text[i + 1] === "&") {
      parts.push(text.slice(start, i));
      start = i + 2;
      i += 1;
    } else if (depth === 0 && ch === "|" && text[i + 1] === "|") {
      // `a && b || c` is `(a && b) || c`: a top-level `||` makes the whole text one conjunct.
      return [text];
    }
  }
  if (depth !== 0) return null;
  parts.push(text.slice(start));
  return parts;
}

/** The conjunction of several conjunct lists: first occurrences kept, in order. */
export function unionConjuncts(lists: readonly (readonly string[])[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const list of lists) {
    for (const conjunct of list) {
      if (!seen.has(conjunct)) {
        seen.add(conjunct);
        out.push(conjunct);
      }
    }
  }
  return out;
}

/** The policy text of a conjunct list: `null` (the policy `true`) when empty, each part parenthesised. */
export function conjunctionText(conjuncts: readonly string[]): string | null {
  if (conjuncts.length === 0) return null;
  if (conjuncts.length === 1) return conjuncts[0]!;
  return conjuncts.map((c) => `(${c})`).join(" && ");
}

/**
 * The conjunction of policies in the given order, as one text: `null` when every one is `null`.
 * A delegation chain's effective policy is this, root first.
 */
export function conjoinPolicyText(policies: readonly (string | null)[]): string | null {
  return conjunctionText(unionConjuncts(policies.map(policyConjuncts)));
}

/** The child's policy is narrower or equal: it contains every conjunct of the parent's. */
export function policyLeq(child: string | null, parent: string | null): boolean {
  const own = new Set(policyConjuncts(child));
  return policyConjuncts(parent).every((conjunct) => own.has(conjunct));
}
