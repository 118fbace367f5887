// A family as it appears inside the text a client sent (a JSON body, or a member of one), so that
// compiling it reports positions in that text, not in a copy the server wrote out again.

import { isNode } from "yaml";
import { parseYamlDocument } from "./yaml-document.js";

/**
 * The text with everything outside the value at `path` blanked (spaces, line breaks kept): the
 * value keeps its exact lines and columns, and compiles as the only thing in the document.
 * Undefined when the text does not parse or holds no such value.
 */
export function familyTextAt(text: string, path: readonly string[]): string | undefined {
  const doc = parseYamlDocument(text, { prettyErrors: false, strict: true });
  if (doc.errors.length > 0) return undefined;
  const node = path.length === 0 ? doc.contents : doc.getIn(path, true);
  if (!isNode(node) || node.range === undefined || node.range === null) return undefined;
  const [start, end] = node.range;
  const blank = (part: string): string => part.replace(/[^\n]/g, " ");
  return blank(text.slice(0, start)) + text.slice(start, end) + blank(text.slice(end));
}
