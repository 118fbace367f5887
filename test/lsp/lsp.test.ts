// The language server driven as an editor drives it: the built `authority lsp` over stdio.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DOCUMENT_TOO_LARGE, LSP_LIMITS } from "@agent-authority/lsp";
import { buildCli, fixtures } from "../cli/run-cli.js";
import { Editor, type LspDiagnostic } from "./client.js";

const familyText = readFileSync(join(fixtures, "unformatted.yaml"), "utf8");
const familyUri = "file:///project/families/unformatted.yaml";
const policyUri = "file:///project/limits.policy";

/** The zero-based position of the first occurrence of `needle` (plus `delta` characters) in `text`. */
function positionOf(text: string, needle: string, delta = 0): { line: number; character: number } {
  const offset = text.indexOf(needle) + delta;
  expect(offset).toBeGreaterThanOrEqual(delta);
  const before = text.slice(0, offset);
  return { line: before.split("\n").length - 1, character: offset - before.lastIndexOf("\n") - 1 };
}

function codes(diagnostics: readonly LspDiagnostic[]): string[] {
  return diagnostics.map((d) => d.code);
}

describe("authority lsp", () => {
  let editor: Editor;
  beforeAll(async () => {
    buildCli();
    editor = new Editor();
  });
  afterAll(async () => {
    expect(await editor.close()).toBe(0);
  });

  it("initializes and names its capabilities", async () => {
    const result = await editor.initialize();
    expect(result.serverInfo?.name).toBe("authority-lsp");
    expect(result.capabilities).toMatchObject({ hoverProvider: true, documentFormattingProvider: true, definitionProvider: true });
  });

  it("publishes the lint diagnostics of a policy on open, and new ones on each change", async () => {
    const opened = await editor.open(policyUri, "amount_minr <= 100\n");
    expect(codes(opened.diagnostics)).toEqual(["policy/unknown-name"]);
    expect(opened.diagnostics[0]!.range).toEqual({ start: { line: 0, character: 0 }, end: { line: 0, character: 11 } });
    expect(opened.diagnostics[0]!.message).toContain("help: did you mean `amount_minor`?");
    const fixed = await editor.change(policyUri, 2, [
      { range: { start: { line: 0, character: 9 }, end: { line: 0, character: 11 } }, text: "nor" },
    ]);
    expect(fixed.diagnostics).toEqual([]);
    const broken = await editor.change(policyUri, 3, [{ text: "amount_minor <= 100 && 1 == 1\n" }]);
    expect(codes(broken.diagnostics)).toEqual(["policy/constant-condition"]);
    expect(broken.diagnostics[0]!.severity).toBe(2);
  });

  it(`analyses a document of ${LSP_LIMITS.documentBytesMax} bytes, and gives one a byte larger one diagnostic and no work`, async () => {
    const uri = "file:///project/huge.policy";
    // A comment of multi-byte characters: the limit counts UTF-8 bytes, not characters.
    const body = "amount_minor <= 100\n// ";
    const fill = LSP_LIMITS.documentBytesMax - Buffer.byteLength(body) - 1;
    const atLimit = `${body}${"é".repeat(Math.floor(fill / 2))}${"x".repeat(fill % 2)}\n`;
    expect(Buffer.byteLength(atLimit)).toBe(LSP_LIMITS.documentBytesMax);
    // Analysed: the language's own limit (4 KiB of policy) answers it.
    const analysed = await editor.open(uri, atLimit);
    expect(codes(analysed.diagnostics)).toEqual(["policy/policy-too-long"]);
    const over = `${atLimit}x`;
    const refused = await editor.change(uri, 2, [{ text: over }]);
    expect(refused.diagnostics).toHaveLength(1);
    expect(refused.diagnostics[0]).toMatchObject({
      code: DOCUMENT_TOO_LARGE,
      severity: 1,
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    });
    expect(refused.diagnostics[0]!.message).toContain(`more than ${LSP_LIMITS.documentBytesMax} bytes`);
    const at = { textDocument: { uri }, position: { line: 0, character: 2 } };
    expect(await editor.request("textDocument/hover", at)).toBeNull();
    expect(await editor.request("textDocument/completion", at)).toEqual([]);
    expect(await editor.request("textDocument/formatting", { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } })).toEqual(
      [],
    );
    // Back under the limit, it is analysed again.
    const back = await editor.change(uri, 3, [{ text: atLimit }]);
    expect(codes(back.diagnostics)).toEqual(["policy/policy-too-long"]);
  });

  it("reports a family's policy errors at their place in the YAML", async () => {
    const text = familyText.replace("amount_minor<=", "amount_minr<=");
    const opened = await editor.open(familyUri, text, "yaml");
    expect(codes(opened.diagnostics)).toEqual(["policy/unknown-name"]);
    expect(opened.diagnostics[0]!.range.start).toEqual(positionOf(text, "amount_minr"));
  });

  it("hovers a built-in name with its documentation and type, and a placeholder with its parameter", async () => {
    await editor.open(familyUri, familyText, "yaml");
    type H = { contents: { value: string } } | null;
    const name = await editor.request<H>("textDocument/hover", {
      textDocument: { uri: familyUri },
      position: positionOf(familyText, "amount_minor<=", 2),
    });
    expect(name?.contents.value).toContain("amount_minor: int");
    expect(name?.contents.value).toContain("minor units");
    const placeholder = await editor.request<H>("textDocument/hover", {
      textDocument: { uri: familyUri },
      position: positionOf(familyText, "${limit}", 3),
    });
    expect(placeholder?.contents.value).toContain("limit: {type: int, min: 0, max: 50000, default: 1000}");
    const comparison = await editor.request<H>("textDocument/hover", {
      textDocument: { uri: familyUri },
      position: positionOf(familyText, "<=${limit}", 1),
    });
    expect(comparison?.contents.value).toContain(": bool");
  });

  it("completes names and functions, parameter names inside a placeholder, and args fields from the examples", async () => {
    type Items = { label: string }[];
    const text = familyText.replace("action: {tool: purchase.create,", "action: {args: {vendor: acme}, tool: purchase.create,");
    await editor.open(familyUri, text, "yaml");
    const at = (needle: string, delta: number) => ({ textDocument: { uri: familyUri }, position: positionOf(text, needle, delta) });
    const names = (await editor.request<Items>("textDocument/completion", at("amount_minor<=", 0))).map((i) => i.label);
    expect(names).toEqual(expect.arrayContaining(["amount_minor", "approver", "weekday_utc", "args", "startsWith", "size"]));
    const params = (await editor.request<Items>("textDocument/completion", at("${limit}", 2))).map((i) => i.label);
    expect(params).toEqual(["agent_id", "limit"]);
    await editor.change(familyUri, 2, [{ text: text.replace("||approver", "||args.v") }]);
    const args = (
      await editor.request<Items>("textDocument/completion", {
        textDocument: { uri: familyUri },
        position: positionOf(text, "||approver", 8),
      })
    ).map((i) => i.label);
    expect(args).toEqual(["vendor"]);
  });

  it("completes and explains the path and URL functions", async () => {
    const uri = "file:///project/files.policy";
    const text = 'pathWithin(args.path, "/tmp/notes") && urlHost(args.url) == "example.com"\n';
    const opened = await editor.open(uri, text);
    expect(opened.diagnostics).toEqual([]);
    type H = { contents: { value: string } } | null;
    const hover = await editor.request<H>("textDocument/hover", { textDocument: { uri }, position: { line: 0, character: 3 } });
    expect(hover?.contents.value).toContain("pathWithin(path: string, dir: string): bool");
    expect(hover?.contents.value).toContain("normalized lexically");
    const url = await editor.request<H>("textDocument/hover", { textDocument: { uri }, position: positionOf(text, "urlHost", 2) });
    expect(url?.contents.value).toContain("urlHost(url: string): string");
    const names = (
      await editor.request<{ label: string }[]>("textDocument/completion", { textDocument: { uri }, position: { line: 0, character: 0 } })
    ).map((i) => i.label);
    expect(names).toEqual(
      expect.arrayContaining(["pathWithin", "pathNormalize", "urlWithin", "urlScheme", "urlHost", "urlPort", "urlPath", "fileUriPath"]),
    );
  });

  it("goes from a placeholder to its parameter's declaration", async () => {
    await editor.open(familyUri, familyText, "yaml");
    const location = await editor.request<{ uri: string; range: { start: unknown } }>("textDocument/definition", {
      textDocument: { uri: familyUri },
      position: positionOf(familyText, "${limit}", 4),
    });
    expect(location.uri).toBe(familyUri);
    expect(location.range.start).toEqual(positionOf(familyText, "limit: {type"));
  });

  it("formats a policy file and a family's policy as `authority fmt` does", async () => {
    await editor.open(policyUri, "amount_minor<=100||approver!=null");
    const edits = await editor.request<{ newText: string }[]>("textDocument/formatting", {
      textDocument: { uri: policyUri },
      options: { tabSize: 2, insertSpaces: true },
    });
    expect(edits.map((e) => e.newText)).toEqual(["amount_minor <= 100 || approver != null\n"]);
    await editor.open(familyUri, familyText, "yaml");
    const family = await editor.request<{ newText: string }[]>("textDocument/formatting", {
      textDocument: { uri: familyUri },
      options: { tabSize: 2, insertSpaces: true },
    });
    expect(family).toHaveLength(1);
    expect(family[0]!.newText).toContain('policy: "amount_minor <= ${limit} || approver in [\\"cfo@example.com\\"]"');
  });

  type Action = { title: string; kind: string; edit: { changes: Record<string, { range: LspDiagnostic["range"]; newText: string }[]> } };

  /** Applies one code action's edits to `text` (single-line edits, as every hint's fix is). */
  function applyAction(text: string, uri: string, action: Action): string {
    const lines = text.split("\n");
    for (const edit of [...action.edit.changes[uri]!].reverse()) {
      const line = lines[edit.range.start.line]!;
      lines[edit.range.start.line] = line.slice(0, edit.range.start.character) + edit.newText + line.slice(edit.range.end.character);
    }
    return lines.join("\n");
  }

  it("offers a quick fix for every hint, and each fix clears its diagnostic", async () => {
    const hinted = [
      "amount_minor = 5",
      'amount_minor < 5 and tool == "x"',
      "not (uses < 5)",
      "approver != nil",
      "approver != None",
      "approver != nul",
      "currency == 'EUR'",
      "currency == EUR",
    ];
    let version = 1;
    for (const text of hinted) {
      const { diagnostics } = await editor.open(policyUri, text);
      expect(diagnostics).toHaveLength(1);
      const actions = await editor.request<Action[]>("textDocument/codeAction", {
        textDocument: { uri: policyUri },
        range: diagnostics[0]!.range,
        context: { diagnostics },
      });
      expect(actions).toHaveLength(1);
      expect(actions[0]!.kind).toBe("quickfix");
      version += 1;
      const after = await editor.change(policyUri, version, [{ text: applyAction(text, policyUri, actions[0]!) }]);
      expect(after.diagnostics, text).toEqual([]);
    }
  });

  it("writes a fix inside a double-quoted YAML policy with the escapes it needs", async () => {
    const text = familyText.replace('policy: "amount_minor<=${limit}', 'policy: "currency == EUR && amount_minor<=${limit}');
    const { diagnostics } = await editor.open(familyUri, text, "yaml");
    expect(codes(diagnostics)).toEqual(["policy/unknown-name"]);
    const actions = await editor.request<Action[]>("textDocument/codeAction", {
      textDocument: { uri: familyUri },
      range: diagnostics[0]!.range,
      context: { diagnostics },
    });
    expect(actions[0]!.edit.changes[familyUri]![0]!.newText).toBe('\\"EUR\\"');
    const after = await editor.change(familyUri, 2, [{ text: applyAction(text, familyUri, actions[0]!) }]);
    expect(after.diagnostics).toEqual([]);
  });

  it("reports an unclosed parenthesis at the parenthesis", async () => {
    const text = 'amount_minor < 5 && (tool == "a" ||\n  tool == "b"\n';
    const { diagnostics } = await editor.open(policyUri, text);
    expect(diagnostics.map((d) => [d.code, d.range.start])).toEqual([["policy/unexpected-end", { line: 0, character: 20 }]]);
  });
});
