// Signed answers and signing keys on both stores: the JWKS needs no key and lists no secret, every
// decision and settlement is signed over its canonical statement, rotation retires the old key and
// keeps it listed, the private key never lies in the database in the clear, and a replica with
// another server key refuses to start.

import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, verify } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type AuthorityServer, type ServerConfig } from "@agent-authority/server";
import { derivedKey, openSealed } from "../../server/src/server-key.js";
import { canonicalJson } from "../../server/src/services/seal/index.js";
import { ADMIN_KEY, ENVIRONMENT } from "./http-harness.js";
import { ResponseRecorder } from "./openapi-conformance.js";
import { agentWithKey, ATTESTATION, grant, SERVER_BUILT, startServerProcess } from "./server-processes.js";
import { forEachStore, openTestStore, sqliteTarget, type StoreTarget, type TestStore } from "./targets.js";
import type { Decision, Settlement } from "@agent-authority/sdk";

interface Jwk {
  kid: string;
  x: string;
  status: string;
  [name: string]: unknown;
}

/** An answer's signature as the server writes it: a batch signature (`v: 2`, decision 1901), or the single form. */
interface AnswerSignature {
  kid: string;
  statement: unknown;
  value: string;
  v?: number;
  tree_size?: number;
  leaf_index?: number;
  path?: readonly string[];
  root?: string;
}

/**
 * Whether `signature` verifies under the key of its kid in `keys`, done as a counterparty would:
 * the statement's RFC 9162 leaf, folded up its path to the root, and Ed25519 over the batch text.
 */
function verifies(signature: AnswerSignature, keys: readonly Jwk[]): boolean {
  const jwk = keys.find((key) => key.kid === signature.kid);
  if (jwk === undefined) return false;
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: jwk.x }, format: "jwk" });
  const value = Buffer.from(signature.value, "base64url");
  if (signature.v === undefined) return verify(null, Buffer.from(canonicalJson(signature.statement)), key, value);
  if (signature.v !== 2) return false;
  const hash = (...parts: Buffer[]) => createHash("sha256").update(Buffer.concat(parts)).digest();
  let node = hash(Buffer.of(0), Buffer.from(canonicalJson(signature.statement)));
  let [fn, sn] = [signature.leaf_index!, signature.tree_size! - 1];
  for (const sibling of signature.path!.map((p) => Buffer.from(p, "base64url"))) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      node = hash(Buffer.of(1), sibling, node);
      while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn >> 1, sn >> 1];
    } else node = hash(Buffer.of(1), node, sibling);
    [fn, sn] = [fn >> 1, sn >> 1];
  }
  if (sn !== 0 || node.toString("base64url") !== signature.root) return false;
  const text = `agent-authority answer batch v2\n${signature.tree_size}\n${signature.root}\n`;
  return verify(null, Buffer.from(text), key, value);
}

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

function configFor(db: TestStore, serverKey: string): ServerConfig {
  return {
    host: "127.0.0.1",
    port: 0,
    dataDir: "unused",
    databaseUrl: db.url,
    databaseSchema: db.schema,
    environment: ENVIRONMENT,
    adminKey: ADMIN_KEY,
    autoApprovalCeilingMinor: 1_000_000,
    logLevel: "silent",
    serverKey,
  };
}

function signingSuite(target: StoreTarget): void {
  let db: TestStore;
  let server: AuthorityServer;
  const serverKey = randomBytes(32).toString("base64url");
  const recorder = new ResponseRecorder();
  const call = async <T = Record<string, unknown>>(
    method: string,
    path: string,
    key: string | undefined,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const url = `${server.baseUrl}${path}`;
    const response = await fetch(url, {
      method,
      headers: {
        ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const parsed = JSON.parse(text) as T;
    recorder.record(server.baseUrl, method, url, response, parsed);
    return { status: response.status, body: parsed, text };
  };
  let agent: { id: string; key: string };
  let grantId: string;

  beforeAll(async () => {
    db = await openTestStore(target);
    server = await startServer(configFor(db, serverKey), { store: db.store, ownsStore: false });
    agent = await agentWithKey(server.baseUrl, "signed");
    grantId = await grant(server.baseUrl, agent.id, { budget_amount_minor: 100_000, budget_currency: "EUR" });
  });
  afterAll(async () => {
    try {
      await recorder.check(server.baseUrl);
    } finally {
      await server?.close();
      await db?.close();
    }
  });

  it("answers the JWKS without a key: one active Ed25519 key, its kid its thumbprint, no private member", async () => {
    const jwks = await call("GET", "/signing-keys", undefined);
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys).toHaveLength(1);
    const [key] = jwks.body.keys as Jwk[];
    expect(key).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig", status: "active", retired_at: null });
    expect(key!.kid).toBe(createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${key!.x}"}`).digest("base64url"));
    expect(Object.keys(key!)).not.toContain("d");
  });

  it("signs every decision over its statement: ledger id, outcome, grant, agent, tool, amount, args hash, time and nonce", async () => {
    const keys = (await call("GET", "/signing-keys", undefined)).body.keys as Jwk[];
    const args = { to: "ACME", memo: "ünïcode", n: [1, 2.5, { b: 1, a: 2 }] };
    const asked = {
      grant_id: grantId,
      tool: "payments.send",
      amount_minor: 1200,
      currency: "EUR",
      args,
      attestation: ATTESTATION,
      nonce: "n-0123456789abcdef",
    };
    const allow = await call<Decision>("POST", "/authorize", agent.key, asked);
    expect(allow.body.outcome).toBe("allow");
    const signature = allow.body.signature;
    expect(signature).toMatchObject({ alg: "EdDSA", kid: keys[0]!.kid });
    expect(signature.statement).toEqual({
      type: "authority.decision.v1",
      ledger_id: allow.body.ledger_id,
      outcome: "allow",
      grant_id: grantId,
      agent_id: agent.id,
      tool: "payments.send",
      amount_minor: 1200,
      currency: "EUR",
      args_sha256: sha256(canonicalJson(args)),
      decided_at: allow.body.decided_at,
      nonce: "n-0123456789abcdef",
    });
    expect(verifies(signature, keys)).toBe(true);
    // A refusal is signed too, and without a nonce or args the statement says null.
    const deny = await call<Decision>("POST", "/authorize", agent.key, { grant_id: grantId, tool: "mail.send" });
    expect(deny.body.outcome).toBe("deny");
    expect(deny.body.signature.statement).toMatchObject({ outcome: "deny", nonce: null, args_sha256: null, amount_minor: null });
    expect(verifies(deny.body.signature, keys)).toBe(true);
    // Any change to the statement breaks the signature.
    for (const [name, value] of Object.entries({
      outcome: "deny",
      amount_minor: 1,
      nonce: "other",
      tool: "payments.refund",
      grant_id: "grt_x",
    })) {
      expect(verifies({ ...signature, statement: { ...signature.statement, [name]: value } }, keys)).toBe(false);
    }
  });

  it("replays an idempotent answer byte for byte, signature included", async () => {
    const body = {
      grant_id: grantId,
      tool: "payments.send",
      amount_minor: 5,
      currency: "EUR",
      attestation: ATTESTATION,
      nonce: "replayed",
    };
    const first = await call<Decision>("POST", "/authorize", agent.key, body, { "idempotency-key": "signed-replay" });
    const again = await call<Decision>("POST", "/authorize", agent.key, body, { "idempotency-key": "signed-replay" });
    expect(again.text).toBe(first.text);
  });

  it("signs settlements, binding the nonce of each request", async () => {
    const keys = (await call("GET", "/signing-keys", undefined)).body.keys as Jwk[];
    const allow = await call<Decision>("POST", "/authorize", agent.key, {
      grant_id: grantId,
      tool: "payments.send",
      amount_minor: 900,
      currency: "EUR",
      attestation: ATTESTATION,
    });
    const settled = await call<Settlement>("POST", `/decisions/${allow.body.ledger_id}/settle`, agent.key, {
      amount_minor: 700,
      nonce: "settle-1",
    });
    expect(settled.status).toBe(200);
    expect(settled.body.signature.statement).toEqual({
      type: "authority.settlement.v1",
      ledger_id: settled.body.ledger_id,
      decision_ledger_id: allow.body.ledger_id,
      grant_id: grantId,
      agent_id: agent.id,
      tool: "payments.send",
      amount_minor: 700,
      held_minor: 900,
      released_minor: 200,
      currency: "EUR",
      settled_at: settled.body.settled_at,
      nonce: "settle-1",
    });
    expect(verifies(settled.body.signature, keys)).toBe(true);
    const again = await call<Settlement>("POST", `/decisions/${allow.body.ledger_id}/settle`, agent.key, {
      amount_minor: 700,
      nonce: "settle-2",
    });
    expect(again.body.ledger_id).toBe(settled.body.ledger_id);
    expect(again.body.signature.statement.nonce).toBe("settle-2");
    expect(verifies(again.body.signature, keys)).toBe(true);
  });

  it("refuses a nonce past its limit or outside its alphabet with 400, and writes nothing", async () => {
    const before = await db.store.countRows();
    for (const nonce of ["x".repeat(129), "", "has space", "é"]) {
      const reply = await call("POST", "/authorize", agent.key, { grant_id: grantId, tool: "payments.send", nonce });
      expect(reply.status).toBe(400);
    }
    expect((await call("POST", "/authorize", agent.key, { grant_id: grantId, tool: "mail.send", nonce: "x".repeat(128) })).status).toBe(
      200,
    );
    const after = await db.store.countRows();
    expect(after["ledger"]).toBe(before["ledger"]! + 1);
  });

  it("rotates on an admin's request: the old key is retired and still listed, new answers use the new key", async () => {
    const before = (await call("GET", "/signing-keys", undefined)).body.keys as Jwk[];
    const old = await call<Decision>("POST", "/authorize", agent.key, { grant_id: grantId, tool: "mail.send" });
    const retiring = before.find((b) => b.status === "active")!.kid;
    expect((await call("POST", "/signing-keys/rotate", agent.key, { retire_kid: retiring })).status).toBe(403);
    expect((await call("POST", "/signing-keys/rotate", undefined, { retire_kid: retiring })).status).toBe(401);
    expect((await call("POST", "/signing-keys/rotate", ADMIN_KEY, {})).status).toBe(400);
    const rotated = await call("POST", "/signing-keys/rotate", ADMIN_KEY, { retire_kid: retiring, reason: "yearly" });
    expect(rotated.status).toBe(200);
    // The same request again names a key no longer active: 409, and nothing rotates twice.
    const twice = await call("POST", "/signing-keys/rotate", ADMIN_KEY, { retire_kid: retiring });
    expect(twice.status).toBe(409);
    expect(twice.body.code).toBe("signing_key_not_active");
    const keys = rotated.body.keys as Jwk[];
    expect(keys).toHaveLength(before.length + 1);
    expect(keys.filter((k) => k.status === "active")).toHaveLength(1);
    expect(keys.find((k) => k.kid === before.find((b) => b.status === "active")!.kid)).toMatchObject({
      status: "retired",
      retired_at: expect.any(String),
    });
    const fresh = await call<Decision>("POST", "/authorize", agent.key, { grant_id: grantId, tool: "mail.send" });
    expect(fresh.body.signature.kid).toBe(keys.find((k) => k.status === "active")!.kid);
    expect(verifies(fresh.body.signature, keys)).toBe(true);
    expect(verifies(old.body.signature, keys)).toBe(true);
  });

  it("keeps private keys only sealed: no column holds a private key in any encoding, and a planted row is never listed", async () => {
    const rows = (await db.raw("SELECT * FROM signing_keys")) as Record<string, unknown>[];
    const seal = derivedKey(Buffer.from(serverKey, "base64url"), "signing-key-seal");
    for (const row of rows) {
      const pkcs8 = openSealed(seal, String(row["sealed_private_key"]), `signing-key ${String(row["kid"])}`)!;
      expect(pkcs8).toBeDefined();
      const seed = Buffer.from(createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" }).export({ format: "jwk" }).d!, "base64url");
      const text = JSON.stringify(rows);
      for (const secret of [pkcs8, seed]) {
        for (const encoding of ["base64", "base64url", "hex"] as const) expect(text).not.toContain(secret.toString(encoding));
      }
    }
    // Whoever can write the database plants a key of their own: it opens under no server key, so it is never listed.
    const planted = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" }).x!;
    await db.raw(
      "INSERT INTO signing_keys (kid, alg, public_key, sealed_private_key, status, created_at, retired_at) VALUES (?, 'EdDSA', ?, 'v1.AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA', 'retired', 0, 0)",
      ["planted", planted],
    );
    const replica = await startServer(configFor(db, serverKey));
    try {
      const listed = (await (await fetch(`${replica.baseUrl}/signing-keys`)).json()) as { keys: Jwk[] };
      expect(listed.keys.map((k) => k.kid)).not.toContain("planted");
      expect(listed.keys.map((k) => k.x)).not.toContain(planted);
    } finally {
      await replica.close();
    }
  });

  it("starts a replica with the same server key on the same keys, and refuses one with another server key", async () => {
    const replica = await startServer(configFor(db, serverKey));
    try {
      const here = (await call("GET", "/signing-keys", undefined)).body;
      const there = await (await fetch(`${replica.baseUrl}/signing-keys`)).json();
      expect(there).toEqual(here);
    } finally {
      await replica.close();
    }
    const other = randomBytes(32).toString("base64url");
    await expect(startServer(configFor(db, other))).rejects.toThrow(/does not open the active signing key/);
  });
}

forEachStore("signed answers and signing keys", signingSuite);

describe.skipIf(!SERVER_BUILT)("signing on the authorize thread (SQLite, compiled server)", () => {
  it("signs on the worker, and signs with the new key after a rotation", async () => {
    const db = await openTestStore(sqliteTarget);
    const serverKey = randomBytes(32).toString("base64url");
    const proc = await startServerProcess({ url: db.url }, { AUTHORITY_SERVER_KEY: serverKey });
    try {
      const agent = await agentWithKey(proc.baseUrl, "threaded");
      const grantId = await grant(proc.baseUrl, agent.id, {});
      const decide = async () =>
        (await (
          await fetch(`${proc.baseUrl}/authorize`, {
            method: "POST",
            headers: { authorization: `Bearer ${agent.key}`, "content-type": "application/json" },
            body: JSON.stringify({ grant_id: grantId, tool: "payments.send", attestation: ATTESTATION, nonce: "worker" }),
          })
        ).json()) as { signature: { kid: string; statement: unknown; value: string } };
      const keys = async () => ((await (await fetch(`${proc.baseUrl}/signing-keys`)).json()) as { keys: Jwk[] }).keys;
      const first = await decide();
      expect(verifies(first.signature, await keys())).toBe(true);
      const rotated = await fetch(`${proc.baseUrl}/signing-keys/rotate`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ retire_kid: first.signature.kid }),
      });
      expect(rotated.status).toBe(200);
      const active = (await keys()).find((k) => k.status === "active")!.kid;
      expect(active).not.toBe(first.signature.kid);
      // The thread reads the keys again on the rotation's message; the answer after it uses the new key.
      let second = await decide();
      for (let i = 0; i < 50 && second.signature.kid !== active; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        second = await decide();
      }
      expect(second.signature.kid).toBe(active);
      expect(verifies(second.signature, await keys())).toBe(true);
      expect(proc.output()).toContain('authorize_thread":"worker');
    } finally {
      proc.child.kill("SIGTERM");
      await proc.exited;
      await db.close();
    }
  });
});
