// Hostile text from the editor: analysis, hover, completion, definition and formatting never throw.
import fc from "fast-check";
import { TextDocument } from "vscode-languageserver-textdocument";
import { describe, expect, it } from "vitest";
import { formatDocument, isFixData, quickFixes } from "./edits.js";
import { complete, definition, hover } from "./features.js";
import { analyse, type DocumentKind } from "./source.js";

const params = { numRuns: 300, seed: Number(process.env["FC_SEED"] ?? 20261125) };

/** Pieces of policies and families, so that generated text reaches deep into both. */
const soup = fc
  .array(
    fc.constantFrom(
      "amount_minor",
      "args.",
      "approver",
      "${",
      "${limit}",
      "}",
      "policy: ",
      "grant:\n  ",
      "parameters:\n  limit: {type: int, min: 0, max: 5}\n",
      '"',
      "'",
      "//",
      "\n",
      " ",
      "[",
      "]",
      "(",
      ")",
      "==",
      "=",
      "and",
      "nil",
      "EUR",
      "|\n    ",
      "examples:\n  - action: {args: {",
      "\\u0000",
      "\u{1F600}",
      "\r\n",
      "constructor",
      "__proto__",
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(""));

const text = fc.oneof(fc.string({ unit: "binary", maxLength: 200 }), soup);

describe("the language server's analysis", () => {
  it("never throws for any text, at any position, in either kind of document", () => {
    fc.assert(
      fc.property(text, fc.constantFrom<DocumentKind>("policy", "family"), fc.nat(), (source, kind, at) => {
        const uri = kind === "policy" ? "file:///p.policy" : "file:///f.yaml";
        const document = TextDocument.create(uri, kind, 1, source);
        const analysis = analyse(uri, kind, source);
        const position = document.positionAt(source.length === 0 ? 0 : at % (source.length + 1));
        hover(analysis, document, position);
        complete(analysis, document, position);
        definition(analysis, document, position);
        formatDocument(kind, document);
        for (const d of analysis.diagnostics) expect(d.range.start.offset).toBeLessThanOrEqual(d.range.end.offset);
      }),
      params,
    );
  });

  it("offers a quick fix only for well-formed fix data, whatever the editor sends back", () => {
    fc.assert(
      fc.property(fc.anything(), (data) => {
        const diagnostic = { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } }, message: "m", data };
        const actions = quickFixes("file:///p.policy", [diagnostic]);
        expect(actions.length).toBe(isFixData(data) ? 1 : 0);
      }),
      params,
    );
    expect(isFixData({ title: "t", newText: "x", range: { start: { line: 0, character: 0 }, end: { line: 0, character: "1" } } })).toBe(
      false,
    );
  });
});
