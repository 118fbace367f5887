// One open document, analysed: its diagnostics, and where its policy text lies within it.
import { checkPolicyFile, compileFamily, type FamilyDiagnostic, mapScalar, SourceText } from "@agent-authority/families";
import { isMap, isPair, isScalar, isSeq, type Document, type Node, Scalar } from "yaml";

export type DocumentKind = "policy" | "family";

/** The language server's own limits, beyond the language's and the family format's. */
export const LSP_LIMITS = Object.freeze({
  /**
   * The largest document analysed, in UTF-8 bytes: four times the largest family (256 KiB), so
   * every document a check accepts, and well past it, gets the format's own diagnostics; a larger
   * one (a log pasted into a `.yaml`, a generated file) gets one diagnostic and no work at all: no
   * parse, no hover, completion, definition or formatting.
   */
  documentBytesMax: 1_048_576,
  /** The longest a change waits for quiet after the last analysis (it waits as long as that analysis took, at most this). */
  analysisQuietMs: 40,
  /** The longest a change waits for quiet before it is analysed anyway. */
  analysisWaitMsMax: 400,
});

/** The code of the one diagnostic of a document over LSP_LIMITS.documentBytesMax. */
export const DOCUMENT_TOO_LARGE = "document-too-large";

/** A policy's text inside a document: the whole `.policy` file, or a family's `grant.policy` value. */
export interface PolicyRegion {
  /** The policy as written, placeholders included. */
  readonly text: string;
  /** The document offset of the policy character at `index` (`text.length` maps past the last). */
  toDocument(index: number): number;
  /** The policy index at a document offset, or undefined when the offset lies outside the policy. */
  toPolicy(offset: number): number | undefined;
}

export interface ParameterDeclaration {
  readonly name: string;
  /** Document offsets of the parameter's key. */
  readonly keyStart: number;
  readonly keyEnd: number;
  /** Its declaration as written in the file, e.g. `{type: int, min: 0, max: 50000}`. */
  readonly declaration: string;
  /** The declaration as data, for a sample value. */
  readonly spec: unknown;
}

export interface Analysis {
  readonly kind: DocumentKind;
  readonly text: string;
  readonly diagnostics: readonly FamilyDiagnostic[];
  readonly policy: PolicyRegion | undefined;
  readonly parameters: readonly ParameterDeclaration[];
  /** The field names under `args` in the family's examples, sorted. */
  readonly exampleArgs: readonly string[];
  /** Over LSP_LIMITS.documentBytesMax: not analysed, and no feature answers for it. */
  readonly tooLarge: boolean;
}

/** Whether `text` is over the limit; its length in UTF-16 units bounds its UTF-8 bytes from below, so most texts need no count. */
function overLimit(text: string): boolean {
  return text.length > LSP_LIMITS.documentBytesMax || Buffer.byteLength(text, "utf8") > LSP_LIMITS.documentBytesMax;
}

/** The kind of a document from its URI: `.policy`, or a family's `.yaml` / `.yml`. */
export function kindOfUri(uri: string): DocumentKind | undefined {
  const path = uri.replace(/[?#].*$/, "").toLowerCase();
  if (path.endsWith(".policy")) return "policy";
  if (path.endsWith(".yaml") || path.endsWith(".yml")) return "family";
  return undefined;
}

/** Analyses a document; never throws for any text. */
export function analyse(uri: string, kind: DocumentKind, text: string): Analysis {
  if (overLimit(text)) {
    const start = { line: 1, column: 1, offset: 0 };
    const diagnostic: FamilyDiagnostic = {
      code: DOCUMENT_TOO_LARGE,
      severity: "error",
      file: uri,
      range: { start, end: start },
      message: `the document has more than ${LSP_LIMITS.documentBytesMax} bytes, the most the language server analyses; it is not checked`,
      help: "run `authority lint` on it, or split it",
    };
    return { kind, text, diagnostics: [diagnostic], policy: undefined, parameters: [], exampleArgs: [], tooLarge: true };
  }
  if (kind === "policy") {
    const diagnostics = checkPolicyFile(new SourceText(uri, text));
    const policy: PolicyRegion = { text, toDocument: (i) => i, toPolicy: (o) => (o >= 0 && o <= text.length ? o : undefined) };
    return { kind, text, diagnostics, policy, parameters: [], exampleArgs: [], tooLarge: false };
  }
  const family = compileFamily(text, uri);
  const doc = family.document;
  return {
    kind,
    text,
    diagnostics: family.diagnostics,
    policy: doc === undefined ? undefined : familyPolicy(text, doc),
    parameters: doc === undefined ? [] : parametersOf(text, doc),
    exampleArgs: doc === undefined ? [] : exampleArgsOf(doc),
    tooLarge: false,
  };
}

function valueAt(node: Node | null | undefined, key: string): Node | null {
  if (!isMap(node)) return null;
  const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === key);
  return (pair?.value as Node | null | undefined) ?? null;
}

function familyPolicy(text: string, doc: Document): PolicyRegion | undefined {
  const node = valueAt(valueAt(doc.contents as Node | null, "grant"), "policy");
  if (!(node instanceof Scalar) || typeof node.value !== "string" || node.range == null) return undefined;
  const value = node.value;
  const map = mapScalar(text, node);
  const offsets = Array.from({ length: value.length + 1 }, (_, i) => map.sourceOffset(i));
  const [start, end] = node.range;
  return {
    text: value,
    toDocument: (i) => offsets[Math.max(0, Math.min(i, value.length))]!,
    toPolicy(offset) {
      if (offset < start || offset > end) return undefined;
      // The last policy character at or before the offset: offsets rise with the index.
      let low = 0;
      let high = value.length;
      while (low < high) {
        const mid = (low + high + 1) >> 1;
        if (offsets[mid]! <= offset) low = mid;
        else high = mid - 1;
      }
      return low;
    },
  };
}

function parametersOf(text: string, doc: Document): ParameterDeclaration[] {
  const node = valueAt(doc.contents as Node | null, "parameters");
  if (!isMap(node)) return [];
  const out: ParameterDeclaration[] = [];
  for (const pair of node.items) {
    if (!isPair(pair) || !isScalar(pair.key) || pair.key.range == null) continue;
    const value = pair.value as Node | null;
    const declaration = value?.range == null ? "" : text.slice(value.range[0], value.range[1]);
    const spec: unknown = value === null ? null : value.toJSON();
    out.push({ name: String(pair.key.value), keyStart: pair.key.range[0], keyEnd: pair.key.range[1], declaration, spec });
  }
  return out;
}

function exampleArgsOf(doc: Document): string[] {
  const examples = valueAt(doc.contents as Node | null, "examples");
  const names = new Set<string>();
  if (!isSeq(examples)) return [];
  for (const example of examples.items) {
    const args = valueAt(valueAt(example as Node, "action"), "args");
    if (!isMap(args)) continue;
    for (const pair of args.items) if (isPair(pair) && isScalar(pair.key)) names.add(String(pair.key.value));
  }
  return [...names].sort();
}
