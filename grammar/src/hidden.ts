// Hidden characters (Trojan Source): what a reader cannot see, or sees as something else, in policy text.

/**
 * INVARIANT (hidden-shown): a character matched here is never printed raw by the formatter or in
 * residual text; it is escaped (`\u202e` in a string, the same notation in a comment) so that
 * what an author or an approver reads is what the policy says. The set: controls (C0 but tab,
 * line feed and carriage return where the grammar allows them, DEL, C1 with U+0085), format
 * characters (bidi embeddings, overrides, isolates and marks, zero-width space and joiners, word
 * joiner, invisible operators, the byte-order mark, tags), the line and paragraph separators
 * U+2028 and U+2029, every space but U+0020, lone surrogates, and the invisible letters and marks
 * that render as nothing (combining grapheme joiner, Hangul fillers, Khmer inherent vowels,
 * variation selectors, U+2800 BRAILLE PATTERN BLANK, which renders as an empty cell).
 */
// biome-ignore lint/suspicious/noMisleadingCharacterClass: each listed code point is matched alone, combining marks included, on purpose.
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Zs}\u034F\u115F\u1160\u17B4\u17B5\u2800\u3164\uFFA0\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/u;

/**
 * The set's pattern source, for every other place that shows text to a reader: the approvals
 * console (server/console/hidden.js) holds the same source, and a test holds the two equal.
 */
export const HIDDEN_PATTERN_SOURCE = HIDDEN.source;

/** The line terminators editors honour besides line feed and carriage return: a `//` comment ends at each. */
export const EXTRA_LINE_TERMINATORS = ["\u0085", "\u2028", "\u2029"] as const;

/** Whether the code point is hidden in the sense above; the plain space, tab, line feed and carriage return are not. */
export function isHidden(codePoint: number): boolean {
  if (codePoint === 0x20 || codePoint === 0x09 || codePoint === 0x0a || codePoint === 0x0d) return false;
  return HIDDEN.test(String.fromCodePoint(codePoint));
}

/** `U+202E`, as messages name a character. */
export function codePointName(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** Each hidden character of `text` with its offset (UTF-16) and width; in source order. */
export function hiddenCharacters(text: string): { readonly offset: number; readonly codePoint: number; readonly width: number }[] {
  const out: { offset: number; codePoint: number; width: number }[] = [];
  for (let i = 0; i < text.length; ) {
    const codePoint = text.codePointAt(i)!;
    const width = codePoint > 0xffff ? 2 : 1;
    if (isHidden(codePoint)) out.push({ offset: i, codePoint, width });
    i += width;
  }
  return out;
}

/**
 * `text` with each hidden character written as an escape a reader can see: `\u202e` (four hex
 * digits), and each UTF-16 unit of a character beyond the BMP likewise (`\udb40\udc01`), which is
 * also how a policy string spells it. Tab stays as it is. Linear in the text.
 */
export function escapeHidden(text: string): string {
  let out = "";
  let from = 0;
  for (const { offset, width } of hiddenCharacters(text)) {
    out += text.slice(from, offset);
    for (let k = 0; k < width; k++)
      out += `\\u${text
        .charCodeAt(offset + k)
        .toString(16)
        .padStart(4, "0")}`;
    from = offset + width;
  }
  return out + text.slice(from);
}
