// Hidden characters as escapes a reader can see: every text the console shows passes through here.
// @ts-check

/**
 * Hidden characters (controls, bidi controls, zero-width characters, line separators, odd spaces,
 * tags, and letters that render as an empty cell such as U+2800 BRAILLE PATTERN BLANK). The same
 * set as the policy language's, `HIDDEN_PATTERN_SOURCE` in grammar/src/hidden.ts; a test holds the
 * two equal. An approver never reads `"cfo@example.com\u202e"` as `"cfo@example.com"`, nor an
 * agent's `{"iban": "DE89…\u202e…"}` as another account.
 */
export const HIDDEN =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: each listed code point is matched alone, combining marks included, on purpose.
  /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Zs}\u034F\u115F\u1160\u17B4\u17B5\u2800\u3164\uFFA0\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/gu;

/**
 * The text with each hidden character written as its escape (`\u202e`, each UTF-16 unit of one
 * beyond the BMP likewise); the plain space, tab, line feed and carriage return stay. Idempotent:
 * an escape is plain ASCII. A value that is not a string is answered as it is.
 * @template T
 * @param {T} text
 * @returns {T | string}
 */
export function showHidden(text) {
  if (typeof text !== "string") return text;
  return text.replace(HIDDEN, (c) =>
    c === " " || c === "\t" || c === "\n" || c === "\r"
      ? c
      : Array.from({ length: c.length }, (_, k) => `\\u${c.charCodeAt(k).toString(16).padStart(4, "0")}`).join(""),
  );
}
