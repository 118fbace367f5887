// YAML flow collections left open: the `[` or `{` an "end with a ]" error is really about.
import { CST, Parser, type YAMLError } from "yaml";

/** The offset and bracket of every `[` or `{` whose flow collection has no closing bracket. */
export function unclosedFlowOpeners(text: string): { offset: number; bracket: "[" | "{" }[] {
  const out: { offset: number; bracket: "[" | "{" }[] = [];
  for (const token of new Parser().parse(text)) {
    if (token.type !== "document") continue;
    CST.visit(token, (item) => {
      const value = item.value;
      if (value?.type !== "flow-collection") return;
      const bracket = value.start.source === "[" ? "[" : "{";
      const closing = bracket === "[" ? "flow-seq-end" : "flow-map-end";
      if (!value.end.some((t) => t.type === closing)) out.push({ offset: value.start.offset, bracket });
    });
  }
  return out;
}

export interface PlacedError {
  readonly error: YAMLError;
  readonly start: number;
  readonly end: number;
  readonly help?: string;
}

/**
 * The YAML parser reports a flow collection left open where it notices, at the next key, often
 * lines below the bracket, and then reads the rest of the file as the collection's content, which
 * yields an error per line. So when a bracket is left open, errors before the first open bracket
 * stand, and everything after it becomes one error at the innermost open bracket.
 */
export function placeFlowErrors(text: string, errors: readonly YAMLError[]): PlacedError[] {
  const placed = errors.map((error) => ({ error, start: error.pos[0], end: error.pos[1] }));
  if (!errors.some((e) => /end with an? [\]}]/.test(e.message))) return placed;
  const openers = unclosedFlowOpeners(text);
  const first = openers[0];
  const innermost = openers.at(-1);
  if (first === undefined || innermost === undefined) return placed;
  const closer = innermost.bracket === "[" ? "]" : "}";
  const before = placed.filter((p) => p.start < first.offset);
  const after = errors.filter((e) => e.pos[0] >= first.offset);
  const about = after.find((e) => e.message.includes(`end with a ${closer}`)) ?? after[0];
  if (about === undefined) return placed;
  const help = `this \`${innermost.bracket}\` is never closed: add \`${closer}\` where the collection ends`;
  return [...before, { error: about, start: innermost.offset, end: innermost.offset + 1, help }];
}
