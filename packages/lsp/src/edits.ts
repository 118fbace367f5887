// Edits the server offers: whole-document formatting, and quick fixes carried by diagnostics.
import { formatFamilySource } from "@agent-authority/families";
import { formatPolicy } from "@agent-authority/language";
import type { CodeAction, Diagnostic, TextEdit } from "vscode-languageserver";
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

/** What a hint's quick fix does: the replacement text for the diagnostic's range, and a title. */
export interface FixData {
  readonly title: string;
  readonly newText: string;
}

export function isFixData(data: unknown): data is FixData {
  return typeof data === "object" && data !== null && typeof (data as FixData).title === "string" && typeof (data as FixData).newText === "string";
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
      edit: { changes: { [uri]: [{ range: diagnostic.range, newText: diagnostic.data.newText }] } },
    });
  }
  return actions;
}
