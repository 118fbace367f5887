// Unique mapping keys, checked in linear time: the same refusals as yaml's own check, at the same key.
import { compileFamily, formatFamilySource } from "@agent-authority/families";
import { parseDocument } from "yaml";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const FAMILY = `id: keys
version: 1
reviewed_by: [alice@example.com]
parameters: {}
grant:
  agent_id: agt_6ys3c4dwa7n36096q14dr9gpqy
  principal_type: team
  principal_id: ops
  scope: {tool: [payments.refund]}
  policy: "tool  ==  \\"payments.refund\\""
`;

describe("duplicate keys", () => {
  it("a repeated key in a block or a flow mapping is `yaml/duplicate-key` at the repeated key", () => {
    const block = compileFamily(FAMILY.replace("  principal_id: ops\n", "  principal_id: ops\n  principal_id: ops\n"), "f.yaml");
    expect(block.diagnostics.map((d) => `${d.code} ${d.range.start.line}:${d.range.start.column}`)).toEqual(["yaml/duplicate-key 9:3"]);
    const flow = compileFamily(FAMILY.replace("{tool: [payments.refund]}", "{tool: [a.b], tool: [a.c]}"), "f.yaml");
    expect(flow.diagnostics.map((d) => `${d.code} ${d.range.start.line}:${d.range.start.column}`)).toEqual(["yaml/duplicate-key 9:24"]);
    expect(formatFamilySource(FAMILY.replace("version: 1\n", "version: 1\nversion: 2\n"))).toMatchObject({ ok: false });
  });

  it("agrees with yaml's own check on random mappings: refused exactly when a scalar key repeats", () => {
    const key = fc.constantFrom("a", "b", "1", "'1'", "true", "null", "~", '"a"');
    fc.assert(
      fc.property(fc.array(key, { minLength: 1, maxLength: 6 }), fc.boolean(), (keys, flow) => {
        const text = flow
          ? `m: {${keys.map((k, i) => `${k}: ${i}`).join(", ")}}\n`
          : `m:\n${keys.map((k, i) => `  ${k}: ${i}`).join("\n")}\n`;
        const theirs = parseDocument(text, { uniqueKeys: true }).errors.some((e) => e.code === "DUPLICATE_KEY");
        const ours = compileFamily(text, "f.yaml").diagnostics.some((d) => d.code === "yaml/duplicate-key");
        expect(ours, text).toBe(theirs);
      }),
      { numRuns: 300 },
    );
  });

  it("a mapping of 10,000 distinct keys is read, and one repeated key among them is found", () => {
    const wide = Array.from({ length: 10_000 }, (_, i) => `  k${i}: ${i}`).join("\n");
    const text = `${FAMILY}examples:\n  - name: wide\n    action:\n      tool: payments.refund\n      args:\n${wide.replace(/^ {2}/gm, "        ")}\n    expect: allow\n`;
    expect(
      compileFamily(text, "f.yaml")
        .diagnostics.filter((d) => d.severity === "error")
        .map((d) => d.code),
    ).toEqual([]);
    const repeated = compileFamily(text.replace("        k9999: 9999", "        k7: 9999"), "f.yaml");
    expect(repeated.diagnostics.filter((d) => d.code === "yaml/duplicate-key").map((d) => d.range.start.line)).toEqual([
      text.split("\n").findIndex((l) => l.includes("k9999:")) + 1,
    ]);
  });
});
