// Lint of what a reader cannot see: hidden characters in strings and comments, and words that mix scripts.
import { codePointName, escapeHidden, hiddenCharacters } from "@agent-authority/grammar";
import { childrenOf, type Expr } from "./ast.js";
import { quote } from "./format.js";
import { warning, withFix, type Diagnostic } from "./diagnostic.js";

/**
 * A warning for each run of hidden characters in `text` (docs/decisions/0126-hidden-characters.md).
 * A policy that compiles has them only in strings and comments: anywhere else the lexer refused
 * them. The fix writes each as its escape, which means the same in a string and reads the same
 * in a comment. Linear in the text.
 */
export function hiddenCharacterWarnings(text: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  const found = hiddenCharacters(text);
  for (let i = 0; i < found.length; ) {
    const first = found[i]!;
    let end = first.offset + first.width;
    let j = i + 1;
    while (j < found.length && found[j]!.offset === end) end += found[j++]!.width;
    const span = { start: first.offset, end };
    const escaped = escapeHidden(text.slice(span.start, span.end));
    const count = j - i;
    const message =
      count === 1
        ? `hidden character ${codePointName(first.codePoint)} \`${escaped}\`: invisible, or it changes how the text around it reads`
        : `${count} hidden characters from ${codePointName(first.codePoint)} \`${escaped}\`: invisible, or they change how the text around them reads`;
    const hint = "if it is meant, write it as its escape, which shows it; otherwise delete it";
    out.push(withFix(warning("hidden-character", message, span, hint), { title: `write \`${escaped}\``, span, text: escaped }));
    i = j;
  }
  return out;
}

/** Alphabets whose letters pass for one another (`а` Cyrillic, `a` Latin): one word should not mix them. */
const LOOKALIKE_SCRIPTS: readonly (readonly [string, RegExp])[] = [
  ["Latin", /\p{Script=Latin}/u],
  ["Cyrillic", /\p{Script=Cyrillic}/u],
  ["Greek", /\p{Script=Greek}/u],
  ["Armenian", /\p{Script=Armenian}/u],
  ["Cherokee", /\p{Script=Cherokee}/u],
  ["Georgian", /\p{Script=Georgian}/u],
  ["Coptic", /\p{Script=Coptic}/u],
] as const;

/** The look-alike scripts of a word's letters, in first-seen order. */
function scriptsOf(word: string): string[] {
  const scripts: string[] = [];
  for (const letter of word) {
    const script = LOOKALIKE_SCRIPTS.find(([, pattern]) => pattern.test(letter))?.[0];
    if (script !== undefined && !scripts.includes(script)) scripts.push(script);
  }
  return scripts;
}

/**
 * A warning for each string literal with a word that mixes look-alike scripts, such as
 * `"pаyments.transfer"` with a Cyrillic `а`: it compares unequal to the name it imitates, so a
 * condition on it silently never holds, or an approver list admits someone other than it seems.
 * Names and functions are ASCII by the grammar, so strings are where this can hide.
 */
export function mixedScriptWarnings(root: Expr): Diagnostic[] {
  const out: Diagnostic[] = [];
  const stack: Expr[] = [root];
  while (stack.length > 0) {
    const e = stack.pop()!;
    stack.push(...childrenOf(e));
    if (e.kind !== "string") continue;
    for (const word of e.value.match(/[\p{L}\p{M}]+/gu) ?? []) {
      const scripts = scriptsOf(word);
      if (scripts.length < 2) continue;
      out.push(
        warning(
          "mixed-script",
          `string ${quote(e.value)} mixes ${scripts.join(" and ")} letters in the word ${quote(word)}`,
          e.span,
          "letters of one script that look like another's make a different name; write the word in one script",
        ),
      );
      break;
    }
  }
  return out;
}
