// Edits the server offers: whole-document formatting, and quick fixes carried by diagnostics.
import { formatFamilySource } from "@agent-authority/families";
import { formatPolicy } from "@agent-authority/language";
import type { CodeAction, Diagnostic, Position, Range, TextEdit } from "vscode-languageserver";
import { CodeActionKind } from "vscode-languageserver";
import type { TextDocument } from "vscode-languageserver-textdocument";
import type { DocumentKind } from "./source.js";

/** The canonical form of a document as one edit, or no edit when it is canonical or cannot be formatted. */
export function formatDocument(kind: DocumentKind, document: TextDocument): TextEdit[] {
  const text = document.getText();
  let formatted: string | undefined;
  if (kind === "policy") {
    const result = formatPolicy(text);
    // A policy file ends with one line break, as `authority fmt` writes it.
    if (result.ok) formatted = `${result.text}\n`;
  } else {
    const result = formatFamilySource(text);
    if (result.ok && result.changed) formatted = result.text;
  }
  if (formatted === undefined || formatted === text) return [];
  return [{ range: { start: document.positionAt(0), end: document.positionAt(text.length) }, newText: formatted }];
}

/** What a hint's quick fix does, carried in the diagnostic's `data`: a title and one edit. */
export interface FixData {
  readonly title: string;
  readonly newText: string;
  readonly range: Range;
}

/** The editor sends `data` back as it received it; it is still checked, as any input is. */
export function isFixData(data: unknown): data is FixData {
  if (typeof data !== "object" || data === null) return false;
  const d = data as Partial<FixData>;
  const position = (p: unknown): boolean =>
    typeof p === "object" && p !== null && Number.isInteger((p as Position).line) && Number.isInteger((p as Position).character);
  return (
    typeof d.title === "string" &&
    typeof d.newText === "string" &&
    typeof d.range === "object" &&
    d.range !== null &&
    position(d.range.start) &&
    position(d.range.end)
  );
}

/** One quick fix per diagnostic in the request that carries a fix. */
export function quickFixes(uri: string, diagnostics: readonly Diagnostic[]): CodeAction[] {
  const actions: CodeAction[] = [];
  for (const diagnostic of diagnostics) {
    if (!isFixData(diagnostic.data)) continue;
    actions.push({
      title: diagnostic.data.title,
      kind: CodeActionKind.QuickFix,
      diagnostics: [diagnostic],
      isPreferred: true,
      edit: { changes: { [uri]: [{ range: diagnostic.data.range, newText: diagnostic.data.newText }] } },
    });
  }
  return actions;
}
