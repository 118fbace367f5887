// The families package and the language's hidden-character scan, for the tests beside this file.
import { hiddenCharacters } from "@agent-authority/language";

export { compileFamily, formatFamilySource } from "@agent-authority/families";

/** The hidden characters of `text`, as strings. */
export function hiddenCharactersIn(text: string): string[] {
  return hiddenCharacters(text).map((h) => text.slice(h.offset, h.offset + h.width));
}
