// Hidden characters in the language server, over stdio: shown as a diagnostic at their place with a
// quick fix that writes their escape, refused as a line break after a comment, escaped by formatting.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCli } from "../cli/run-cli.js";
import { Editor, type LspDiagnostic } from "./client.js";

type Action = { title: string; edit: { changes: Record<string, { range: LspDiagnostic["range"]; newText: string }[]> } };

describe("authority lsp: hidden characters", () => {
  let editor: Editor;
  const uri = "file:///project/hidden.policy";
  beforeAll(async () => {
    buildCli();
    editor = new Editor();
    await editor.initialize();
  });
  afterAll(async () => {
    expect(await editor.close()).toBe(0);
  });

  it("warns at a bidi override and a zero-width space, and the quick fix writes them as escapes", async () => {
    const text = 'amount_minor < 100 || approver == "cfo@example.com\u202e\u200b"\n';
    const { diagnostics } = await editor.open(uri, text);
    expect(diagnostics.map((d) => [d.code, d.range.start.character, d.range.end.character])).toEqual([["policy/hidden-character", 50, 52]]);
    expect(diagnostics[0]!.message).toContain("U+202E");
    expect(diagnostics[0]!.message).not.toMatch(/[\u202e\u200b]/);
    const actions = await editor.request<Action[]>("textDocument/codeAction", {
      textDocument: { uri },
      range: diagnostics[0]!.range,
      context: { diagnostics },
    });
    expect(actions[0]!.edit.changes[uri]![0]!.newText).toBe("\\u202e\\u200b");
    const fixed = await editor.change(uri, 2, [{ range: diagnostics[0]!.range, text: "\\u202e\\u200b" }]);
    expect(fixed.diagnostics).toEqual([]);
  });

  it("warns at a mixed-script word, refuses a line separator after a comment, and formats with escapes", async () => {
    const mixed = await editor.open(uri, 'tool == "p\u0430yments.transfer"\n');
    expect(mixed.diagnostics.map((d) => d.code)).toEqual(["policy/mixed-script"]);
    const separated = await editor.open(uri, 'amount_minor < 100 || tool == "x" // note\u2028&& false\n');
    expect(separated.diagnostics.map((d) => [d.code, d.severity, d.range.start.character])).toEqual([
      ["policy/unexpected-character", 1, 41],
    ]);
    await editor.open(uri, 'tool=="x" // \u202e note\n');
    const edits = await editor.request<{ newText: string }[]>("textDocument/formatting", {
      textDocument: { uri },
      options: { tabSize: 2, insertSpaces: true },
    });
    expect(edits.map((e) => e.newText)).toEqual(['tool == "x" // \\u202e note\n']);
  });
});
