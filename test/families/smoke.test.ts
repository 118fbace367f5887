import { describe, expect, it } from "vitest";
import { compileFamily } from "@agent-authority/families";
const text = `id: demo
version: 1
reviewed_by: [alice@example.com]
parameters:
  agent_id: {type: string, pattern: "agt_[0-9a-hjkmnp-tv-z]{26}", example: agt_01hzy3m8k2b5c7d9e1f3g5h7j9}
  budget: {type: int, min: 0, max: 50000, default: 1000}
  extra: {type: int, min: 5, max: 1}
grant:
  agent_id: \${agent_id}
  principal_type: team
  principal_id: ops
  scope: {tool: [a.b, "\${nope}"]}
  budget_amount_minor: \${budget}
  budget_currency: EUR
`;
describe("smoke", () => {
  it("compiles", () => {
    const r = compileFamily(text, "x.yaml");
    console.log(JSON.stringify(r.diagnostics.map(d => [d.code, d.message, d.help, d.range.start.line, d.range.start.column]), null, 1));
    expect(r).toBeDefined();
  });
});
