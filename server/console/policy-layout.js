// Lays a policy expression out for reading: one clause per line at each `&&` and `||`, indented by
// nesting. It only moves whitespace outside string literals, so the text a human approves is the text
// the server stores; the canonical formatter is the language package's (`authority fmt`).
// @ts-check

const CLAUSES_MAX = 512;

/**
 * Splits into tokens that keep string literals whole; whitespace between tokens is dropped.
 * @param {string} text
 */
function tokens(text) {
  /** @type {string[]} */
  const out = [];
  let i = 0;
  while (i < text.length && out.length < 8192) {
    const c = text[i];
    if (/\s/.test(c)) {
      i += 1;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === "\\" ? 2 : 1;
      out.push(text.slice(i, j + 1));
      i = j + 1;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (["&&", "||", "==", "!=", "<=", ">="].includes(two)) {
      out.push(two);
      i += 2;
      continue;
    }
    if ("()[],<>!+-*".includes(c)) {
      out.push(c);
      i += 1;
      continue;
    }
    let j = i;
    while (j < text.length && !/[\s"'()[\],<>!=&|+\-*]/.test(text[j])) j += 1;
    if (j === i) j = i + 1;
    out.push(text.slice(i, j));
    i = j;
  }
  return out;
}

/**
 * The tokens as text, spaced as a reader expects.
 * @param {readonly string[]} list
 */
function joinTokens(list) {
  let s = "";
  for (const t of list) {
    const prev = s.at(-1);
    const tight =
      s === "" ||
      prev === "(" ||
      prev === "[" ||
      prev === "!" ||
      t === ")" ||
      t === "]" ||
      t === "," ||
      (t === "(" && /[A-Za-z0-9_]$/.test(s) && !/(^|[^A-Za-z0-9_.])in$/.test(s));
    s += (tight ? "" : " ") + t;
  }
  return s;
}

/**
 * The policy as lines, or the text unchanged when it is short or cannot be laid out.
 * @param {unknown} text
 */
export function layoutPolicy(text) {
  if (typeof text !== "string") return "true";
  if (text.length <= 60) return text;
  const list = tokens(text);
  /** @type {string[]} */
  const lines = [];
  /** @type {string[]} */
  let current = [];
  let depth = 0;
  let lineDepth = 0;
  for (const t of list) {
    if (t === "(" || t === "[") depth += 1;
    if (t === ")" || t === "]") depth = Math.max(0, depth - 1);
    if ((t === "&&" || t === "||") && depth <= 1 && lines.length < CLAUSES_MAX) {
      lines.push("  ".repeat(lineDepth) + joinTokens(current));
      current = [t];
      lineDepth = depth;
      continue;
    }
    current.push(t);
  }
  lines.push("  ".repeat(lineDepth) + joinTokens(current));
  return lines.join("\n");
}

// Hidden characters are shown as escapes by hidden.js, which every text the console shows goes through.
export { showHidden } from "./hidden.js";
