// The language server: documents kept in sync with the editor, each analysed on every change.
import type { FamilyDiagnostic, SourceRange } from "@agent-authority/families";
import { type Connection, type Diagnostic, DiagnosticSeverity, type Range, TextDocuments, TextDocumentSyncKind } from "vscode-languageserver";
import { createConnection } from "vscode-languageserver/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import { type FixData, formatDocument, quickFixes } from "./edits.js";
import { complete, definition, hover } from "./features.js";
import { type Analysis, analyse, kindOfUri } from "./source.js";

export const SERVER_NAME = "authority-lsp";

/** A range of the families package (1-based lines and columns) as an LSP range (0-based). */
function toLspRange(r: SourceRange): Range {
  return { start: { line: r.start.line - 1, character: r.start.column - 1 }, end: { line: r.end.line - 1, character: r.end.column - 1 } };
}

/** An LSP diagnostic from a family or policy diagnostic: same code, same span, its help appended. */
export function toLspDiagnostic(d: FamilyDiagnostic): Diagnostic {
  const range = toLspRange(d.range);
  const fix: FixData | undefined = d.fix === undefined ? undefined : { title: d.fix.title, newText: d.fix.text, range: toLspRange(d.fix.range) };
  return {
    range,
    severity: d.severity === "error" ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
    code: d.code,
    source: "authority",
    message: d.help === undefined ? d.message : `${d.message}\nhelp: ${d.help}`,
    ...(fix !== undefined ? { data: fix } : {}),
  };
}

/**
 * Serves one editor over `connection` until it exits. Every change re-analyses its document at
 * once and publishes the diagnostics: analysis is linear in the text, which is bounded by the
 * language's and the family format's size limits, and the whole document by LSP_LIMITS.
 */
export function startServer(connection: Connection, version: string): void {
  const documents = new TextDocuments(TextDocument);
  const analyses = new Map<string, Analysis>();
  const analysisOf = (uri: string): { analysis: Analysis; document: TextDocument } | undefined => {
    const document = documents.get(uri);
    const kind = kindOfUri(uri);
    if (document === undefined || kind === undefined) return undefined;
    let analysis = analyses.get(uri);
    if (analysis === undefined || analysis.text !== document.getText()) {
      analysis = analyse(uri, kind, document.getText());
      analyses.set(uri, analysis);
    }
    return { analysis, document };
  };
  connection.onInitialize(() => ({
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      hoverProvider: true,
      completionProvider: { triggerCharacters: [".", "{"] },
      documentFormattingProvider: true,
      definitionProvider: true,
      codeActionProvider: { codeActionKinds: ["quickfix"] },
    },
    serverInfo: { name: SERVER_NAME, version },
  }));
  documents.onDidChangeContent(({ document }) => {
    const found = analysisOf(document.uri);
    if (found === undefined) return;
    void connection.sendDiagnostics({ uri: document.uri, version: document.version, diagnostics: found.analysis.diagnostics.map(toLspDiagnostic) });
  });
  documents.onDidClose(({ document }) => {
    analyses.delete(document.uri);
    void connection.sendDiagnostics({ uri: document.uri, diagnostics: [] });
  });
  connection.onHover(({ textDocument, position }) => {
    const found = analysisOf(textDocument.uri);
    return found === undefined ? null : hover(found.analysis, found.document, position);
  });
  connection.onCompletion(({ textDocument, position }) => {
    const found = analysisOf(textDocument.uri);
    return found === undefined ? [] : complete(found.analysis, found.document, position);
  });
  connection.onDefinition(({ textDocument, position }) => {
    const found = analysisOf(textDocument.uri);
    return found === undefined ? null : definition(found.analysis, found.document, position);
  });
  connection.onDocumentFormatting(({ textDocument }) => {
    const found = analysisOf(textDocument.uri);
    return found === undefined || found.analysis.tooLarge ? [] : formatDocument(found.analysis.kind, found.document);
  });
  connection.onCodeAction(({ textDocument, context }) => quickFixes(textDocument.uri, context.diagnostics));
  documents.listen(connection);
  connection.listen();
}

/** Serves one editor over a pair of streams (the CLI passes stdin and stdout); resolves when the input ends. */
export function serveStreams(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, version: string): Promise<void> {
  const ended = new Promise<void>((resolve) => {
    input.on("end", resolve);
    input.on("close", resolve);
  });
  startServer(createConnection(input, output), version);
  return ended;
}
