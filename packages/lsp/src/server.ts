// The language server: documents kept in sync with the editor, each analysed on every change.
import type { FamilyDiagnostic, SourceRange } from "@agent-authority/families";
import {
  type Connection,
  type Diagnostic,
  type InitializeResult,
  DiagnosticSeverity,
  type Range,
  TextDocuments,
  TextDocumentSyncKind,
} from "vscode-languageserver";
import { createConnection } from "vscode-languageserver/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import { type FixData, formatDocument, quickFixes } from "./edits.js";
import { complete, definition, hover } from "./features.js";
import { type Analysis, analyse, kindOfUri, LSP_LIMITS } from "./source.js";

export const SERVER_NAME = "authority-lsp";

/** A range of the families package (1-based lines and columns) as an LSP range (0-based). */
function toLspRange(r: SourceRange): Range {
  return { start: { line: r.start.line - 1, character: r.start.column - 1 }, end: { line: r.end.line - 1, character: r.end.column - 1 } };
}

/** An LSP diagnostic from a family or policy diagnostic: same code, same span, its help appended. */
export function toLspDiagnostic(d: FamilyDiagnostic): Diagnostic {
  const range = toLspRange(d.range);
  const fix: FixData | undefined =
    d.fix === undefined ? undefined : { title: d.fix.title, newText: d.fix.text, range: toLspRange(d.fix.range) };
  return {
    range,
    severity: d.severity === "error" ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
    code: d.code,
    source: "authority",
    message: d.help === undefined ? d.message : `${d.message}\nhelp: ${d.help}`,
    ...(fix !== undefined ? { data: fix } : {}),
  };
}

/** What the server can do, told to the editor when it starts. */
function initializeResult(version: string): InitializeResult {
  return {
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      hoverProvider: true,
      completionProvider: { triggerCharacters: [".", "{"] },
      documentFormattingProvider: true,
      definitionProvider: true,
      codeActionProvider: { codeActionKinds: ["quickfix"] },
    },
    serverInfo: { name: SERVER_NAME, version },
  };
}

/** The editor's requests, each answered from the newest analysis of its document. */
function answerRequests(
  connection: Connection,
  analysisOf: (uri: string) => { analysis: Analysis; document: TextDocument } | undefined,
): void {
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
}

/**
 * Serves one editor over `connection` until it exits. Diagnostics follow edits, but stale work is
 * dropped (PendingAnalyses): a burst of edits costs an analysis of its first and of its newest
 * version, not one per edit; a newer version replaces the pending analysis of an older one. A
 * request analyses the newest text at once, so it never waits behind old versions. Each analysis
 * is bounded by the language's and the family format's limits, and the whole document by
 * LSP_LIMITS.
 */
export function startServer(connection: Connection, version: string, options: ServerOptions = {}): void {
  const documents = new TextDocuments(TextDocument);
  const analyses = new Map<string, Analysis>();
  const proofs = options.prove === undefined ? undefined : new Proofs(options.prove, (uri) => publish(uri));
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
  const publish = (uri: string): void => {
    const found = analysisOf(uri);
    if (found === undefined) return;
    const text = found.document.getText();
    const proved =
      proofs !== undefined && found.analysis.kind === "policy" && !found.analysis.diagnostics.some((d) => d.severity === "error")
        ? proofs.for(uri, text)
        : [];
    const diagnostics = [...found.analysis.diagnostics.map(toLspDiagnostic), ...proved.map((d) => provedDiagnostic(found.document, d))];
    void connection.sendDiagnostics({ uri, version: found.document.version, diagnostics });
  };
  const pending = new PendingAnalyses(publish);
  connection.onInitialize(() => initializeResult(version));
  // An open forgets what an earlier life of the document left waiting, so it is analysed at once;
  // a change is analysed at once or waits for quiet (PendingAnalyses).
  documents.onDidOpen(({ document }) => pending.cancel(document.uri));
  documents.onDidChangeContent(({ document }) => pending.schedule(document.uri));
  documents.onDidClose(({ document }) => {
    pending.cancel(document.uri);
    proofs?.forget(document.uri);
    analyses.delete(document.uri);
    void connection.sendDiagnostics({ uri: document.uri, diagnostics: [] });
  });
  answerRequests(connection, analysisOf);
  documents.listen(connection);
  connection.listen();
}

/** A warning a prover found in a policy document, at UTF-16 offsets of its text. */
export interface ProvedWarning {
  readonly code: string;
  readonly message: string;
  readonly help?: string;
  readonly span: { readonly start: number; readonly end: number };
}

/** Proves warnings of one valid policy text, asynchronously (the CLI passes the solver's lint). */
export type Prover = (text: string) => Promise<readonly ProvedWarning[]>;

export interface ServerOptions {
  /** When given, valid `.policy` documents also get the prover's warnings, once they are proved. */
  readonly prove?: Prover;
}

function provedDiagnostic(document: TextDocument, d: ProvedWarning): Diagnostic {
  return {
    range: { start: document.positionAt(d.span.start), end: document.positionAt(d.span.end) },
    severity: DiagnosticSeverity.Warning,
    code: `policy/${d.code}`,
    source: "authority",
    message: d.help === undefined ? d.message : `${d.message}\nhelp: ${d.help}`,
  };
}

/**
 * Proofs run off the main loop (the prover is asynchronous), one at a time per document. A result
 * is kept only for the text it was proved on: once the document changes it is dropped, and the
 * newest text is proved next; the document is published again when a proof ends.
 */
class Proofs {
  readonly #prove: Prover;
  readonly #done: (uri: string) => void;
  readonly #results = new Map<string, { text: string; warnings: readonly ProvedWarning[] }>();
  readonly #running = new Map<string, string>();
  readonly #wanted = new Map<string, string>();

  constructor(prove: Prover, done: (uri: string) => void) {
    this.#prove = prove;
    this.#done = done;
  }

  /** The warnings proved for exactly this text, or none yet (a proof of it is then started). */
  for(uri: string, text: string): readonly ProvedWarning[] {
    const result = this.#results.get(uri);
    if (result?.text === text) return result.warnings;
    this.#wanted.set(uri, text);
    if (!this.#running.has(uri)) this.#start(uri, text);
    return [];
  }

  forget(uri: string): void {
    this.#results.delete(uri);
    this.#wanted.delete(uri);
  }

  #start(uri: string, text: string): void {
    this.#running.set(uri, text);
    this.#prove(text).then(
      (warnings) => this.#finish(uri, text, warnings),
      () => this.#finish(uri, text, []),
    );
  }

  #finish(uri: string, text: string, warnings: readonly ProvedWarning[]): void {
    this.#running.delete(uri);
    const wanted = this.#wanted.get(uri);
    if (wanted === undefined) return;
    if (wanted !== text) {
      this.#start(uri, wanted);
      return;
    }
    this.#results.set(uri, { text, warnings });
    this.#done(uri);
  }
}

/**
 * The analyses waiting for a document to be quiet, one per document. A change after a quiet spell
 * is analysed at once (typing stays immediate). A change that comes sooner after the last
 * analysis than that analysis took (and than `analysisQuietMs`) waits that long, and each later
 * one replaces the waiting one, so the stale versions of a burst are never analysed and at most
 * about half the time goes to analyses nobody reads. A document waits at most
 * `analysisWaitMsMax`, so a stream of edits still gets diagnostics.
 */
class PendingAnalyses {
  readonly #run: (uri: string) => void;
  readonly #waiting = new Map<string, { timer: NodeJS.Timeout; since: number }>();
  /** When the last analysis of each document ended, and how long it took. */
  readonly #last = new Map<string, { end: number; took: number }>();

  constructor(run: (uri: string) => void) {
    this.#run = run;
  }

  schedule(uri: string): void {
    const now = Date.now();
    const waiting = this.#waiting.get(uri);
    const last = this.#last.get(uri);
    const quiet = Math.min(LSP_LIMITS.analysisQuietMs, last?.took ?? 0);
    if (waiting === undefined && (last === undefined || now - last.end >= quiet)) {
      this.#runNow(uri);
      return;
    }
    if (waiting !== undefined) clearTimeout(waiting.timer);
    const since = waiting?.since ?? now;
    const delay = Math.max(0, Math.min(quiet, since + LSP_LIMITS.analysisWaitMsMax - now));
    const timer = setTimeout(() => {
      this.#waiting.delete(uri);
      this.#runNow(uri);
    }, delay);
    this.#waiting.set(uri, { timer, since });
  }

  /** Analyses now, timing it: the quiet spell after it is as long as it took. */
  #runNow(uri: string): void {
    const start = performance.now();
    this.#run(uri);
    const end = performance.now();
    this.#last.set(uri, { end: Date.now(), took: end - start });
  }

  cancel(uri: string): void {
    const waiting = this.#waiting.get(uri);
    if (waiting !== undefined) clearTimeout(waiting.timer);
    this.#waiting.delete(uri);
    this.#last.delete(uri);
  }
}

/** Serves one editor over a pair of streams (the CLI passes stdin and stdout); resolves when the input ends. */
export function serveStreams(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  version: string,
  options: ServerOptions = {},
): Promise<void> {
  const ended = new Promise<void>((resolve) => {
    input.on("end", resolve);
    input.on("close", resolve);
  });
  startServer(createConnection(input, output), version, options);
  return ended;
}
