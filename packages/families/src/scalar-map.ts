// Maps offsets inside a YAML scalar's value back to offsets in the YAML source.
//
// A policy is a YAML string; the language reports spans as offsets into that string. To point at
// the right column of the file, each value offset is mapped through the scalar's source text,
// following the YAML 1.2 rules for its style: plain and quoted (with line folding and, for
// double quotes, escapes), literal `|` and folded `>` block scalars. The mapping is rebuilt from
// the source and checked against the parsed value; where they disagree (a construct this module
// does not model, such as an explicit indentation indicator), `exact` is false and every offset
// maps to the start of the scalar, so a position is never wrong, only less precise.
import { Scalar } from "yaml";

export interface ScalarOffsetMap {
  /** True when every value offset maps to its own source offset. */
  readonly exact: boolean;
  /** The source offset of the value character at `index`; `index` = value length maps past the last one. */
  sourceOffset(index: number): number;
}

interface Piece {
  readonly text: string;
  readonly at: number;
}

export function mapScalar(source: string, node: Scalar): ScalarOffsetMap {
  const range = node.range;
  const value = typeof node.value === "string" ? node.value : String(node.value);
  if (!range) return fallback(0);
  const [start, valueEnd] = range;
  let pieces: Piece[] | undefined;
  switch (node.type) {
    case Scalar.PLAIN:
      pieces = foldFlow(source, start, valueEnd, "plain");
      break;
    case Scalar.QUOTE_SINGLE:
      pieces = foldFlow(source, start + 1, valueEnd - 1, "single");
      break;
    case Scalar.QUOTE_DOUBLE:
      pieces = foldFlow(source, start + 1, valueEnd - 1, "double");
      break;
    case Scalar.BLOCK_LITERAL:
    case Scalar.BLOCK_FOLDED:
      pieces = blockPieces(source, start, valueEnd, node.type === Scalar.BLOCK_FOLDED);
      break;
    default:
      pieces = undefined;
  }
  if (pieces === undefined) return fallback(start);
  const built = pieces.map((p) => p.text).join("");
  // Block scalars may keep or clip trailing line breaks; everything before them must agree.
  const agrees = built === value || (value.startsWith(built) && /^\n*$/.test(value.slice(built.length)));
  if (!agrees) return fallback(start);
  const offsets: number[] = [];
  for (const piece of pieces) for (let i = 0; i < piece.text.length; i += 1) offsets.push(piece.at);
  const end = pieces.length > 0 ? pieces[pieces.length - 1]!.at + 1 : start;
  return {
    exact: true,
    sourceOffset(index: number): number {
      if (index < offsets.length) return offsets[Math.max(0, index)]!;
      return end;
    },
  };
}

function fallback(start: number): ScalarOffsetMap {
  return { exact: false, sourceOffset: () => start };
}

/** Splits [from, to) into lines, each with its source offset. */
function splitLines(source: string, from: number, to: number): { text: string; at: number }[] {
  const lines: { text: string; at: number }[] = [];
  let at = from;
  for (let i = from; i <= to; i += 1) {
    if (i === to || source[i] === "\n") {
      lines.push({ text: source.slice(at, i).replace(/\r$/, ""), at });
      at = i + 1;
    }
  }
  return lines;
}

/**
 * Flow scalars: trailing and leading white space around a line break is dropped, one line break
 * becomes a space, and n > 1 line breaks become n - 1 newlines. Quoted styles then unescape.
 */
function foldFlow(source: string, from: number, to: number, style: "plain" | "single" | "double"): Piece[] | undefined {
  if (to < from) return undefined;
  const lines = splitLines(source, from, to);
  const pieces: Piece[] = [];
  let pendingBreaks: number[] = [];
  let escapedBreak = false;
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    const first = i === 0;
    const last = i === lines.length - 1;
    let begin = 0;
    if (!first) while (begin < line.text.length && /[ \t]/.test(line.text[begin]!)) begin += 1;
    let end = line.text.length;
    let escapesBreak = false;
    if (!last) {
      if (style === "double" && endsWithOddBackslashes(line.text)) {
        escapesBreak = true;
        end -= 1;
      } else {
        while (end > begin && /[ \t]/.test(line.text[end - 1]!)) end -= 1;
        // An escaped space or tab (`\ `) before the break is content, not trailing white space.
        if (style === "double" && end < line.text.length && endsWithOddBackslashes(line.text.slice(0, end))) end += 1;
      }
    }
    const content = line.text.slice(begin, end);
    if (!first && !last && content.length === 0 && !escapesBreak) {
      pendingBreaks.push(line.at);
      continue;
    }
    if (!first && !escapedBreak) {
      if (pendingBreaks.length === 0) pieces.push({ text: " ", at: line.at - 1 });
      else for (const at of pendingBreaks) pieces.push({ text: "\n", at });
    }
    pendingBreaks = [];
    escapedBreak = escapesBreak;
    const unescaped = unescapeContent(content, line.at + begin, style);
    if (unescaped === undefined) return undefined;
    pieces.push(...unescaped);
  }
  return pieces;
}

function endsWithOddBackslashes(text: string): boolean {
  let count = 0;
  for (let i = text.length - 1; i >= 0 && text[i] === "\\"; i -= 1) count += 1;
  return count % 2 === 1;
}

const simpleEscapes: Readonly<Record<string, string>> = {
  "0": "\0",
  a: "\x07",
  b: "\b",
  t: "\t",
  "\t": "\t",
  n: "\n",
  v: "\v",
  f: "\f",
  r: "\r",
  e: "\x1b",
  " ": " ",
  '"': '"',
  "/": "/",
  "\\": "\\",
  N: "\x85",
  _: "\xa0",
  L: "\u2028",
  P: "\u2029",
};

function unescapeContent(content: string, at: number, style: "plain" | "single" | "double"): Piece[] | undefined {
  const pieces: Piece[] = [];
  for (let i = 0; i < content.length; i += 1) {
    const ch = content[i]!;
    if (style === "single" && ch === "'" && content[i + 1] === "'") {
      pieces.push({ text: "'", at: at + i });
      i += 1;
    } else if (style === "double" && ch === "\\") {
      const next = content[i + 1];
      if (next === undefined) return undefined;
      const hexLength = next === "x" ? 2 : next === "u" ? 4 : next === "U" ? 8 : 0;
      if (hexLength > 0) {
        const code = Number.parseInt(content.slice(i + 2, i + 2 + hexLength), 16);
        if (Number.isNaN(code)) return undefined;
        pieces.push({ text: String.fromCodePoint(code), at: at + i });
        i += 1 + hexLength;
      } else {
        const replacement = simpleEscapes[next];
        if (replacement === undefined) return undefined;
        pieces.push({ text: replacement, at: at + i });
        i += 1;
      }
    } else {
      pieces.push({ text: ch, at: at + i });
    }
  }
  return pieces;
}

/** Block scalars with an auto-detected indentation; an explicit indentation indicator is not modelled. */
function blockPieces(source: string, start: number, end: number, folded: boolean): Piece[] | undefined {
  const headerEnd = source.indexOf("\n", start);
  if (headerEnd < 0 || headerEnd >= end) return [];
  const header = source.slice(start, headerEnd).replace(/#.*$/, "").trim();
  if (/[1-9]/.test(header)) return undefined;
  const lines = splitLines(source, headerEnd + 1, end);
  // Indentation is that of the first line holding more than spaces; a line of at most that many
  // spaces is empty, while any other white space after the indentation is content.
  const firstContent = lines.find((l) => !/^ *$/.test(l.text));
  if (firstContent === undefined) return [];
  const indent = /^ */.exec(firstContent.text)![0].length;
  const pieces: Piece[] = [];
  let previous: { moreIndented: boolean } | undefined;
  let emptyBreaks: number[] = [];
  for (const line of lines) {
    if (/^ *$/.test(line.text) && line.text.length <= indent) {
      emptyBreaks.push(previous === undefined ? line.at : line.at - 1);
      continue;
    }
    const text = line.text.slice(indent);
    const moreIndented = /^[ \t]/.test(text);
    if (previous === undefined) {
      // Empty lines before the first content line are kept as line breaks in both styles.
      for (const at of emptyBreaks) pieces.push({ text: "\n", at });
    } else {
      const breakAt = line.at - 1;
      if (!folded || previous.moreIndented || moreIndented) {
        pieces.push({ text: "\n", at: emptyBreaks[0] ?? breakAt });
        for (const at of emptyBreaks) pieces.push({ text: "\n", at });
      } else if (emptyBreaks.length === 0) {
        pieces.push({ text: " ", at: breakAt });
      } else {
        for (const at of emptyBreaks) pieces.push({ text: "\n", at });
      }
    }
    emptyBreaks = [];
    for (let i = 0; i < text.length; i += 1) pieces.push({ text: text[i]!, at: line.at + indent + i });
    previous = { moreIndented };
  }
  return pieces;
}
