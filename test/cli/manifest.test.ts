// `authority manifest` as a user runs it: a spawned process on the manifest fixtures, with and
// without `--against` a family or grant, exit codes and output checked.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authority, buildCli, root } from "./run-cli.js";

const fixture = (name: string): string => join("test", "manifest", "fixtures", name);
let scratch = "";

function family(tools: string[]): string {
  return `id: refund-agent
version: 1
reviewed_by: [reviewer@example.com]
parameters:
  agent_id: {type: string, pattern: "agt_[0-9a-hjkmnp-tv-z]{26}", example: agt_nwj47tan9zt24mnpzx45hy43kw}
grant:
  agent_id: \${agent_id}
  principal_type: team
  principal_id: refunds
  scope: {tool: [${tools.join(", ")}]}
examples:
  - name: a lookup is allowed
    action: {tool: orders.lookup}
    expect: ${tools.includes("orders.lookup") ? "allow" : "deny"}
`;
}

beforeAll(() => {
  buildCli();
  scratch = mkdtempSync(join(tmpdir(), "authority-manifest-"));
  writeFileSync(join(scratch, "narrow.yaml"), family(["orders.lookup", "payments.refund"]));
  writeFileSync(join(scratch, "exact.yaml"), family(["orders.lookup", "payments.refund", "mail.*"]));
  writeFileSync(
    join(scratch, "wide.json"),
    JSON.stringify({
      agent_id: "agt_nwj47tan9zt24mnpzx45hy43kw",
      principal_type: "team",
      principal_id: "x",
      scope: { tool: ["orders.*", "payments.refund", "mail.*", "crm.write"] },
    }),
  );
  writeFileSync(join(scratch, "broken.yaml"), "id: refund-agent\nversion: one\n");
}, 180_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("authority manifest", () => {
  it("lists the tools the code registers with where, and the manifest hash", () => {
    const run = authority(["manifest", fixture("guard-agent")], { cwd: root });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^tools \(4\):/);
    for (const tool of ["mail.read", "mail.send", "orders.lookup", "payments.refund"])
      expect(run.stdout).toMatch(new RegExp(`  ${tool.replace(".", "\\.")} +guard +src/agent\\.ts:\\d+:\\d+`));
    expect(run.stdout).toMatch(/manifest_hash: sha256:[0-9a-f]{64}/);
  });

  it("exits 1 when --against finds tools used but not granted, and lists them", () => {
    const run = authority(["manifest", fixture("guard-agent"), "--against", join(scratch, "narrow.yaml")]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/used but not granted \(refused at run time\):\n {4}mail\.read\n {4}mail\.send\n/);
    expect(run.stdout).toContain("least privilege: no");
  });

  it("exits 0 when the scope covers every tool, naming grants that are never used", () => {
    const exact = authority(["manifest", fixture("guard-agent"), "--against", join(scratch, "exact.yaml")]);
    expect(exact.code, exact.stderr).toBe(0);
    expect(exact.stdout).toContain("least privilege: yes");
    const wide = authority(["manifest", fixture("guard-agent"), "--against", join(scratch, "wide.json"), "--format", "json"]);
    expect(wide.code, wide.stderr).toBe(0);
    const report = JSON.parse(wide.stdout);
    expect(report.tools.map((t: { name: string }) => t.name)).toEqual(["mail.read", "mail.send", "orders.lookup", "payments.refund"]);
    expect(report.comparison).toEqual({ used_not_granted: [], granted_not_used: ["crm.write"], least_privilege: false, complete: true });
  });

  it("says when the manifest is incomplete, and refuses a broken family or a missing directory", () => {
    const dynamic = authority(["manifest", fixture("dynamic-agent")]);
    expect(dynamic.code).toBe(1);
    expect(dynamic.stdout).toContain("do not certify this manifest");
    const broken = authority(["manifest", fixture("guard-agent"), "--against", join(scratch, "broken.yaml")]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/broken\.yaml:\d+:\d+: error\[/);
    expect(authority(["manifest", "no/such/dir"]).code).toBe(2);
    expect(authority(["manifest"]).code).toBe(2);
  });
});
