// The `authority` CLI as a user runs it: spawned, with exit codes, stdout and stderr checked.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, cpSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv } from "ajv";
import { beforeAll, describe, expect, it } from "vitest";
import { authority, buildCli, fixtures, root } from "./run-cli.js";

beforeAll(() => buildCli(), 180_000);

describe("authority --help and the command table", () => {
  it("lists every command, each available", () => {
    const run = authority(["--help"]);
    expect(run.code).toBe(0);
    for (const name of [
      "lint",
      "fmt",
      "compile",
      "preview",
      "test",
      "push",
      "keys create",
      "keys list",
      "keys revoke",
      "migrate",
      "manifest",
      "ledger verify",
      "serve",
    ]) {
      expect(run.stdout).toContain(`  ${name} `);
    }
    expect(run.stdout).not.toContain("Not yet available");
  });

  it("an unknown command or option is a usage error with status 2", () => {
    expect(authority(["frobnicate"]).code).toBe(2);
    const run = authority(["lint", "--colour"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown option `--colour`");
    expect(authority(["keys"]).stderr).toContain("`keys create`");
  });

  it("each command has its own help", () => {
    const run = authority(["test", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("authority test [PATH...]");
  });

  it("a group of commands has its help too: `keys --help` exits 0 with every subcommand's usage", () => {
    for (const flag of ["--help", "-h"]) {
      const run = authority(["keys", flag]);
      expect(run.code, run.stderr).toBe(0);
      for (const usage of [
        "authority keys create --identity",
        "authority keys create --admin --database URL",
        "authority keys list",
        "authority keys revoke KEY_ID",
      ]) {
        expect(run.stdout).toContain(usage);
      }
    }
    expect(authority(["keys"]).code).toBe(2);
  });
});

describe("argument checks that used to let a mistake through", () => {
  it("preview refuses an action option without --tool instead of ignoring it", () => {
    for (const args of [["--amount", "abc"], ["--amount", "500"], ["--currency", "EUR"], ["--clean"]]) {
      const run = authority(["preview", "policies/procurement-agent.yaml", ...args]);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).toContain(`\`${args[0]}\` describes the action of \`--tool NAME\``);
    }
    const bad = authority(["preview", "policies/procurement-agent.yaml", "--tool", "purchase.quote", "--amount", "abc"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("`--amount` must be an integer, not `abc`");
  });

  it("test on a folder without families behaves like lint: exit 0, and says none was found", () => {
    const dir = mkdtempSync(join(tmpdir(), "authority-nofamilies-"));
    try {
      const lint = authority(["lint", dir]);
      const tested = authority(["test", dir]);
      expect(lint.code).toBe(0);
      expect(tested.code).toBe(0);
      expect(tested.stdout).toContain("no family files found");
      expect(tested.stdout).toMatch(/\n0 passed, 0 failed\n$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the families in policies/", () => {
  it("lint passes", () => {
    const run = authority(["lint", "policies/"]);
    expect(run.stdout).toMatch(/0 errors/);
    expect(run.code, run.stdout + run.stderr).toBe(0);
  });

  it("every example passes `authority test`", () => {
    const run = authority(["test", "policies/"]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const summary = /^(\d+) passed, (\d+) failed$/m.exec(run.stdout);
    expect(summary).not.toBeNull();
    expect(Number(summary![1])).toBeGreaterThanOrEqual(25);
    expect(Number(summary![2])).toBe(0);
  });

  it("the policies are formatted canonically", () => {
    const run = authority(["fmt", "--check", "policies/"]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
  });

  it("compile prints the body with its content hash, and the same content gives the same hash", () => {
    const first = authority(["compile", "policies/procurement-agent.yaml"]);
    expect(first.code, first.stderr).toBe(0);
    const body = JSON.parse(first.stdout) as Record<string, unknown>;
    expect(body["id"]).toBe("procurement-agent");
    expect(body["content_hash"]).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(JSON.parse(authority(["compile", "policies/procurement-agent.yaml"]).stdout)).toEqual(body);
  });

  it("preview prints each gate of each example", () => {
    const run = authority(["preview", "policies/procurement-agent.yaml"]);
    expect(run.code, run.stderr).toBe(0);
    for (const gate of ["grant", "status", "window", "audience", "certification", "scope", "conditions", "policy", "budget"]) {
      expect(run.stdout).toContain(` ${gate} `);
    }
    expect(run.stdout).toContain("outcome: gated");
  });

  it("preview takes an action from flags and parameters", () => {
    const run = authority([
      "preview",
      "policies/procurement-agent.yaml",
      "--param",
      "approval_threshold_minor=20000",
      "--tool",
      "purchase.create",
      "--amount",
      "15000",
      "--currency",
      "EUR",
      "--audience",
      "erp.example.com",
      "--args",
      '{"supplier":"globex-it"}',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("outcome: allow");
  });

  it("preview takes a grant issue body with its action, and an action given by flags", () => {
    const embedded = authority(["preview", "test/cli/fixtures/grant.json"]);
    expect(embedded.code, embedded.stderr).toBe(0);
    expect(embedded.stdout).toContain('outcome: gated; approvable by: approver in ["cfo@example.com"]');
    const approved = authority([
      "preview",
      "test/cli/fixtures/grant.json",
      "--tool",
      "invoice.pay",
      "--amount",
      "70000",
      "--currency",
      "EUR",
      "--approver",
      "cfo@example.com",
      "--format",
      "json",
    ]);
    expect(approved.code, approved.stderr).toBe(0);
    expect((JSON.parse(approved.stdout) as { outcome: string }[]).map((r) => r.outcome)).toEqual(["allow"]);
  });

  it("preview reports an error in a grant's policy at its line and column in the JSON", () => {
    const run = authority(["preview", "test/cli/fixtures/broken/grant-bad-policy.json"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("test/cli/fixtures/broken/grant-bad-policy.json:8:39: error[policy/unknown-name]: unknown name `aprover`");
  });

  it("compile --out-dir writes one body per family", () => {
    const dir = mkdtempSync(join(tmpdir(), "authority-compile-"));
    try {
      const run = authority(["compile", "policies/", "--out-dir", dir]);
      expect(run.code, run.stderr).toBe(0);
      const body = JSON.parse(readFileSync(join(dir, "support-agent.json"), "utf8")) as { id: string; content_hash: string };
      expect(body.id).toBe("support-agent");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("preview rejects a parameter out of bounds", () => {
    const run = authority([
      "preview",
      "policies/procurement-agent.yaml",
      "--param",
      "budget_amount_minor=90000",
      "--tool",
      "purchase.quote",
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("above its maximum 50000");
  });
});

/** The first `file:line:col` position reported for a file in text output. */
function positions(output: string, file: string): string[] {
  return [...output.matchAll(new RegExp(`${file.replace(/[.]/g, "\\.")}:(\\d+):(\\d+)`, "g"))].map((m) => `${m[1]}:${m[2]}`);
}

describe("the corpus of broken families", () => {
  const cases: readonly { file: string; code: RegExp; at: string }[] = [
    { file: "yaml-syntax.yaml", code: /error\[yaml\/bad-indent\]/, at: "5:13" },
    { file: "schema-error.yaml", code: /error\[schema\]: `principal_type` must be one of `human`, `team`, `service`/, at: "8:19" },
    { file: "schema-error.yaml", code: /error\[schema\]: unknown field `tools`/, at: "11:5" },
    { file: "bad-policy.yaml", code: /error\[policy\/[^\]]+\]/, at: "16:10" },
    { file: "bad-policy-quoted.yaml", code: /error\[policy\/[^\]]+\]/, at: "11:36" },
    {
      file: "out-of-bounds.yaml",
      code: /error\[example\/parameter-bounds\]: example `a budget above the bound`: parameter `budget_amount_minor` is 60000, above its maximum 50000/,
      at: "16:39",
    },
    { file: "unknown-placeholder.yaml", code: /error\[placeholder-unknown\]: `\$\{tema\}` names no declared parameter/, at: "9:21" },
    { file: "bad.policy", code: /error\[policy\/[^\]]+\]/, at: "3:6" },
    { file: "placeholder-in-string.yaml", code: /error\[placeholder-in-string\]/, at: "12:41" },
  ];

  // One run over the whole corpus (each spawn costs a process start); each case reads its line.
  let corpus: ReturnType<typeof authority> | undefined;
  const corpusRun = (): ReturnType<typeof authority> => (corpus ??= authority(["lint", "test/cli/fixtures/broken/"]));

  it("lint over the corpus exits 1", () => {
    expect(corpusRun().code, corpusRun().stderr).toBe(1);
  });

  for (const c of cases) {
    it(`${c.file} is reported at ${c.at}`, () => {
      const run = corpusRun();
      const line = run.stdout.split("\n").find((l) => l.startsWith(`test/cli/fixtures/broken/${c.file}:${c.at}:`) && c.code.test(l));
      expect(line, run.stdout).toBeDefined();
    });
  }

  it("a single broken file exits 1 too", () => {
    expect(authority(["lint", "test/cli/fixtures/broken/out-of-bounds.yaml"]).code).toBe(1);
  });

  it("text output shows a code frame with a caret under the error", () => {
    const run = authority(["lint", "test/cli/fixtures/broken/bad-policy.yaml"]);
    expect(run.stdout).toContain("16 |       && amount_minr > 0\n   |          ^^^^^^^^^^^");
  });

  it("json output carries file, line and column", () => {
    const run = authority(["lint", "--format", "json", "test/cli/fixtures/broken/unknown-placeholder.yaml"]);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as {
      errors: number;
      diagnostics: { file: string; line: number; column: number; code: string }[];
    };
    expect(report.errors).toBe(1);
    expect(report.diagnostics[0]).toMatchObject({
      file: "test/cli/fixtures/broken/unknown-placeholder.yaml",
      line: 9,
      column: 21,
      code: "placeholder-unknown",
    });
  });

  it("sarif output is valid SARIF 2.1.0 and points at the same places", () => {
    const run = authority(["lint", "--format", "sarif", "test/cli/fixtures/broken/"]);
    expect(run.code).toBe(1);
    const log = JSON.parse(run.stdout) as {
      runs: {
        results: {
          ruleId: string;
          locations: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number; startColumn: number } } }[];
        }[];
      }[];
    };
    const schema = JSON.parse(readFileSync(join(fixtures, "sarif-2.1.0-subset.schema.json"), "utf8")) as object;
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
    const places = log.runs[0]!.results.map(
      (r) =>
        `${r.locations[0]!.physicalLocation.artifactLocation.uri}:${r.locations[0]!.physicalLocation.region.startLine}:${r.locations[0]!.physicalLocation.region.startColumn}`,
    );
    expect(places).toContain("test/cli/fixtures/broken/unknown-placeholder.yaml:9:21");
    expect(places).toContain("test/cli/fixtures/broken/schema-error.yaml:8:19");
  });

  it("a wrong example fails `authority test` at its expectation, with the summary line", () => {
    const run = authority(["test", "test/cli/fixtures/wrong-example.yaml"]);
    expect(run.code).toBe(1);
    expect(positions(run.stdout, "test/cli/fixtures/wrong-example.yaml")).toEqual(["18:13"]);
    expect(run.stdout).toContain("expected `allow`, got `deny` from the policy gate");
    expect(run.stdout.trimEnd().split("\n").pop()).toBe("1 passed, 1 failed");
  });

  it("a family that does not compile counts as a failure in `authority test`", () => {
    const run = authority(["test", "test/cli/fixtures/broken/schema-error.yaml"]);
    expect(run.code).toBe(1);
    expect(run.stdout.trimEnd().split("\n").pop()).toBe("0 passed, 1 failed");
  });
});

/** util-linux `script` runs a command on a pseudo-terminal; without it the terminal case cannot be shown. */
const scriptTool = spawnSync("script", ["--version"], { encoding: "utf8" }).status === 0;

describe("output on a terminal and when piped", () => {
  // Skipped only where `script` is missing (reason: no pseudo-terminal to run the CLI on).
  it.skipIf(!scriptTool)("on a terminal there are colours and a progress line, and NO_COLOR removes the colours", () => {
    const onTerminal = (extra: string): string =>
      spawnSync("script", ["-qec", `${extra} node cli/bin/authority.js lint test/cli/fixtures/broken/bad.policy`, "/dev/null"], {
        cwd: root,
        encoding: "utf8",
        env: { ...process.env, CI: "", FORCE_COLOR: "", NO_COLOR: "" },
      }).stdout;
    const coloured = onTerminal("env -u CI -u NO_COLOR -u FORCE_COLOR");
    expect(coloured).toContain("\x1b[31m");
    expect(coloured).toContain("linting 1/1");
    const plain = onTerminal("env -u CI -u FORCE_COLOR NO_COLOR=1");
    expect(plain).not.toContain("\x1b[31m");
    expect(plain).toContain("bad.policy:3:6: error[policy/type-mismatch]");
  });

  it("piped output has no colour codes, and FORCE_COLOR adds them", () => {
    expect(authority(["lint", "test/cli/fixtures/broken/bad.policy"]).stdout).not.toContain("\x1b[");
    expect(authority(["lint", "test/cli/fixtures/broken/bad.policy"], { env: { FORCE_COLOR: "1" } }).stdout).toContain("\x1b[");
  });
});

describe("authority fmt", () => {
  it("rewrites only the policy of a family and leaves the rest of the file alone", () => {
    const dir = mkdtempSync(join(tmpdir(), "authority-fmt-"));
    try {
      cpSync(join(fixtures, "unformatted.yaml"), join(dir, "family.yaml"));
      const before = readFileSync(join(dir, "family.yaml"), "utf8");
      const check = authority(["fmt", "--check", "family.yaml"], { cwd: dir });
      expect(check.code).toBe(1);
      expect(check.stdout).toContain("family.yaml: not formatted");
      expect(readFileSync(join(dir, "family.yaml"), "utf8")).toBe(before);
      const fmt = authority(["fmt", "family.yaml"], { cwd: dir });
      expect(fmt.code, fmt.stderr).toBe(0);
      const after = readFileSync(join(dir, "family.yaml"), "utf8");
      expect(after).not.toBe(before);
      expect(after.split("\n").slice(0, 10)).toEqual(before.split("\n").slice(0, 10));
      expect(authority(["fmt", "--check", "family.yaml"], { cwd: dir }).code).toBe(0);
      expect(authority(["lint", "family.yaml"], { cwd: dir }).code).toBe(0);
      writeFileSync(join(dir, "p.policy"), 'amount_minor<=5000&&currency=="EUR"');
      expect(authority(["fmt", "p.policy"], { cwd: dir }).code).toBe(0);
      expect(authority(["fmt", "--check", "p.policy"], { cwd: dir }).code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
