// An editor's side of the language server: spawns `authority lsp` and speaks JSON-RPC over its stdio.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createMessageConnection, type MessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { root } from "../cli/run-cli.js";

export interface LspDiagnostic {
  readonly range: { start: { line: number; character: number }; end: { line: number; character: number } };
  readonly severity: number;
  readonly code: string;
  readonly message: string;
  readonly data?: unknown;
}

export interface Published {
  readonly uri: string;
  readonly version?: number;
  readonly diagnostics: LspDiagnostic[];
}

export class Editor {
  readonly connection: MessageConnection;
  private readonly child: ChildProcess;
  private readonly waiting: { uri: string; version: number | undefined; resolve: (p: Published) => void }[] = [];
  readonly published: Published[] = [];

  constructor(extra: readonly string[] = []) {
    this.child = spawn(process.execPath, [join(root, "cli", "bin", "authority.js"), "lsp", "--stdio", ...extra], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.connection = createMessageConnection(new StreamMessageReader(this.child.stdout!), new StreamMessageWriter(this.child.stdin!));
    this.connection.onNotification("textDocument/publishDiagnostics", (p: Published) => {
      this.published.push(p);
      const i = this.waiting.findIndex((w) => w.uri === p.uri && (w.version === undefined || w.version === p.version));
      if (i >= 0) this.waiting.splice(i, 1)[0]!.resolve(p);
    });
    this.connection.listen();
  }

  async initialize(): Promise<{ capabilities: Record<string, unknown>; serverInfo?: { name: string; version?: string } }> {
    const result = await this.connection.sendRequest("initialize", { processId: process.pid, rootUri: null, capabilities: {} });
    await this.connection.sendNotification("initialized", {});
    return result as { capabilities: Record<string, unknown> };
  }

  /** The next diagnostics published for `uri` (at `version`, when given). */
  diagnostics(uri: string, version?: number): Promise<Published> {
    const already = this.published.find((p) => p.uri === uri && (version === undefined || p.version === version));
    if (already !== undefined) return Promise.resolve(already);
    return new Promise((resolve) => this.waiting.push({ uri, version, resolve }));
  }

  async open(uri: string, text: string, languageId = "policy"): Promise<Published> {
    this.published.length = 0;
    await this.connection.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId, version: 1, text } });
    return this.diagnostics(uri, 1);
  }

  async change(uri: string, version: number, changes: readonly unknown[]): Promise<Published> {
    await this.connection.sendNotification("textDocument/didChange", { textDocument: { uri, version }, contentChanges: changes });
    return this.diagnostics(uri, version);
  }

  request<T>(method: string, params: unknown): Promise<T> {
    return this.connection.sendRequest(method, params) as Promise<T>;
  }

  /** Shuts the server down as an editor does, and waits for the process to end. */
  async close(): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) => this.child.on("exit", (code) => resolve(code)));
    await this.connection.sendRequest("shutdown");
    await this.connection.sendNotification("exit");
    const code = await exited;
    this.connection.dispose();
    return code;
  }
}
