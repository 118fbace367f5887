// The console shows hidden characters with the same set as the policy language: one set, checked
// here code point by code point, so neither copy can drift from the other.
import { fileURLToPath, pathToFileURL } from "node:url";
import { isHidden } from "@agent-authority/grammar";
import { expect, it } from "vitest";

const consoleHidden = pathToFileURL(fileURLToPath(new URL("../../server/console/hidden.js", import.meta.url))).href;

it("escapes exactly the code points the policy language calls hidden, the blank Braille pattern included", async () => {
  const { showHidden } = (await import(consoleHidden)) as { showHidden(text: string): string };
  const disagreements: string[] = [];
  for (let codePoint = 0; codePoint <= 0x10ffff; codePoint += 1) {
    if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue;
    const text = String.fromCodePoint(codePoint);
    if ((showHidden(text) !== text) !== isHidden(codePoint)) disagreements.push(codePoint.toString(16));
    if (disagreements.length > 10) break;
  }
  expect(disagreements).toEqual([]);
  expect(isHidden(0x2800)).toBe(true);
  expect(showHidden("a\u2800b")).toBe("a\\u2800b");
});
