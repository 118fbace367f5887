// Hover, completion and go to definition over an analysed document.
import type { CompletionItem, Hover, Location, Position } from "vscode-languageserver";
import { CompletionItemKind, MarkupKind } from "vscode-languageserver";
import type { TextDocument } from "vscode-languageserver-textdocument";
import { builtinDoc, FUNCTIONS, VARIABLES } from "./builtins.js";
import { nodeAt, typeWords } from "./policy-view.js";
import type { Analysis, ParameterDeclaration } from "./source.js";
import { formatExpr } from "@agent-authority/language";

/** The `${name}` placeholder around a document offset, in any string of a family. */
function placeholderAt(text: string, offset: number): { name: string; start: number; end: number } | undefined {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  const lineEnd = text.indexOf("\n", offset);
  const line = text.slice(lineStart, lineEnd === -1 ? text.length : lineEnd);
  for (const match of line.matchAll(/\$\{([^}\n]*)\}?/g)) {
    const start = lineStart + match.index;
    const end = start + match[0].length;
    if (offset >= start && offset <= end) return { name: match[1]!, start, end };
  }
  return undefined;
}

function parameterHover(p: ParameterDeclaration): string {
  return `**parameter \`${p.name}\`**\n\n\`\`\`yaml\n${p.name}: ${p.declaration}\n\`\`\``;
}

function markdown(value: string, document: TextDocument, start: number, end: number): Hover {
  return { contents: { kind: MarkupKind.Markdown, value }, range: { start: document.positionAt(start), end: document.positionAt(end) } };
}

/** The hover at a position: a parameter's declaration, a built-in's documentation, or a type. */
export function hover(analysis: Analysis, document: TextDocument, position: Position): Hover | null {
  const offset = document.offsetAt(position);
  const placeholder = analysis.kind === "family" ? placeholderAt(analysis.text, offset) : undefined;
  if (placeholder !== undefined) {
    const declared = analysis.parameters.find((p) => p.name === placeholder.name);
    const text = declared === undefined ? `\`${placeholder.name}\` is not a parameter of this family` : parameterHover(declared);
    return markdown(text, document, placeholder.start, placeholder.end);
  }
  const policy = analysis.policy;
  const index = policy?.toPolicy(offset);
  if (policy === undefined || index === undefined) return null;
  const node = nodeAt(policy.text, analysis.parameters, index);
  if (node === undefined) return null;
  const range = [policy.toDocument(node.start), policy.toDocument(node.end)] as const;
  const named = node.expr.kind === "name" ? node.expr.name : node.expr.kind === "call" ? node.expr.callee : undefined;
  const builtin = named === undefined ? undefined : builtinDoc(named);
  const typeLine = `\`${formatExpr(node.expr)}\`: ${typeWords(node.type)}`;
  const value = builtin === undefined ? typeLine : `\`\`\`\n${builtin.signature}\n\`\`\`\n\n${builtin.doc}\n\n${typeLine}`;
  return markdown(value, document, range[0], range[1]);
}

/** Completion items at a position: parameter names inside `${`, `args` fields after `args.`, else names and functions. */
export function complete(analysis: Analysis, document: TextDocument, position: Position): CompletionItem[] {
  const offset = document.offsetAt(position);
  const before = analysis.text.slice(Math.max(0, offset - 200), offset);
  if (analysis.kind === "family" && /\$\{[a-z0-9_]*$/.test(before)) {
    return analysis.parameters.map((p) => ({ label: p.name, kind: CompletionItemKind.Variable, detail: `parameter: ${p.declaration}` }));
  }
  if (analysis.policy?.toPolicy(offset) === undefined) return [];
  if (/\bargs\.[A-Za-z0-9_]*$/.test(before)) {
    return analysis.exampleArgs.map((name) => ({
      label: name,
      kind: CompletionItemKind.Field,
      detail: "seen under `args` in this family's examples",
    }));
  }
  const variables = VARIABLES.map((v) => ({ label: v.name, kind: CompletionItemKind.Variable, detail: v.signature, documentation: v.doc }));
  const functions = FUNCTIONS.map((f) => ({ label: f.name, kind: CompletionItemKind.Function, detail: f.signature, documentation: f.doc }));
  const keywords = ["true", "false", "null", "in"].map((k) => ({ label: k, kind: CompletionItemKind.Keyword }));
  return [...variables, ...functions, ...keywords];
}

/** Go to definition: from a `${name}` placeholder to the parameter's key under `parameters`. */
export function definition(analysis: Analysis, document: TextDocument, position: Position): Location | null {
  if (analysis.kind !== "family") return null;
  const placeholder = placeholderAt(analysis.text, document.offsetAt(position));
  const declared = placeholder === undefined ? undefined : analysis.parameters.find((p) => p.name === placeholder.name);
  if (declared === undefined) return null;
  return { uri: document.uri, range: { start: document.positionAt(declared.keyStart), end: document.positionAt(declared.keyEnd) } };
}
