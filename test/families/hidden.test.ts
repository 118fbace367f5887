// Hidden characters in a family's policy: warned at their column in the YAML, escaped by fmt.
import { compileFamily, formatFamilySource } from "@agent-authority/families";
import { hiddenCharacters } from "@agent-authority/language";
import { describe, expect, it } from "vitest";

/** The hidden characters of `text`, as strings. */
const hiddenCharactersIn = (text: string): string[] => hiddenCharacters(text).map((h) => text.slice(h.offset, h.offset + h.width));

const family = (policy: string): string => `id: hidden
version: 1
reviewed_by: [alice@example.com]
parameters: {}
grant:
  agent_id: agt_6ys3c4dwa7n36096q14dr9gpqy
  principal_type: team
  principal_id: ops
  scope: {tool: [payments.refund]}
  policy: ${policy}
examples:
  - name: small
    action: {tool: payments.refund, amount_minor: 5, currency: EUR}
    expect: allow
`;

describe("hidden characters in a family", () => {
  it("are warned at their line and column in the YAML", () => {
    const result = compileFamily(family('amount_minor < 10 || approver == "cfo@example.com\u202e"'), "f.yaml");
    const warning = result.diagnostics.find((d) => d.code === "policy/hidden-character");
    expect(warning).toMatchObject({ severity: "warning", range: { start: { line: 10, column: 60 } } });
  });

  it("fmt writes them as escapes in every YAML style, and the family still compiles to the same policy meaning", () => {
    for (const policy of [
      'amount_minor<10 || approver == "x\u200b"',
      "'amount_minor<10 || approver == \"x\u200b\"'",
      '|-\n    amount_minor<10 // \u2067\n    || approver == "x\u200b"',
    ]) {
      const text = family(policy);
      const formatted = formatFamilySource(text);
      expect(formatted.ok && formatted.changed, policy).toBe(true);
      if (!formatted.ok) continue;
      expect(hiddenCharactersIn(formatted.text)).toEqual([]);
      const compiled = compileFamily(formatted.text, "f.yaml");
      expect(compiled.ok, JSON.stringify(compiled.diagnostics)).toBe(true);
      expect(compiled.diagnostics.filter((d) => d.code === "policy/hidden-character")).toEqual([]);
      expect(String(compiled.body!.grant["policy"])).toContain("\\u200b");
    }
  });
});
