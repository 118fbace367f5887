// Offsets inside a YAML string map back to the file for every scalar style a policy may use.
import { describe, expect, it } from "vitest";
import { isScalar, parseDocument } from "yaml";
import { mapScalar } from "@agent-authority/families";

function mapped(source: string): { value: string; at: (i: number) => number; exact: boolean } {
  const doc = parseDocument(source);
  const node = doc.get("policy", true);
  if (!isScalar(node)) throw new Error("no scalar");
  const map = mapScalar(source, node);
  return { value: String(node.value), at: (i) => map.sourceOffset(i), exact: map.exact };
}

/** Every character of `word` in the value maps to the same character in the source. */
function expectWordMapped(source: string, word: string): void {
  const m = mapped(source);
  expect(m.exact).toBe(true);
  const index = m.value.indexOf(word);
  expect(index).toBeGreaterThanOrEqual(0);
  for (let i = 0; i < word.length; i += 1) expect(source[m.at(index + i)], `${word}[${i}]`).toBe(word[i]);
}

describe("mapScalar", () => {
  it("plain, one line and folded over lines", () => {
    expectWordMapped('policy: amount_minor <= 5 && tool == "x"\n', "tool");
    expectWordMapped('policy: amount_minor <= 5\n  && tool == "x"\n\n  || uses > 3\n', "uses");
  });

  it("single quoted, with a doubled quote", () => {
    expectWordMapped("policy: 'args.name == ''it''''s'' && tool == \"x\"'\n", "tool");
  });

  it("double quoted, with escapes and an escaped line break", () => {
    const source = 'policy: "args.t == \\"ops\\" && \\u0074ool == \\"x\\" \\\n   && uses > 1"\n';
    const m = mapped(source);
    expect(m.exact).toBe(true);
    expect(m.value).toBe('args.t == "ops" && tool == "x" && uses > 1');
    expect(source.slice(m.at(m.value.indexOf("uses")), m.at(m.value.indexOf("uses")) + 4)).toBe("uses");
    expect(source.slice(m.at(m.value.indexOf("tool")), m.at(m.value.indexOf("tool")) + 6)).toBe("\\u0074");
  });

  it("literal and folded blocks, with more-indented and empty lines", () => {
    expectWordMapped('policy: |\n  amount_minor <= 5\n    && tool == "x"\n\n  || uses > 3\n', "uses");
    expectWordMapped('policy: >-\n  amount_minor <= 5\n  && tool == "x"\n\n  || uses > 3\nnext: 1\n', "uses");
    expectWordMapped("grant:\n  x: 1\npolicy: |+\n    a\n     b && tool\n\n", "tool");
  });

  it("an explicit indentation indicator falls back to the start of the scalar, never to a wrong place", () => {
    const source = "policy: |2\n   amount_minor\n";
    const m = mapped(source);
    expect(m.exact).toBe(false);
    expect(m.at(5)).toBe(source.indexOf("|"));
  });
});
