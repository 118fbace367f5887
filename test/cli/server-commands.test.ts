// `authority migrate`, `serve`, `keys …`, `push` and `ledger verify` against the real reference server
// on the loopback address, started by `authority serve` in its own process.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorityAsync, buildCli, root } from "./run-cli.js";
import type { Agent, Decision, Grant, GrantFamilyList, KeyCreated } from "@agent-authority/sdk";

const ADMIN_KEY = "test-admin-key-0123456789abcdefghijklmnop";
let dataDir = "";
let serve: ChildProcess | undefined;
let base = "";

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    AUTHORITY_DATA_DIR: dataDir,
    AUTHORITY_LOG_LEVEL: "silent",
    AUTHORITY_ADMIN_KEY: ADMIN_KEY,
    AUTHORITY_DATABASE_URL: "",
    ...extra,
  };
}

beforeAll(async () => {
  buildCli();
  dataDir = mkdtempSync(join(tmpdir(), "authority-serve-"));
  const migrated = await authorityAsync(["migrate"], { env: env() });
  expect(migrated.code, migrated.stderr).toBe(0);
  expect(migrated.stdout).toMatch(/^applied migrations? /);
  serve = spawn(process.execPath, [join(root, "cli", "bin", "authority.js"), "serve", "--port", "0"], {
    // The URL is in the `listening` log line (stdout carries JSON lines only), so this one logs.
    cwd: root,
    env: { ...process.env, ...env(), NO_COLOR: "1", AUTHORITY_LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  base = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 30_000);
    serve!.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const match = /"msg":"listening","url":"([^"]+)"/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    serve!.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
  });
}, 180_000);

afterAll(async () => {
  if (serve !== undefined && serve.exitCode === null) {
    const exited = new Promise<number | null>((resolve) => serve!.once("exit", (code) => resolve(code)));
    serve.kill("SIGTERM");
    expect(await exited).toBe(0);
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the server commands", () => {
  it("migrate again finds the database up to date", async () => {
    const run = await authorityAsync(["migrate"], { env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("is up to date");
  });

  it("keys create, list and revoke manage keys over HTTP", async () => {
    const admin = env({ AUTHORITY_SERVER: base, AUTHORITY_KEY: ADMIN_KEY });
    const created = await authorityAsync(
      ["keys", "create", "--identity", "ci@example.com", "--kind", "service", "--role", "issuer", "--format", "json"],
      { env: admin },
    );
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout) as { id: string; key: string; roles: string[] };
    expect(key.roles).toEqual(["issuer"]);

    const listed = await authorityAsync(["keys", "list"], { env: admin });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`${key.id}\\s+ci@example.com\\s+service\\s+issuer\\s+active`));
    expect(listed.stdout).not.toContain(key.key);

    const asIssuer = await authorityAsync(["keys", "list"], { env: env({ AUTHORITY_SERVER: base, AUTHORITY_KEY: key.key }) });
    expect(asIssuer.code).toBe(1);
    expect(asIssuer.stderr).toContain("HTTP 403");

    const revoked = await authorityAsync(["keys", "revoke", key.id, "--reason", "rotated"], { env: admin });
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(`revoked ${key.id} (ci@example.com)\n`);
    const afterwards = await authorityAsync(["keys", "list", "--key", key.key, "--server", base]);
    expect(afterwards.code).toBe(1);
    expect(afterwards.stderr).toContain("HTTP 401");
  });

  it("keys create makes an enforcement point's key for the agents named by repeated --agent-id", async () => {
    const admin = env({ AUTHORITY_SERVER: base, AUTHORITY_KEY: ADMIN_KEY });
    const agents: string[] = [];
    for (const name of ["pep-a", "pep-b"]) {
      const reply = await fetch(`${base}/agents`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ name }),
      });
      agents.push(((await reply.json()) as { id: string }).id);
    }
    const created = await authorityAsync(
      [
        "keys",
        "create",
        "--identity",
        "gateway",
        "--kind",
        "service",
        "--role",
        "enforcer",
        "--agent-id",
        agents[0]!,
        "--agent-id",
        agents[1]!,
        "--format",
        "json",
      ],
      { env: admin },
    );
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ roles: ["enforcer"], agent_ids: agents, agent_id: null });
    const twice = await authorityAsync(
      ["keys", "create", "--identity", "bot", "--kind", "service", "--role", "agent", "--agent-id", agents[0]!, "--agent-id", agents[1]!],
      { env: admin },
    );
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain("give `--agent-id` once");
  });

  it("signing-keys list and rotate: the JWKS without a key, rotation with an admin key, the server key file beside the data", async () => {
    // The first start made the server key in the data directory, readable by its owner alone.
    const keyFile = join(dataDir, "server.key");
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyFile, "utf8")).toMatch(/^[A-Za-z0-9_-]{43}\n$/);
    const listed = await authorityAsync(["signing-keys", "list", "--format", "json"], { env: env({ AUTHORITY_SERVER: base }) });
    expect(listed.code, listed.stderr).toBe(0);
    const before = JSON.parse(listed.stdout) as { keys: { kid: string; status: string }[] };
    expect(before.keys.filter((k) => k.status === "active")).toHaveLength(1);
    const refused = await authorityAsync(["signing-keys", "rotate"], { env: env({ AUTHORITY_SERVER: base }) });
    expect(refused.code).toBe(2);
    const rotated = await authorityAsync(["signing-keys", "rotate", "--reason", "drill"], {
      env: env({ AUTHORITY_SERVER: base, AUTHORITY_KEY: ADMIN_KEY }),
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    const old = before.keys.find((k) => k.status === "active")!.kid;
    expect(rotated.stdout).toContain(`retired ${old}; now signing with `);
    const after = JSON.parse(
      (await authorityAsync(["signing-keys", "list", "--format", "json"], { env: env({ AUTHORITY_SERVER: base }) })).stdout,
    ) as { keys: { kid: string; status: string }[] };
    expect(after.keys).toHaveLength(before.keys.length + 1);
    expect(after.keys.find((k) => k.kid === old)!.status).toBe("retired");
  });

  it("keys create refuses an incomplete request before sending it", async () => {
    const run = await authorityAsync(["keys", "create", "--identity", "x@example.com", "--kind", "human"], {
      env: env({ AUTHORITY_SERVER: base, AUTHORITY_KEY: ADMIN_KEY }),
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("at least one `--role`");
  });
});

/** A JSON call to the served API with the admin key, or another key. */
async function api<T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
  key = ADMIN_KEY,
): Promise<{ status: number; body: T }> {
  const v1 = base.endsWith("/v1") ? base : `${base}/v1`;
  const response = await fetch(`${v1}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

describe("authority push against the real server", () => {
  const admin = (): Record<string, string> => env({ AUTHORITY_SERVER: base, AUTHORITY_KEY: ADMIN_KEY });

  it("pushes every family of policies/ to the family endpoint; the same content again is the same version", async () => {
    const first = await authorityAsync(["push", "policies/"], { env: admin() });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toContain("5 pushed, 0 not pushed");
    expect(first.stdout).toMatch(
      /pushed support-agent v1 \(sha256:[0-9a-f]{12}…\) from policies\/support-agent\.yaml: new version 1 of `fam_[0-9a-z]{26}`/,
    );
    const again = await authorityAsync(["push", "policies/support-agent.yaml"], { env: admin() });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toMatch(/unchanged, already version 1 of `fam_/);
    const listed = await api<GrantFamilyList>("GET", "/grant-families");
    expect(listed.body.families.map((f: { name: string }) => f.name).sort()).toEqual([
      "code-review-bot",
      "data-export-agent",
      "procurement-agent",
      "research-orchestrator",
      "support-agent",
    ]);
  });

  it("reports a changed family under the same version as a conflict, and pushes it once the version is raised", async () => {
    const dir = mkdtempSync(join(tmpdir(), "authority-push-"));
    try {
      const original = readFileSync(join(root, "policies", "support-agent.yaml"), "utf8");
      const changed = original.replace(/^description: .*$/m, "description: Answers tickets and refunds for one customer, politely.");
      writeFileSync(join(dir, "support-agent.yaml"), changed);
      const refused = await authorityAsync(["push", join(dir, "support-agent.yaml")], { env: admin() });
      expect(refused.code).toBe(1);
      expect(refused.stdout).toContain("HTTP 409: family_version_conflict");
      expect(refused.stdout).toContain("0 pushed, 1 not pushed");
      writeFileSync(join(dir, "support-agent.yaml"), changed.replace(/^version: 1$/m, "version: 2"));
      const raised = await authorityAsync(["push", join(dir, "support-agent.yaml")], { env: admin() });
      expect(raised.code, raised.stdout + raised.stderr).toBe(0);
      expect(raised.stdout).toMatch(/new version 2 of `fam_/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("authority push: refusals and usage", () => {
  it("reports a refusal with the problem's code and exits 1", async () => {
    const denied = await authorityAsync([
      "push",
      "policies/procurement-agent.yaml",
      "--server",
      base,
      "--key",
      "aa_not-a-key-of-this-server-0123456789",
    ]);
    expect(denied.code).toBe(1);
    expect(denied.stdout).toContain("HTTP 401: unauthenticated");
    expect(denied.stdout).toContain("0 pushed, 1 not pushed");
  });

  it("sends nothing when a family has errors, and needs a server and a key", async () => {
    const before = (await api<GrantFamilyList>("GET", "/grant-families")).body.families.length;
    const run = await authorityAsync([
      "push",
      "test/cli/fixtures/broken/schema-error.yaml",
      "policies/support-agent.yaml",
      "--server",
      base,
      "--key",
      ADMIN_KEY,
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("nothing was pushed");
    expect((await api<GrantFamilyList>("GET", "/grant-families")).body.families.length).toBe(before);
    expect((await authorityAsync(["push", "policies/"], { env: { AUTHORITY_SERVER: "", AUTHORITY_KEY: "" } })).code).toBe(2);
    expect((await authorityAsync(["push", "policies/", "--server", base], { env: { AUTHORITY_KEY: "" } })).stderr).toContain(
      "AUTHORITY_KEY",
    );
  });

  it("--dry-run compiles and lists what would be sent, sending nothing", async () => {
    const run = await authorityAsync(["push", "policies/code-review-bot.yaml", "--dry-run", "--server", base], {
      env: { AUTHORITY_KEY: "" },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^would push code-review-bot v1 \(sha256:[0-9a-f]{12}…\) from policies\/code-review-bot\.yaml to http:\/\/127\.0\.0\.1:\d+\/v1\/grant-families\n$/,
    );
  });
});

describe("authority ledger verify", () => {
  it("verifies the chains the server sealed, reading the database and asking the server", async () => {
    const agent = await api<Agent>("POST", "/agents", { name: "ledger-agent" });
    const grant = await api<Grant>("POST", "/grants", {
      agent_id: agent.body.id,
      principal_type: "team",
      principal_id: "ops",
      scope: { tool: ["status.check"] },
      enforcement_mode: "observe",
    });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    const key = await api<KeyCreated>("POST", "/keys", {
      identity: "ledger-agent-key",
      kind: "service",
      roles: ["agent"],
      agent_id: agent.body.id,
    });
    for (const tool of ["status.check", "status.check", "mail.send"]) {
      expect((await api("POST", "/authorize", { grant_id: grant.body.id, tool }, key.body.key)).status).toBe(200);
    }
    const fromDatabase = await authorityAsync(["ledger", "verify"], { env: env() });
    expect(fromDatabase.code, fromDatabase.stderr).toBe(0);
    expect(fromDatabase.stdout).toMatch(/^verified: [1-9][0-9]* records in [1-9][0-9]* chains\n$/);
    const overHttp = await authorityAsync(["ledger", "verify", "--server", base, "--format", "json"], {
      env: { AUTHORITY_KEY: ADMIN_KEY },
    });
    expect(overHttp.code, overHttp.stderr).toBe(0);
    expect(JSON.parse(overHttp.stdout)).toMatchObject({ ok: true, broken: null });
    expect(JSON.parse(overHttp.stdout).records).toBeGreaterThanOrEqual(3);
  });
});

describe("authority impact", () => {
  const family = (version: number, policy: string): string => `id: cli-impact
version: ${version}
reviewed_by: [reviewer@example.com]
parameters:
  agent_id: {type: string, pattern: "agt_[0-9a-hjkmnp-tv-z]{26}", example: agt_nwj47tan9zt24mnpzx45hy43kw}
  limit_rows: {type: int, min: 0, max: 5000, default: 2000}
grant:
  agent_id: \${agent_id}
  principal_type: team
  principal_id: payments
  scope: {tool: [export.run]}
  enforcement_mode: observe
  policy: '${policy}'
examples:
  - name: a small payment is allowed
    action: {tool: export.run, args: {rows: 500}}
    expect: allow
`;

  it("replays the family's sealed decisions under a candidate file and prints what would change", async () => {
    const dir = mkdtempSync(join(tmpdir(), "authority-impact-"));
    const admin = env({ AUTHORITY_SERVER: base, AUTHORITY_KEY: ADMIN_KEY });
    try {
      writeFileSync(join(dir, "cli-impact.yaml"), family(1, "args.rows <= ${limit_rows}"));
      const notYet = await authorityAsync(["impact", join(dir, "cli-impact.yaml")], { env: admin });
      expect(notYet.code).toBe(1);
      expect(notYet.stderr).toContain("is not on the server; push it first");
      expect((await authorityAsync(["push", join(dir, "cli-impact.yaml")], { env: admin })).code).toBe(0);
      const famId = (await api<GrantFamilyList>("GET", "/grant-families?name=cli-impact")).body.families[0].id as string;
      const agent = await api<Agent>("POST", "/agents", { name: "impact-agent" });
      const grant = await api<Grant>("POST", `/grant-families/${famId}/instantiate`, { parameters: { agent_id: agent.body.id } });
      expect(grant.status, JSON.stringify(grant.body)).toBe(201);
      const key = await api<KeyCreated>("POST", "/keys", {
        identity: "impact-agent-key",
        kind: "service",
        roles: ["agent"],
        agent_id: agent.body.id,
      });
      const certificate = {
        basis: "review",
        provenance_version: "model-1",
        manifest_hash: "sha256:11",
        content_hash: "sha256:22",
        market_profile: "EU",
        checks: ["reviewed"],
      };
      expect((await api("POST", `/agents/${agent.body.id}/certification`, certificate)).status).toBe(201);
      const attestation = { manifest_hash: "sha256:11", content_hash: "sha256:22", provenance_version: "model-1" };
      for (const rows of [500, 1500]) {
        const decided = await api<Decision>(
          "POST",
          "/authorize",
          { grant_id: grant.body.id, tool: "export.run", args: { rows }, attestation },
          key.body.key,
        );
        expect(decided.body.would_outcome).toBe("allow");
      }
      writeFileSync(join(dir, "cli-impact.yaml"), family(2, "args.rows <= ${limit_rows} && args.rows < 1000"));
      const run = await authorityAsync(["impact", join(dir, "cli-impact.yaml"), "--days", "7"], { env: admin });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).toMatch(
        /^cli-impact \(`fam_[0-9a-z]{26}`\): candidate v2 \(sha256:[0-9a-f]{12}…\) against v1, sealed decisions of the last 7 days\n/,
      );
      // The outcome printed is enforce's; the candidate runs in observe, which says what it answers there.
      expect(run.stdout).toMatch(
        new RegExp(
          `changes led_[0-9a-z]{26} \\S+ \`export\\.run\` on ${grant.body.id}: allow -> deny \\(policy\\) \\(in \`observe\` it answers allow\\): `,
        ),
      );
      expect(run.stdout).toContain(
        "the candidate runs 1 grant in `observe`, which refuses only unusable grants (0 of 2 replayed decisions); `enforce` would refuse 1\n",
      );
      expect(run.stdout).toMatch(/\n2 replayed, 1 would change under `enforce`\n$/);
      // Beside the replay, the symbolic diff: the new conjunct only narrows, for any action.
      expect(run.stdout).toContain("\n  symbolic diff, for any action: narrows: ");
      const strict = await authorityAsync(["impact", join(dir, "cli-impact.yaml"), "--fail-on-change", "--format", "json"], { env: admin });
      expect(strict.code).toBe(1);
      expect(JSON.parse(strict.stdout)).toMatchObject({ replayed: 2, changed: 1, candidate_version: 2, symbolic: { relation: "narrows" } });
      expect((await authorityAsync(["impact", join(dir, "cli-impact.yaml"), "--days", "91"], { env: admin })).code).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
