// docs/verification.md as a counterparty follows it: save the keys with `authority signing-keys
// list`, stop the server, and verify a saved decision and settlement with `authority signature
// verify` and with the page's own Node.js script; every tampering is refused. The page's worked
// example of a batch signature (decision 1901) verifies as shown, and answers respliced from it (a
// statement moved within its batch, a path or a root from another batch) are refused.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, startServer } from "@agent-authority/server";
import { authorityAsync, buildCli, root } from "./run-cli.js";
import {
  answerBatchText,
  signedStatement,
  SigningKeyring,
  statementLeaf,
  treeWithPaths,
  type Agent,
  type Decision,
  type Grant,
  type KeyCreated,
  type SigningKeySet,
} from "@agent-authority/sdk";

const ADMIN = "aa_admin_verification_doc_0123456789ab";
const ATTESTATION = { manifest_hash: "sha256:m", content_hash: "sha256:c", provenance_version: "p1" };
const dir = mkdtempSync(join(tmpdir(), "authority-verification-"));
const doc = readFileSync(join(root, "docs", "verification.md"), "utf8");

async function post<T = Record<string, unknown>>(base: string, path: string, key: string, body: unknown): Promise<T> {
  const reply = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return (await reply.json()) as T;
}

beforeAll(async () => {
  buildCli();
  const server = await startServer(
    loadConfig({
      AUTHORITY_PORT: "0",
      AUTHORITY_DATA_DIR: join(dir, "data"),
      AUTHORITY_ADMIN_KEY: ADMIN,
      AUTHORITY_LOG_LEVEL: "silent",
      AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "1000000",
    }),
  );
  try {
    const agent = await post<Agent>(server.baseUrl, "/agents", ADMIN, { name: "payer" });
    await post(server.baseUrl, `/agents/${agent.id}/certification`, ADMIN, {
      environment: "development",
      basis: "review",
      ...ATTESTATION,
      checks: ["manual"],
    });
    const key = (
      await post<KeyCreated>(server.baseUrl, "/keys", ADMIN, {
        identity: "payer-agent",
        kind: "service",
        roles: ["agent"],
        agent_id: agent.id,
      })
    ).key;
    const grant = await post<Grant>(server.baseUrl, "/grants", ADMIN, {
      agent_id: agent.id,
      principal_type: "human",
      principal_id: "ops@example.com",
      scope: { tool: ["payments.*"] },
      budget_amount_minor: 10_000,
      budget_currency: "EUR",
    });
    const answer = await post<Decision>(server.baseUrl, "/authorize", key, {
      grant_id: grant.id,
      tool: "payments.send",
      amount_minor: 1200,
      currency: "EUR",
      args: { invoice: "INV-7" },
      attestation: ATTESTATION,
      nonce: "counterparty-nonce-1",
    });
    expect(answer.outcome).toBe("allow");
    writeFileSync(join(dir, "answer.json"), JSON.stringify(answer));
    writeFileSync(
      join(dir, "settlement.json"),
      JSON.stringify(await post(server.baseUrl, `/decisions/${answer.ledger_id}/settle`, key, { amount_minor: 1000 })),
    );
    // The page's command, its output redirected to keys.json.
    const listed = await authorityAsync(["signing-keys", "list", "--server", server.baseUrl.replace(/\/v1$/, ""), "--format", "json"]);
    expect(listed.code, listed.stderr).toBe(0);
    writeFileSync(join(dir, "keys.json"), listed.stdout);
  } finally {
    // Everything below runs with the server stopped.
    await server.close();
  }
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const verifyCli = (args: string[]) => authorityAsync(["signature", "verify", ...args], { cwd: dir });

describe("docs/verification.md, with the server stopped", () => {
  it("verifies the saved decision with the page's command, and what it was expected to say", async () => {
    expect(doc).toContain("authority signature verify answer.json --keys keys.json --tool payments.send --amount 1200");
    const run = await verifyCli(["answer.json", "--keys", "keys.json", "--tool", "payments.send", "--amount", "1200"]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain("verified: signed by the server");
    expect(run.stdout).toContain('nonce: "counterparty-nonce-1"');
    const settled = await verifyCli(["settlement.json", "--keys", "keys.json", "--amount", "1000"]);
    expect(settled.code, settled.stdout).toBe(0);
  });

  it("refuses an answer about something else, a tampered one, another server's keys and an unsigned one", async () => {
    const other = await verifyCli(["answer.json", "--keys", "keys.json", "--amount", "120000"]);
    expect(other.code).toBe(1);
    expect(other.stdout).toContain("not verified (mismatch): the signed `amount_minor` is `1200`, not `120000`");
    const answer = JSON.parse(readFileSync(join(dir, "answer.json"), "utf8"));
    for (const [name, value] of Object.entries({
      amount_minor: 120000,
      tool: "payments.refund",
      outcome: "deny",
      nonce: "mine",
      grant_id: "grt_other",
      args_sha256: "0".repeat(64),
      ledger_id: "led_x",
      decided_at: "2020-01-01T00:00:00.000Z",
    })) {
      writeFileSync(
        join(dir, "tampered.json"),
        JSON.stringify({ ...answer, signature: { ...answer.signature, statement: { ...answer.signature.statement, [name]: value } } }),
      );
      const run = await verifyCli(["tampered.json", "--keys", "keys.json"]);
      expect(run.code, name).toBe(1);
      expect(run.stdout, name).toContain("bad_signature");
    }
    const { signature: _dropped, ...unsigned } = answer;
    writeFileSync(join(dir, "unsigned.json"), JSON.stringify(unsigned));
    expect((await verifyCli(["unsigned.json", "--keys", "keys.json"])).stdout).toContain("not verified (unsigned)");
    writeFileSync(join(dir, "other-keys.json"), JSON.stringify({ keys: [] }));
    expect((await verifyCli(["answer.json", "--keys", "other-keys.json"])).stdout).toContain("not verified (unknown_key)");
  });

  it("points at the line and column of an answer that is not JSON, and refuses a missing --keys", async () => {
    writeFileSync(join(dir, "broken.json"), '{\n  "outcome": "allow",\n  oops\n}');
    const broken = await verifyCli(["broken.json", "--keys", "keys.json"]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/broken\.json:3:\d+: the answer is not JSON/);
    expect((await verifyCli(["answer.json"])).code).toBe(2);
    // The key set's limit at its edge: exactly keysBytesMax bytes is read, one more is refused.
    const keys = readFileSync(join(dir, "keys.json"), "utf8").trimEnd();
    writeFileSync(join(dir, "edge-keys.json"), keys + " ".repeat(262_144 - Buffer.byteLength(keys)));
    expect((await verifyCli(["answer.json", "--keys", "edge-keys.json"])).code).toBe(0);
    writeFileSync(join(dir, "over-keys.json"), keys + " ".repeat(262_145 - Buffer.byteLength(keys)));
    const over = await verifyCli(["answer.json", "--keys", "over-keys.json"]);
    expect(over.code).toBe(2);
    expect(over.stderr).toContain("the key set is larger than 262144 bytes");
    expect((await verifyCli(["answer.json", "--keys", "keys.json", "--amount", "-1"])).code).toBe(2);
  });

  it("verifies with the page's Node.js script alone", () => {
    const script = /```js\n(\/\/ verify\.mjs[\s\S]*?)```/.exec(doc)?.[1];
    expect(script).toBeDefined();
    writeFileSync(join(dir, "verify.mjs"), script!);
    const out = execFileSync(process.execPath, ["verify.mjs", "answer.json", "keys.json"], { cwd: dir, encoding: "utf8" });
    expect(out).toContain("verified: allow payments.send 1200");
    expect(() => execFileSync(process.execPath, ["verify.mjs", "tampered.json", "keys.json"], { cwd: dir, stdio: "pipe" })).toThrow();
  });

  /** The JSON blocks of the page's worked example, in order: the key set, the batch signature, the first form's. */
  function workedExample(): { keys: SigningKeySet; batch: Record<string, unknown>; single: Record<string, unknown> } {
    const section = doc.slice(doc.indexOf("### A worked example"), doc.indexOf("## The server's keys"));
    const blocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>);
    expect(blocks).toHaveLength(3);
    return { keys: blocks[0] as unknown as SigningKeySet, batch: blocks[1]!, single: blocks[2]! };
  }

  it("verifies the worked example as the page says: its leaves, its signed text, both forms, with the SDK, the command and the page's script", async () => {
    const { keys, batch, single } = workedExample();
    const section = doc.slice(doc.indexOf("### A worked example"), doc.indexOf("## The server's keys"));
    const leaves = [...section.matchAll(/^leaf (\d) {2}(\S+)$/gm)].map((m) => Buffer.from(m[2]!, "base64url"));
    expect(leaves).toHaveLength(3);
    expect(Buffer.from(statementLeaf(batch["statement"])!).equals(leaves[1]!)).toBe(true);
    const { root, paths } = treeWithPaths(leaves);
    expect(root.toString("base64url")).toBe(batch["root"]);
    expect(paths[1]!.map((hash) => hash.toString("base64url"))).toEqual(batch["path"]);
    expect(section).toContain(`\`\`\`text\n${answerBatchText(3, root)}\`\`\``);
    const keyring = new SigningKeyring(keys);
    for (const signature of [batch, single]) expect(await signedStatement({ signature }, keyring)).toHaveProperty("statement");
    writeFileSync(join(dir, "example-keys.json"), JSON.stringify(keys));
    for (const [name, signature] of [
      ["example-batch.json", batch],
      ["example-single.json", single],
    ] as const) {
      writeFileSync(join(dir, name), JSON.stringify({ signature }));
      const run = await verifyCli([name, "--keys", "example-keys.json", "--tool", "payments.send"]);
      expect(run.code, run.stdout).toBe(0);
      const out = execFileSync(process.execPath, ["verify.mjs", name, "example-keys.json"], { cwd: dir, encoding: "utf8" });
      expect(out).toContain("verified:");
    }
  });

  it("refuses with the command a statement moved within its batch, and a path or root from another batch", async () => {
    const { keys, batch, single } = workedExample();
    writeFileSync(join(dir, "example-keys.json"), JSON.stringify(keys));
    const saved = JSON.parse(readFileSync(join(dir, "answer.json"), "utf8")) as { signature: Record<string, unknown> };
    // The first answer's statement (the first form's example signs it alone), moved into the second answer.
    const mate = single["statement"] as Record<string, unknown>;
    const cases: [string, Record<string, unknown>, string][] = [
      ["moved.json", { ...batch, statement: mate }, "example-keys.json"],
      ["moved-place.json", { ...batch, leaf_index: 0 }, "example-keys.json"],
      ["other-path.json", { ...saved.signature, path: batch["path"], tree_size: 3, leaf_index: 1 }, "keys.json"],
      ["other-root.json", { ...saved.signature, root: batch["root"] }, "keys.json"],
      ["other-root-and-value.json", { ...batch, root: saved.signature["root"], value: saved.signature["value"] }, "example-keys.json"],
    ];
    for (const [name, signature, keys] of cases) {
      writeFileSync(join(dir, name), JSON.stringify({ signature }));
      const run = await verifyCli([name, "--keys", keys]);
      expect(run.code, name).toBe(1);
      expect(run.stdout, name).toContain("not verified (bad_signature)");
    }
  });
});
