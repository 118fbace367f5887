// `authority lsp --prove`: the solver's proved warnings reach the editor after the plain diagnostics, and a proof of an old text is dropped.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCli } from "../cli/run-cli.js";
import { Editor, type Published } from "./client.js";

const uri = "file:///project/never.policy";

/** Waits until the editor has been sent diagnostics for `uri` that satisfy `test`. */
async function until(editor: Editor, test: (p: Published) => boolean): Promise<Published> {
  for (let i = 0; i < 600; i++) {
    const found = editor.published.find((p) => p.uri === uri && test(p));
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("no such diagnostics within 30 s");
}

describe("authority lsp --prove", () => {
  let editor: Editor;
  beforeAll(async () => {
    buildCli();
    editor = new Editor(["--prove"]);
    await editor.initialize();
  }, 180_000);
  afterAll(async () => {
    expect(await editor.close()).toBe(0);
  });

  it("publishes a proved never-allows once the solver has it, with the proof in the message", async () => {
    const first = await editor.open(uri, 'startsWith(tool, "a.") && startsWith(tool, "b.")');
    expect(first.diagnostics.map((d) => d.code)).not.toContain("policy/never-allows");
    const proved = await until(editor, (p) => p.version === 1 && p.diagnostics.some((d) => d.code === "policy/never-allows"));
    expect(proved.diagnostics.find((d) => d.code === "policy/never-allows")!.message).toMatch(/proved by the solver/);
  });

  it("drops the proof of a text once the document changes", async () => {
    editor.published.length = 0;
    await editor.change(uri, 2, [{ text: 'startsWith(tool, "a.") && startsWith(tool, "a.b")' }]);
    await until(editor, (p) => p.version === 2 && p.diagnostics.some((d) => d.code === "policy/redundant-condition"));
    expect(editor.published.filter((p) => p.version === 2).flatMap((p) => p.diagnostics.map((d) => d.code))).not.toContain(
      "policy/never-allows",
    );
  });
});
