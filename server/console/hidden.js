// Hidden characters shown as escapes: every text the console puts on the page passes through here.
// @ts-check

/**
 * Hidden characters (bidi controls, zero-width characters, line separators, odd spaces, tags, blank-looking
 * letters) as escapes a reader can see: `\u202e`. The same set as the policy language's (grammar/src/hidden.ts),
 * so an approver never reads `"cfo@example.com\u202e"` as `"cfo@example.com"`.
 */
// biome-ignore lint/suspicious/noMisleadingCharacterClass: each listed code point is matched alone, combining marks included, on purpose.
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Zs}\u034F\u115F\u1160\u17B4\u17B5\u2800\u3164\uFFA0\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/gu;

/**
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
