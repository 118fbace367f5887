// Issue 23, findings 3, 4 and 5 on the command line: hostile policies are diagnostics at their file,
// line and column (exit 1, never 2), every other file is still reported, and `fmt` writes nothing
// it would break.
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { authority, cliScratchDir, root } from "./run-cli.js";

const dir = cliScratchDir("authority-hostile-");

/** A family file whose policy (on line 10, from column 11) is `policy`, followed by `rest`. */
function familyText(id: string, policy: string, rest: readonly string[] = []): string {
  const head = [`id: ${id}`, "version: 1", "reviewed_by: [alice@example.com]", "parameters: {}", "grant:"];
  const grant = [
    "  agent_id: agt_6ys3c4dwa7n36096q14dr9gpqy",
    "  principal_type: team",
    "  principal_id: ops",
    "  scope: {tool: [purchase.create]}",
  ];
  return [...head, ...grant, `  policy: ${policy}`, ...rest, ""].join("\n");
}

/** Each result of a SARIF log as `<uri> <rule id>`. */
function sarifResults(stdout: string): string[] {
  const log = JSON.parse(stdout) as {
    runs: { results: { ruleId: string; locations: { physicalLocation: { artifactLocation: { uri: string } } }[] }[] }[];
  };
  return log.runs[0]!.results.map((r) => `${r.locations[0]!.physicalLocation.artifactLocation.uri} ${r.ruleId}`);
}

const sum = (operands: number): string => `${Array.from({ length: operands }, () => "1").join("+")} > 0`;

describe("authority lint on hostile policies", () => {
  const files: Record<string, string> = {
    "a-constructor.policy": "constructor == 1\n",
    "b-proto.policy": 'tool == "x" ||\n  __proto__ != null\n',
    "c-tostring.policy": 'toString == "x"\n',
    "d-sum.policy": `${sum(1900)}\n`,
    "e-fine.policy": 'tool == "payments.refund"\n',
    "f-warning.policy": "uses > 5 && uses < 2\n",
  };

  beforeAll(() => {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  });

  it("reports each error at its place, keeps going, and exits 1", () => {
    const run = authority(["lint", "."], { cwd: dir });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).not.toContain("internal error");
    expect(run.stdout).toContain("a-constructor.policy:1:1: error[policy/unknown-name]: unknown name `constructor`");
    expect(run.stdout).toContain("b-proto.policy:2:3: error[policy/unknown-name]: unknown name `__proto__`");
    expect(run.stdout).toContain("c-tostring.policy:1:1: error[policy/unknown-name]");
    expect(run.stdout).toMatch(/d-sum\.policy:1:1: error\[policy\/nesting-too-deep\]/);
    expect(run.stdout).toContain("f-warning.policy:1:1: warning[policy/never-allows]");
    expect(run.stdout.trimEnd().split("\n").pop()).toBe("6 files checked: 4 errors, 1 warning");
  });

  it("still writes a full SARIF log", () => {
    const run = authority(["lint", "--format", "sarif", "."], { cwd: dir });
    expect(run.code).toBe(1);
    const results = sarifResults(run.stdout);
    expect(results).toEqual(
      expect.arrayContaining([
        "a-constructor.policy policy/unknown-name",
        "b-proto.policy policy/unknown-name",
        "d-sum.policy policy/nesting-too-deep",
        "f-warning.policy policy/never-allows",
      ]),
    );
  });
});

// A real I/O error, no stand-in: `/proc/self/mem` is a regular file to `stat`, but reading it from
// its start fails with EIO. Linked into a directory, it is one file that cannot be read.
describe.runIf(process.platform === "linux")("a file whose reading throws (decision 0119)", () => {
  let sub: string;
  beforeAll(() => {
    sub = join(dir, "unreadable");
    mkdirSync(sub);
    writeFileSync(join(sub, "a-constructor.policy"), "constructor == 1\n");
    symlinkSync("/proc/self/mem", join(sub, "b-unreadable.policy"));
    writeFileSync(join(sub, "c-fine.policy"), 'tool == "payments.refund"\n');
    writeFileSync(join(sub, "d-warning.policy"), "uses > 5 && uses < 2\n");
    cpSync(join(root, "policies", "support-agent.yaml"), join(sub, "e-support-agent.yaml"));
    symlinkSync("/proc/self/mem", join(sub, "f-unreadable.yaml"));
  });

  it("lint reports it at that file as an internal error, every other file's diagnostics and the summary; exit 2", () => {
    // The subject is a file whose reading throws, not proofs: the solver is left out (`--no-prove`).
    const run = authority(["lint", "--no-prove", "."], { cwd: sub });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain(
      "b-unreadable.policy:1:1: error[internal-error]: internal error while checking this file: `EIO: i/o error, read`",
    );
    expect(run.stdout).toContain("f-unreadable.yaml:1:1: error[internal-error]");
    expect(run.stdout).toContain("a-constructor.policy:1:1: error[policy/unknown-name]: unknown name `constructor`");
    expect(run.stdout).toContain("d-warning.policy:1:1: warning[policy/never-allows]");
    expect(run.stdout.trimEnd().split("\n").pop()).toBe("6 files checked: 3 errors, 1 warning");
  });

  it("lint still writes the whole SARIF log", () => {
    const run = authority(["lint", "--no-prove", "--format", "sarif", "."], { cwd: sub });
    expect(run.code).toBe(2);
    const results = sarifResults(run.stdout);
    expect(results).toEqual(
      expect.arrayContaining([
        "a-constructor.policy policy/unknown-name",
        "b-unreadable.policy internal-error",
        "d-warning.policy policy/never-allows",
        "f-unreadable.yaml internal-error",
      ]),
    );
  });

  it("test fails that family, runs the others and prints the summary; exit 2", () => {
    const run = authority(["test", "."], { cwd: sub });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toContain("FAIL f-unreadable.yaml: the family could not be checked");
    expect(run.stdout).toContain("f-unreadable.yaml:1:1: error[internal-error]");
    expect(run.stdout.trimEnd().split("\n").pop()).toMatch(/^[1-9]\d* passed, 1 failed$/);
  });
});

describe("authority test on a family whose policy names Object.prototype", () => {
  it("fails that family at its place and still runs the others, with the summary", () => {
    const sub = join(dir, "families");
    mkdirSync(sub);
    cpSync(join(root, "policies", "support-agent.yaml"), join(sub, "support-agent.yaml"));
    writeFileSync(
      join(sub, "proto.yaml"),
      familyText("proto", "constructor == 1", ["examples:", "  - {name: anything, action: {tool: purchase.create}, expect: allow}"]),
    );
    const run = authority(["test", "families"], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("proto.yaml:10:11: error[policy/unknown-name]: unknown name `constructor`");
    expect(run.stdout.trimEnd().split("\n").pop()).toMatch(/^\d+ passed, 1 failed$/);
  });
});

describe("authority fmt never writes a broken policy", () => {
  it("formats sixty minus signs into a policy that still parses", () => {
    const path = join(dir, "minus.policy");
    writeFileSync(path, `${"-".repeat(60)}1 < 5\n`);
    const run = authority(["fmt", "minus.policy"], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const formatted = readFileSync(path, "utf8");
    expect(formatted).not.toContain("(");
    const lint = authority(["lint", "minus.policy"], { cwd: dir });
    expect(lint.stdout).not.toContain("error[");
  });

  it("refuses a compact policy near 4 KiB, leaves the file untouched and exits 1 with the place", () => {
    const path = join(dir, "compact.policy");
    const compact = `${Array.from({ length: 510 }, () => "uses>0").join("&&")}\n`;
    writeFileSync(path, compact);
    expect(authority(["lint", "compact.policy"], { cwd: dir }).stdout).not.toContain("error[");
    const run = authority(["fmt", "compact.policy"], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^compact\.policy:1:1: error: formatted, this policy would be \d+ bytes, longer than 4096 \[policy-too-long\]/,
    );
    expect(readFileSync(path, "utf8")).toBe(compact);
  });

  it("refuses the same policy inside a family and leaves the family untouched", () => {
    const path = join(dir, "compact.yaml");
    const family = familyText("compact", Array.from({ length: 505 }, () => "uses>0").join("&&"));
    writeFileSync(path, family);
    const run = authority(["fmt", "compact.yaml"], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^compact\.yaml:10:11: error: the policy: formatted, this policy would be \d+ bytes/);
    expect(readFileSync(path, "utf8")).toBe(family);
  });
});

describe("command-line names", () => {
  it("`--constructor` is an unknown option like any other (exit 2), not a silently accepted one", () => {
    const run = authority(["lint", "--constructor", "x", "."], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown option `--constructor`");
  });

  it("`--param __proto__=1` is reported as an unknown parameter, not dropped", () => {
    const run = authority(["preview", "policies/support-agent.yaml", "--param", "__proto__=1", "--tool", "ticket.read"]);
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toContain("unknown parameter `__proto__`");
  });
});
