// `authority lint` reports every error of a file in one run, in source order, and bounds how many it
// shows: a family whose errors belong to the schema, the placeholders and the policy used to take
// one run per kind.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_ERRORS_DEFAULT } from "../../cli/src/report.js";
import { authority, cliScratchDir } from "./run-cli.js";

const dir = cliScratchDir("authority-lint-every-");

/** A family with a bad placeholder in `principal_id`, `extra` more of them, a non-integer `ttl_hours` and a policy with `=`. */
function family(extra: number): string {
  const more = Array.from({ length: extra }, (_, i) => `  note_${i}: \${missing_${i}}\n`).join("");
  return `id: every-error
version: 1
reviewed_by: [reviewer@example.com]
parameters:
  agent_id: {type: string, pattern: "agt_[0-9a-hjkmnp-tv-z]{26}", example: agt_nwj47tan9zt24mnpzx45hy43kw}
  limit: {type: int, min: 0, max: 5000, default: 1000}
grant:
  agent_id: \${agent_id}
  principal_type: team
  principal_id: \${nobody}
  scope: {tool: [payments.send]}
  budget_amount_minor: 10000
  budget_currency: EUR
  ttl_hours: lots
  policy: 'amount_minor <= \${limit} && amount_minor = 5'
${more}examples:
  - name: ok
    action: {tool: payments.send, amount_minor: 500, currency: EUR}
    expect: allow
`;
}

/** The `line:column` and code of each error `lint` printed, in the order printed. */
function errors(stdout: string): string[] {
  return [...stdout.matchAll(/:(\d+):(\d+): error\[([^\]]+)\]/g)].map((m) => `${m[1]}:${m[2]} ${m[3]}`);
}

describe("authority lint", () => {
  it("reports the schema's, the placeholders' and the policy's errors of one family in one run, in source order", () => {
    const path = join(dir, "every-error.yaml");
    writeFileSync(path, family(0));
    const run = authority(["lint", path]);
    expect(run.code).toBe(1);
    expect(errors(run.stdout)).toEqual(["10:17 placeholder-unknown", "14:14 schema", "15:53 policy/unexpected-character"]);
    expect(run.stdout).toContain("1 file checked: 3 errors");
  });

  it(`shows at most ${MAX_ERRORS_DEFAULT} errors of a file by default, the first ones in source order, and counts them all`, () => {
    const path = join(dir, "many-errors.yaml");
    // The extra fields are unknown to the grant's schema too, so each is two errors at its line.
    writeFileSync(path, family(12));
    const run = authority(["lint", path]);
    expect(run.code).toBe(1);
    const shown = errors(run.stdout);
    expect(shown).toHaveLength(MAX_ERRORS_DEFAULT);
    const lines = shown.map((e) => Number(e.split(":")[0]));
    expect(lines).toEqual([...lines].sort((a, b) => a - b));
    expect(shown[0]).toBe("10:17 placeholder-unknown");
    const total = Number(/1 file checked: (\d+) errors/.exec(run.stdout)![1]);
    expect(total).toBeGreaterThan(MAX_ERRORS_DEFAULT);
    expect(run.stdout).toContain(`${total - MAX_ERRORS_DEFAULT} more errors not shown`);
    // `--max-errors 0` shows every one.
    expect(errors(authority(["lint", path, "--max-errors", "0"]).stdout)).toHaveLength(total);
  });
});
