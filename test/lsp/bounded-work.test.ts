// The language server under load, driven over stdio as an editor drives it: a burst of edits is
// analysed once for its newest version (stale work dropped), a request after the burst is answered
// without waiting behind the old versions, and hostile families cost bounded work.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAMILY_LIMITS } from "@agent-authority/families";
import { LSP_LIMITS } from "@agent-authority/lsp";
import { buildCli, root } from "../cli/run-cli.js";
import { Editor } from "./client.js";

const EDITS = 200;

/** The procurement family with one example whose `args` mapping fills it to about `bytes` characters. */
function bigFamily(bytes: number): string {
  let text = `${readFileSync(join(root, "policies", "procurement-agent.yaml"), "utf8").trimEnd()}\n  - name: wide\n    action:\n      tool: purchase.create\n      args:\n`;
  for (let i = 0; text.length < bytes - 40; i++) text += `        k${i}: ${i}\n`;
  return `${text}    expect: deny\n`;
}

/** A family whose parameter `code` has the given declaration on line 5. */
function patternFamily(declaration: string): string {
  return [
    "id: bounds",
    "version: 1",
    "reviewed_by: [alice@example.com]",
    "parameters:",
    `  code: ${declaration}`,
    "grant:",
    "  agent_id: agt_6ys3c4dwa7n36096q14dr9gpqy",
    "  principal_type: team",
    "  principal_id: ${code}",
    "  scope: {tool: [payments.refund]}",
    "",
  ].join("\n");
}

describe("authority lsp: bounded work", () => {
  let editor: Editor;
  beforeAll(async () => {
    buildCli();
    editor = new Editor();
    await editor.initialize();
  });
  afterAll(async () => {
    expect(await editor.close()).toBe(0);
  });

  it(`${EDITS} rapid edits to a 240 KB family leave no backlog: a request after them is answered, the newest version published, old ones dropped`, async () => {
    const uri = "file:///project/big.yaml";
    const text = bigFamily(240_000);
    const opened = await editor.open(uri, text, "yaml");
    expect(opened.version).toBe(1);
    const line = text.split("\n").findIndex((l) => l.includes("k100: 100"));
    const character = "        k100: ".length;
    // Every edit rewrites one digit; none is awaited, as when a user types or a tool rewrites fast.
    const sent: Promise<void>[] = [];
    for (let version = 2; version <= EDITS + 1; version++) {
      sent.push(
        editor.connection.sendNotification("textDocument/didChange", {
          textDocument: { uri, version },
          contentChanges: [{ range: { start: { line, character }, end: { line, character: character + 1 } }, text: String(version % 10) }],
        }),
      );
    }
    await Promise.all(sent);
    const hover = editor.request<{ contents: { value: string } } | null>("textDocument/hover", {
      textDocument: { uri },
      position: { line: text.split("\n").findIndex((l) => l.includes("${agent_id}")), character: 14 },
    });
    const newest = editor.diagnostics(uri, EDITS + 1);
    expect((await hover)?.contents.value).toContain("parameter `agent_id`");
    expect((await newest).version).toBe(EDITS + 1);
    const versions = editor.published.filter((p) => p.uri === uri).map((p) => p.version);
    // The open and the newest version at least; a handful at most, where the burst had pauses.
    expect(versions[0]).toBe(1);
    expect(versions.at(-1)).toBe(EDITS + 1);
    expect(versions.length).toBeLessThan(EDITS / 10);
    expect([...versions].sort((a, b) => a! - b!)).toEqual(versions);
  });

  it("a hostile pattern is answered at once, at its place; syntax outside RE2 is a diagnostic at its column", async () => {
    const uri = "file:///project/redos.yaml";
    const hostile = await editor.open(uri, patternFamily(`{type: string, pattern: "(a+)+$", example: "${"a".repeat(40)}!"}`), "yaml");
    expect(hostile.diagnostics.map((d) => `${d.code} ${d.range.start.line}:${d.range.start.character}`)).toEqual(["parameter-bounds 4:51"]);
    const lookahead = await editor.change(uri, 2, [{ text: patternFamily('{type: string, pattern: "[a-z]+(?=a)", example: abc}') }]);
    expect(lookahead.diagnostics.map((d) => `${d.code} ${d.range.start.line}:${d.range.start.character}`)).toEqual([
      "parameter-pattern 4:39",
    ]);
  });

  it("a family over the size limit (under the server's document limit) gets one diagnostic at 0:0, and formatting it does no work", async () => {
    const uri = "file:///project/huge.yaml";
    const text = bigFamily(Math.min(970_000, LSP_LIMITS.documentBytesMax - 1_000));
    expect(text.length).toBeGreaterThan(FAMILY_LIMITS.sourceBytesMax);
    const opened = await editor.open(
      uri,
      text.replace("amount_minor <= ${approval_threshold_minor}", "amount_minor  <=  ${approval_threshold_minor}"),
      "yaml",
    );
    expect(opened.diagnostics.map((d) => `${d.code} ${d.range.start.line}:${d.range.start.character}`)).toEqual(["family-too-large 0:0"]);
    expect(await editor.request("textDocument/formatting", { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } })).toEqual(
      [],
    );
  });
});
