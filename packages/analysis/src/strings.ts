// Strings between JavaScript and the solver, code point by code point (the solver's characters are code points).
import type { Context, Model, Seq } from "z3-solver";
import { ANALYSIS_LIMITS } from "./limits.js";

/** Thrown for what the encoding cannot represent; the question's answer is then `unknown` with its message. */
export class Unsupported extends Error {}

/**
 * The solver's string for `s`: printable ASCII as it is, every other code point (and the
 * backslash) as the solver's `\u{…}` escape, so that no character is read as UTF-8 bytes.
 */
export function stringTerm(c: Context<"main">, s: string): Seq<"main"> {
  let text = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp > ANALYSIS_LIMITS.codePointMax)
      throw new Unsupported(`the string literal holds U+${cp.toString(16).toUpperCase()}, above the solver's characters (U+2FFFF)`);
    text += cp >= 0x20 && cp < 0x7f && cp !== 0x5c ? ch : `\\u{${cp.toString(16)}}`;
  }
  return c.String.val(text);
}

/** The JavaScript string a model gives `s`, read one code point at a time (the solver's printed form is ambiguous). */
export function stringValue(model: Model<"main">, s: Seq<"main">): string {
  const length = Number(model.eval(s.length(), true).toString());
  let out = "";
  for (let i = 0; i < length; i++) {
    const code = Number(model.eval(s.at(i).toCode(), true).toString());
    out += String.fromCodePoint(Math.max(0, code));
  }
  return out;
}
