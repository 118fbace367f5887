// docs/verification.md's receipts and checkpoints as a counterparty and a witness follow them: save
// the keys, a receipt and a checkpoint, check consistency against the running server, stop it, then
// verify the receipt offline and the database against the checkpoint, tampered with or not.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, startServer } from "@agent-authority/server";
import { authorityAsync, buildCli, root } from "./run-cli.js";

const ADMIN = "aa_admin_witness_doc_0123456789abcdefgh";
const ATTESTATION = { manifest_hash: "sha256:m", content_hash: "sha256:c", provenance_version: "p1" };
const dir = mkdtempSync(join(tmpdir(), "authority-witness-"));
const doc = readFileSync(join(root, "docs", "verification.md"), "utf8");
/** The server's own settings emptied but the data directory: the offline commands read that database. */
const ENV = {
  AUTHORITY_DATA_DIR: join(dir, "data"),
  AUTHORITY_DATABASE_URL: "",
  AUTHORITY_DATABASE_SCHEMA: "",
  AUTHORITY_SERVER: "",
  AUTHORITY_KEY: "",
};
let consistent: { code: number | null; stdout: string; stderr: string };
let grown: { code: number | null; stdout: string; stderr: string };

/** A JSON answer read by member name: every member these calls read is a string id or key. */
type Json = Record<string, string>;

async function call(
  base: string,
  method: "GET" | "POST",
  path: string,
  key: string,
  body?: unknown,
): Promise<{ status: number; text: string; json: Json }> {
  const reply = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await reply.text();
  let json: Json = {};
  try {
    json = JSON.parse(text) as Json;
  } catch {
    json = {};
  }
  return { status: reply.status, text, json };
}

const run = (args: string[]) => authorityAsync(args, { cwd: dir, env: ENV });

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
    const base = server.baseUrl;
    const agent = (await call(base, "POST", "/agents", ADMIN, { name: "payer" })).json;
    await call(base, "POST", `/agents/${agent.id}/certification`, ADMIN, {
      environment: "development",
      basis: "review",
      ...ATTESTATION,
      checks: ["manual"],
    });
    const key = (
      await call(base, "POST", "/keys", ADMIN, { identity: "payer-agent", kind: "service", roles: ["agent"], agent_id: agent.id })
    ).json.key;
    const auditor = (await call(base, "POST", "/keys", ADMIN, { identity: "witness@example.com", kind: "human", roles: ["auditor"] })).json
      .key;
    const grant = (
      await call(base, "POST", "/grants", ADMIN, {
        agent_id: agent.id,
        principal_type: "human",
        principal_id: "ops@example.com",
        scope: { tool: ["payments.*"] },
        budget_amount_minor: 10_000,
        budget_currency: "EUR",
      })
    ).json;
    const pay = (extra: Record<string, unknown> = {}) =>
      call(base, "POST", "/authorize", key, { grant_id: grant.id, tool: "payments.send", attestation: ATTESTATION, ...extra });
    const allow = (await pay({ amount_minor: 1200, currency: "EUR" })).json;
    expect(allow.outcome).toBe("allow");
    expect((await call(base, "POST", `/decisions/${allow.ledger_id}/settle`, key, { amount_minor: 1000 })).status).toBe(200);
    for (const tool of ["mail.send", "payments.send", "mail.send"]) await pay({ tool });
    const listed = await authorityAsync(["signing-keys", "list", "--server", base.replace(/\/v1$/, ""), "--format", "json"]);
    expect(listed.code, listed.stderr).toBe(0);
    writeFileSync(join(dir, "keys.json"), listed.stdout);
    const receipt = await call(base, "GET", `/decisions/${allow.ledger_id}/receipt`, key);
    expect(receipt.status, receipt.text).toBe(200);
    writeFileSync(join(dir, "receipt.json"), receipt.text);
    const checkpoint = await call(base, "GET", "/ledger/checkpoint", auditor);
    expect(checkpoint.status).toBe(200);
    writeFileSync(join(dir, "checkpoint-1.txt"), checkpoint.text);
    // The ledger grows; the witness asks whether it only grew.
    for (const tool of ["payments.send", "mail.send"]) await pay({ tool });
    consistent = await run([
      "ledger",
      "verify",
      "--server",
      base.replace(/\/v1$/, ""),
      "--key",
      auditor,
      "--checkpoint",
      "checkpoint-1.txt",
      "--keys",
      "keys.json",
    ]);
    writeFileSync(join(dir, "checkpoint-2.txt"), (await call(base, "GET", "/ledger/checkpoint", auditor)).text);
    grown = await run([
      "ledger",
      "verify",
      "--server",
      base.replace(/\/v1$/, ""),
      "--key",
      auditor,
      "--checkpoint",
      "checkpoint-2.txt",
      "--keys",
      "keys.json",
      "--format",
      "json",
    ]);
  } finally {
    // Everything below runs with the server stopped.
    await server.close();
  }
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("docs/verification.md, receipts and checkpoints", () => {
  it("shows the commands it runs", () => {
    expect(doc).toContain("authority receipt verify receipt.json --keys keys.json");
    expect(doc).toContain("authority ledger verify --checkpoint checkpoint-1.txt --keys keys.json");
    expect(doc).toContain("--checkpoint checkpoint-1.txt --keys keys.json");
    expect(doc).toContain("/v1/ledger/checkpoint > checkpoint-1.txt");
  });

  it("finds the running server's tree consistent with a checkpoint kept earlier", () => {
    expect(consistent.code, consistent.stdout + consistent.stderr).toBe(0);
    expect(consistent.stdout).toMatch(/consistent: the server's tree of \d+ records extends the checkpoint of \d+/);
    expect(grown.code, grown.stderr).toBe(0);
    expect(JSON.parse(grown.stdout).checkpoint).toMatchObject({ ok: true });
  });

  it("verifies the receipt with the server stopped, and names the member of a tampered one", async () => {
    const verified = await run(["receipt", "verify", "receipt.json", "--keys", "keys.json"]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/^verified: decision `led_[0-9a-z]+` is leaf \d+ of the tree of \d+ records/);
    expect(verified.stdout).toContain("settled: 1000 EUR");
    const receipt = JSON.parse(readFileSync(join(dir, "receipt.json"), "utf8"));
    const flip = (text: string) => text.slice(0, 10) + (text[10] === "A" ? "B" : "A") + text.slice(11);
    // Each tampering, and the member the refusal names: another leaf index is a proof that does not lead to the root.
    const cases: [string, unknown][] = [
      ["record.hash", { ...receipt, record: { ...receipt.record, record: receipt.record.record.replace('"allow"', '"deny"') } }],
      ["record.inclusion_proof", { ...receipt, record: { ...receipt.record, leaf_index: receipt.record.leaf_index + 1 } }],
      ["record.inclusion_proof", { ...receipt, record: { ...receipt.record, inclusion_proof: receipt.record.inclusion_proof.map(flip) } }],
      ["checkpoint", { ...receipt, checkpoint: receipt.checkpoint.replace(/\n(\d+)\n/, (_: string, n: string) => `\n${Number(n) + 1}\n`) }],
      ["signature.statement", { ...receipt, settlements: [] }],
    ];
    for (const [field, tampered] of cases) {
      writeFileSync(join(dir, "tampered-receipt.json"), JSON.stringify(tampered));
      const refused = await run(["receipt", "verify", "tampered-receipt.json", "--keys", "keys.json", "--format", "json"]);
      expect(refused.code, field).toBe(1);
      expect(JSON.parse(refused.stdout), field).toMatchObject({ ok: false, field });
    }
    writeFileSync(join(dir, "other-keys.json"), JSON.stringify({ keys: [] }));
    expect((await run(["receipt", "verify", "receipt.json", "--keys", "other-keys.json"])).code).toBe(1);
    writeFileSync(join(dir, "broken.json"), '{\n  "format": 1,\n  oops\n}');
    const broken = await run(["receipt", "verify", "broken.json", "--keys", "keys.json"]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/broken\.json:3:\d+: the receipt is not JSON/);
    expect((await run(["receipt", "verify", "receipt.json"])).code).toBe(2);
  });

  it("verifies the checkpoint with the page's Node.js script alone, and refuses a tampered one", () => {
    const script = /```js\n(\/\/ verify-checkpoint\.mjs[\s\S]*?)```/.exec(doc)?.[1];
    expect(script).toBeDefined();
    writeFileSync(join(dir, "verify-checkpoint.mjs"), script!);
    const out = execFileSync(process.execPath, ["verify-checkpoint.mjs", "checkpoint-1.txt", "keys.json"], { cwd: dir, encoding: "utf8" });
    expect(out).toMatch(/^verified: agent-authority\/\S+ holds \d+ records, root [A-Za-z0-9+/]{43}=/);
    const note = readFileSync(join(dir, "checkpoint-1.txt"), "utf8");
    writeFileSync(
      join(dir, "forged-checkpoint.txt"),
      note.replace(/\n(\d+)\n/, (_: string, n: string) => `\n${Number(n) + 5}\n`),
    );
    expect(() =>
      execFileSync(process.execPath, ["verify-checkpoint.mjs", "forged-checkpoint.txt", "keys.json"], { cwd: dir, stdio: "pipe" }),
    ).toThrow();
  });

  it("refuses a checkpoint with any field tampered with before it reads a record", async () => {
    const note = readFileSync(join(dir, "checkpoint-1.txt"), "utf8");
    const [origin, size, rootLine, blank, signature] = note.split("\n") as [string, string, string, string, string];
    const sig = Buffer.from(signature.split(" ")[2]!, "base64");
    sig[20]! ^= 1;
    const rootBytes = Buffer.from(rootLine, "base64");
    rootBytes[0]! ^= 1;
    const variants: Record<string, string[]> = {
      origin: [`${origin}-other`, size, rootLine, blank, signature],
      size: [origin, String(Number(size) - 1), rootLine, blank, signature],
      root: [origin, size, rootBytes.toString("base64"), blank, signature],
      signature: [origin, size, rootLine, blank, `\u2014 ${origin} ${sig.toString("base64")}`],
      "key name": [origin, size, rootLine, blank, signature.replace(origin, `${origin}-other`)],
    };
    for (const [field, lines] of Object.entries(variants)) {
      writeFileSync(join(dir, "tampered-checkpoint.txt"), `${lines.join("\n")}\n`);
      const refused = await run(["ledger", "verify", "--checkpoint", "tampered-checkpoint.txt", "--keys", "keys.json"]);
      expect(refused.code, field).toBe(1);
      expect(refused.stdout, field).toContain("checkpoint refused");
    }
  });

  it("verifies the database against the checkpoint, then reports the newest record deleted at its position", async () => {
    const verified = await run(["ledger", "verify", "--checkpoint", "checkpoint-1.txt", "--keys", "keys.json"]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/checkpoint verified: the first \d+ records are those of the checkpoint/);
    const size = Number(readFileSync(join(dir, "checkpoint-1.txt"), "utf8").split("\n")[1]);
    // An intruder deletes the newest record the checkpoint covers, past the triggers.
    const db = new Database(join(dir, "data", "authority.db"));
    let newest: string;
    try {
      newest = (db.prepare("SELECT ledger_id FROM ledger_leaves WHERE position = ?").get(size - 1) as { ledger_id: string }).ledger_id;
      db.pragma("foreign_keys = OFF");
      db.exec("DROP TRIGGER ledger_kept");
      db.prepare("DELETE FROM ledger WHERE id = ?").run(newest);
    } finally {
      db.close();
    }
    const broken = await run(["ledger", "verify", "--checkpoint", "checkpoint-1.txt", "--keys", "keys.json", "--format", "json"]);
    expect(broken.code, broken.stderr).toBe(1);
    expect(JSON.parse(broken.stdout).checkpoint).toMatchObject({ ok: false, broken: { position: size - 1, ledger_id: newest } });
    const text = await run(["ledger", "verify", "--checkpoint", "checkpoint-1.txt", "--keys", "keys.json"]);
    expect(text.stdout).toContain(`checkpoint broken: position ${size - 1} (\`${newest}\`)`);
    // The receipt proves its decision whatever happened to the database since.
    expect((await run(["receipt", "verify", "receipt.json", "--keys", "keys.json"])).code).toBe(0);
  });
});
