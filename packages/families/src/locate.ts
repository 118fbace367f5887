// Finds the YAML node behind a JSON path, so that errors about values point into the file.
import { type Document, isMap, isPair, isScalar, isSeq, type Node, Scalar } from "yaml";
import type { SourceRange } from "./diagnostics.js";
import type { SourceText } from "./source.js";

export type JsonPath = readonly (string | number)[];

export interface Located {
  /** The value node at the path, or the deepest existing ancestor. */
  readonly node: Node | null;
  /** The key node when the path's last step is a map key that exists. */
  readonly key: Node | null;
  /** True when the whole path exists. */
  readonly exact: boolean;
}

export function locate(doc: Document, path: JsonPath): Located {
  let node: Node | null = doc.contents as Node | null;
  let key: Node | null = null;
  for (const step of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(step));
      if (pair === undefined) return { node, key, exact: false };
      key = pair.key as Node;
      node = (pair.value as Node | null) ?? null;
      if (node === null) return { node: key, key, exact: true };
    } else if (isSeq(node) && typeof step === "number") {
      const item = node.items[step] as Node | undefined;
      if (item === undefined) return { node, key, exact: false };
      key = null;
      node = item;
    } else {
      return { node, key, exact: false };
    }
  }
  return { node, key, exact: true };
}

/** The range of a node's value (without trailing comments), or of the whole file when absent. */
export function nodeRange(source: SourceText, node: Node | null): SourceRange {
  if (node === null || node.range == null) return source.range(0, 0);
  const [start, valueEnd] = node.range;
  return source.range(start, valueEnd);
}

/** The range an error about the value at `path` should point at. */
export function rangeOf(source: SourceText, doc: Document, path: JsonPath, at: "value" | "key" = "value"): SourceRange {
  const found = locate(doc, path);
  if (at === "key" && found.exact && found.key !== null) return nodeRange(source, found.key);
  if (!found.exact && found.key !== null) return nodeRange(source, found.key);
  return nodeRange(source, found.node);
}

export function scalarAt(doc: Document, path: JsonPath): Scalar | null {
  const found = locate(doc, path);
  return found.exact && found.node instanceof Scalar ? found.node : null;
}
