// A forging proxy between the SDK and the real server: it rewrites requests and answers as an
// attacker on the path would. A client given the server's keys takes none of the forgeries for an
// `allow`: unsigned, self-signed, mis-signed, replayed and mismatched answers all fail closed, each
// with its reason; the honest path through the same proxy verifies.

import { generateKeyPairSync, sign } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthorityClient, AuthorityUnavailableError, canonicalJson, type AuthorizeResult, type SigningKeySet } from "@agent-authority/sdk";
import { loadConfig, startServer, type AuthorityServer } from "@agent-authority/server";
import { FORGERIES, startAttackingProxy } from "./attacks.js";
import { canonicalJson as serverCanonicalJson } from "../../server/src/services/seal/index.js";

const ADMIN = "aa_admin_forging_proxy_0123456789abcdef";
const ATTESTATION = { manifest_hash: "sha256:manifest", content_hash: "sha256:content", provenance_version: "model-2026-01" };

/** A JSON body as the proxy sees it, its members read and replaced by name. */
type Body = Record<string, unknown>;
/** An answer the proxy forges: the authorize answer's signature and statement are changed member by member. */
type Answer = Body & { signature: Body & { statement: Body } };
type Rewrite = (json: Answer, request: Body | undefined) => unknown;
/** A rewrite that may wait, e.g. for the other answers of a batch. */
type AsyncRewrite = (json: Answer, request: Body | undefined) => Promise<unknown>;
interface Forgery {
  request?: (json: Body) => unknown;
  answer?: Rewrite;
  settle?: Rewrite;
  replaceAnswer?: () => string;
  /** Rewrites authorize answers, possibly after waiting for others; takes precedence over `answer`. */
  answerLater?: AsyncRewrite;
}

/** The proxy: forwards to `upstream`, applying whatever `forgery.current` says to the body each way. */
async function forgingProxy(upstream: string): Promise<{ baseUrl: string; forgery: { current: Forgery }; close(): Promise<void> }> {
  const target = new URL(upstream);
  const forgery: { current: Forgery } = { current: {} };
  const proxy: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const sentText = Buffer.concat(chunks).toString("utf8");
      const sent = sentText === "" ? undefined : JSON.parse(sentText);
      const forwardedText =
        sent !== undefined && forgery.current.request !== undefined ? JSON.stringify(forgery.current.request(sent)) : sentText;
      const headers = { ...incoming.headers, host: target.host, "content-length": String(Buffer.byteLength(forwardedText)) };
      const onward = httpRequest(
        { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => parts.push(chunk));
          answer.on("end", async () => {
            let text = Buffer.concat(parts).toString("utf8");
            if (forgery.current.answerLater !== undefined && incoming.url?.endsWith("/authorize"))
              text = JSON.stringify(await forgery.current.answerLater(JSON.parse(text), sent));
            else if (forgery.current.replaceAnswer !== undefined) text = forgery.current.replaceAnswer();
            else if (forgery.current.answer !== undefined && incoming.url?.endsWith("/authorize"))
              text = JSON.stringify(forgery.current.answer(JSON.parse(text), sent));
            else if (forgery.current.settle !== undefined && incoming.url?.endsWith("/settle"))
              text = JSON.stringify(forgery.current.settle(JSON.parse(text), sent));
            outgoing.writeHead(answer.statusCode ?? 502, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
            outgoing.end(text);
          });
        },
      );
      onward.end(forwardedText);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    forgery,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}

let server: AuthorityServer;
let dataDir: string;
let proxy: Awaited<ReturnType<typeof forgingProxy>>;
let agentKey: string;
let grantId: string;
let jwks: SigningKeySet;

/** Posts as `key` and answers the created resource's body (these tests read its `id` and `key`). */
async function post(path: string, key: string, body: unknown): Promise<{ id: string; key: string }> {
  const reply = await fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return (await reply.json()) as { id: string; key: string };
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "authority-forging-"));
  server = await startServer(
    loadConfig({
      AUTHORITY_PORT: "0",
      AUTHORITY_DATA_DIR: dataDir,
      AUTHORITY_ADMIN_KEY: ADMIN,
      AUTHORITY_LOG_LEVEL: "silent",
      AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "1000000",
    }),
  );
  const agent = await post("/agents", ADMIN, { name: "proxied" });
  await post(`/agents/${agent.id}/certification`, ADMIN, {
    environment: "development",
    basis: "review",
    ...ATTESTATION,
    checks: ["manual"],
  });
  agentKey = (await post("/keys", ADMIN, { identity: "proxied-agent", kind: "service", roles: ["agent"], agent_id: agent.id })).key;
  grantId = (
    await post("/grants", ADMIN, {
      agent_id: agent.id,
      principal_type: "human",
      principal_id: "ops@example.com",
      scope: { tool: ["payments.*"] },
      budget_amount_minor: 1_000_000,
      budget_currency: "EUR",
      policy: "amount_minor <= 10000",
    })
  ).id;
  jwks = (await (await fetch(`${server.baseUrl}/signing-keys`)).json()) as SigningKeySet;
  proxy = await forgingProxy(server.baseUrl);
});
afterAll(async () => {
  await proxy?.close();
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A client through the proxy; a second attempt rides out a connection the loaded machine dropped (a retry resends the same request), and a long timeout a slow answer. */
function client(signingKeys?: SigningKeySet | "fetch-once", unsafe = false): AuthorityClient {
  return new AuthorityClient({
    baseUrl: proxy.baseUrl,
    apiKey: agentKey,
    attempts: 2,
    retryDelayMs: 20,
    timeoutMs: 30_000,
    attestation: ATTESTATION,
    ...(signingKeys === undefined ? {} : { signingKeys }),
    ...(unsafe ? { allowUnsignedAnswers: true } : {}),
  });
}

const pay = (amount: number, tool = "payments.send") => ({
  grant_id: grantId,
  tool,
  amount_minor: amount,
  currency: "EUR",
  args: { to: "ACME" },
});

/**
 * Refused as unverified, for `reason` when one is named. A client with no keys configured fetches
 * them through the same proxy, which may forge that answer too: it is then refused for want of
 * keys (`unknown_key`), which is a refusal all the same.
 */
function expectRefused(result: AuthorizeResult, reason?: string, field?: string): void {
  expect(result.outcome).toBe("deny");
  expect(result.ledger_id).toBeNull();
  expect(result.unavailable?.cause).toBe("unverified_answer");
  if (reason === undefined) return;
  expect(result.unavailable?.verification?.reason).toBe(reason);
  if (field !== undefined) expect(result.unavailable?.verification?.field).toBe(field);
  expect(result.reason).toContain(reason);
}

describe("the SDK's authorize and guard, with no signing configuration, behind an attacker on the path", () => {
  it("refuses each forgery of a denied payment; guard never runs its tool and authorize never answers allow", async () => {
    proxy.forgery.current = {};
    const attacker = await startAttackingProxy(server.baseUrl);
    try {
      const sdk = new AuthorityClient({ baseUrl: attacker.baseUrl, apiKey: agentKey, attestation: ATTESTATION, timeoutMs: 30_000 });
      expect((await sdk.authorize(pay(100))).outcome).toBe("allow");
      expect(attacker.hasRecordedAllow).toBe(true);
      let runs = 0;
      for (const attack of FORGERIES) {
        attacker.attack = attack;
        expectRefused(await sdk.authorize(pay(50_000)));
        const guarded = await sdk.guard(
          grantId,
          "payments.send",
          () => {
            runs += 1;
            return { value: "paid" };
          },
          { amount_minor: 50_000, currency: "EUR", args: { to: "ACME" } },
        );
        expect(guarded.ran, attack).toBe(false);
        expect(guarded.decision.unavailable?.cause, attack).toBe("unverified_answer");
      }
      expect(runs).toBe(0);
    } finally {
      await attacker.close();
    }
  });
});

describe("the SDK behind a forging proxy", () => {
  it("verifies the honest answer through the same proxy, and sends a fresh nonce each call", async () => {
    proxy.forgery.current = {};
    const nonces: string[] = [];
    proxy.forgery.current = {
      request: (json) => {
        nonces.push(String(json.nonce));
        return json;
      },
    };
    const verified = client(jwks);
    const first = await verified.authorize(pay(100));
    const second = await verified.authorize(pay(100));
    expect(first.outcome).toBe("allow");
    expect(first.unavailable).toBeNull();
    expect(second.outcome).toBe("allow");
    expect(nonces).toHaveLength(2);
    expect(nonces[0]).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(nonces[0]).not.toBe(nonces[1]);
    // A refusal verifies too, and stays a refusal.
    const refused = await verified.authorize(pay(50_000));
    expect(refused).toMatchObject({ outcome: "deny", unavailable: null });
  });

  it("refuses a forged allow with no signature (`led_forged`), with keys pinned or none configured; only a client that opted out obeys it", async () => {
    proxy.forgery.current = {
      replaceAnswer: () =>
        JSON.stringify({ outcome: "allow", ledger_id: "led_forged", gates: [], reason: "ok", decided_at: new Date().toISOString() }),
    };
    expectRefused(await client(jwks).authorize(pay(100)), "unsigned");
    expectRefused(await client().authorize(pay(100)));
    expect((await client(undefined, true).authorize(pay(100))).outcome).toBe("allow");
  });

  it("refuses a deny turned into allow (mismatch with the signed outcome) and a statement rewritten to allow (bad signature)", async () => {
    proxy.forgery.current = { answer: (json) => ({ ...json, outcome: "allow" }) };
    expectRefused(await client(jwks).authorize(pay(50_000)), "mismatch", "outcome");
    expectRefused(await client().authorize(pay(50_000)));
    proxy.forgery.current = {
      answer: (json) => ({
        ...json,
        outcome: "allow",
        signature: { ...json.signature, statement: { ...json.signature.statement, outcome: "allow" } },
      }),
    };
    expectRefused(await client(jwks).authorize(pay(50_000)), "bad_signature");
    expectRefused(await client().authorize(pay(50_000)));
  });

  it("refuses an answer signed by a key of the forger's own, under its own kid or under the server's", async () => {
    const forger = generateKeyPairSync("ed25519").privateKey;
    const forge = (kid: string) => (json: Answer) => {
      const statement = { ...json.signature.statement, outcome: "allow" };
      return {
        ...json,
        outcome: "allow",
        signature: {
          alg: "EdDSA",
          kid,
          statement,
          value: sign(null, Buffer.from(serverCanonicalJson(statement)), forger).toString("base64url"),
        },
      };
    };
    proxy.forgery.current = { answer: forge("forger-key") };
    expectRefused(await client(jwks).authorize(pay(50_000)), "unknown_key");
    expectRefused(await client().authorize(pay(50_000)));
    proxy.forgery.current = { answer: forge(jwks.keys[0]!.kid) };
    expectRefused(await client(jwks).authorize(pay(50_000)), "bad_signature");
    expectRefused(await client().authorize(pay(50_000)));
  });

  it("refuses an old allow replayed as the answer to a new request (nonce mismatch)", async () => {
    proxy.forgery.current = {};
    let recorded: string | undefined;
    proxy.forgery.current = {
      answer: (json) => {
        recorded ??= JSON.stringify(json);
        return json;
      },
    };
    expect((await client(jwks).authorize(pay(100))).outcome).toBe("allow");
    proxy.forgery.current = { replaceAnswer: () => recorded! };
    expectRefused(await client(jwks).authorize(pay(100)), "replayed", "nonce");
    expectRefused(await client().authorize(pay(100)));
  });

  it("refuses an allow the server gave to a rewritten request: another amount, tool, grant or args", async () => {
    const rewrites: [string, (json: Body) => Body][] = [
      ["amount_minor", (json) => ({ ...json, amount_minor: 100 })],
      ["tool", (json) => ({ ...json, tool: "payments.refund" })],
      ["args_sha256", (json) => ({ ...json, args: { to: "MALLORY" } })],
    ];
    for (const [field, request] of rewrites) {
      proxy.forgery.current = { request };
      expectRefused(await client(jwks).authorize(pay(9_000)), "mismatch", field);
      expectRefused(await client().authorize(pay(9_000)), "mismatch", field);
    }
    // A grant the proxy swaps in: the server's answer is about that grant, not the one asked.
    const other = await post("/grants", ADMIN, {
      agent_id: (
        (await (await fetch(`${server.baseUrl}/grants/${grantId}`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as {
          agent_id: string;
        }
      ).agent_id,
      principal_type: "human",
      principal_id: "ops@example.com",
      scope: { tool: ["payments.*"] },
      budget_amount_minor: 1_000_000,
      budget_currency: "EUR",
    });
    proxy.forgery.current = { request: (json) => ({ ...json, grant_id: other.id }) };
    expectRefused(await client(jwks).authorize(pay(50_000)), "mismatch", "grant_id");
    expectRefused(await client().authorize(pay(50_000)));
  });

  it("never takes an answer with any one member of its statement or signature changed for the server's", async () => {
    const verified = client(jwks);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          "ledger_id",
          "outcome",
          "grant_id",
          "agent_id",
          "tool",
          "amount_minor",
          "currency",
          "args_sha256",
          "decided_at",
          "nonce",
          "type",
          "kid",
          "value",
        ),
        fc.oneof(fc.string({ maxLength: 40 }), fc.integer(), fc.constant(null)),
        async (member, value) => {
          let changed = false;
          proxy.forgery.current = {
            answer: (json) => {
              const signature = { ...json.signature, statement: { ...json.signature.statement } };
              const holder: Body = member === "kid" || member === "value" ? signature : signature.statement;
              changed = canonicalJson(holder[member]) !== canonicalJson(value);
              holder[member] = value;
              return { ...json, signature };
            },
          };
          const result = await verified.authorize(pay(100));
          if (changed) {
            expect(result.outcome).toBe("deny");
            expect(result.unavailable?.cause).toBe("unverified_answer");
          } else {
            expect(result).toMatchObject({ outcome: "allow", unavailable: null });
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it("fetches the keys once when told to, pins them, and then refuses a key set the proxy swaps in", async () => {
    proxy.forgery.current = {};
    const pinned = client("fetch-once");
    expect((await pinned.authorize(pay(100))).outcome).toBe("allow");
    // From now on the proxy serves its own key set and signs with its own key: the pinned client is not fooled.
    const forger = generateKeyPairSync("ed25519");
    const x = forger.publicKey.export({ format: "jwk" }).x!;
    proxy.forgery.current = {
      answer: (json) => {
        const statement = { ...json.signature.statement };
        return {
          ...json,
          signature: {
            alg: "EdDSA",
            kid: "swapped",
            statement,
            value: sign(null, Buffer.from(serverCanonicalJson(statement)), forger.privateKey).toString("base64url"),
          },
        };
      },
    };
    const swapped = JSON.stringify({
      keys: [
        { kty: "OKP", crv: "Ed25519", x, kid: "swapped", alg: "EdDSA", use: "sig", status: "active", created_at: "", retired_at: null },
      ],
    });
    const answer = proxy.forgery.current.answer!;
    proxy.forgery.current = { answer: (json, request) => (json.keys !== undefined ? JSON.parse(swapped) : answer(json, request)) };
    expectRefused(await pinned.authorize(pay(100)), "unknown_key");
  });

  it("refuses to start with a key set that is no JWKS", () => {
    expect(() => new AuthorityClient({ baseUrl: proxy.baseUrl, apiKey: agentKey, signingKeys: { nope: 1 } as never })).toThrow(
      /signingKeys/,
    );
  });
});

describe("settlements behind the forging proxy", () => {
  /** A fresh allow of 100 to settle, authorized with no forgery in the way. */
  async function allowed(): Promise<string> {
    proxy.forgery.current = {};
    const decision = await client(jwks).authorize(pay(100));
    expect(decision.outcome).toBe("allow");
    return decision.ledger_id!;
  }

  async function expectSettleRefused(settling: Promise<unknown>, reason?: string, field?: string): Promise<void> {
    const error = await settling.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(AuthorityUnavailableError);
    expect((error as AuthorityUnavailableError).kind).toBe("unverified_answer");
    if (reason === undefined) return;
    expect((error as AuthorityUnavailableError).verification?.reason).toBe(reason);
    if (field !== undefined) expect((error as AuthorityUnavailableError).verification?.field).toBe(field);
  }

  it("verifies the honest settlement and sends a fresh nonce", async () => {
    const ledgerId = await allowed();
    let nonce: unknown;
    proxy.forgery.current = {
      request: (json) => {
        nonce = json.nonce;
        return json;
      },
    };
    const settled = await client(jwks).decisions.settle(ledgerId, { amount_minor: 60 });
    expect(settled).toMatchObject({ decision_ledger_id: ledgerId, amount_minor: 60, released_minor: 40 });
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it("refuses an unsigned settlement the proxy made up, with keys pinned or none configured; only a client that opted out takes it", async () => {
    const ledgerId = await allowed();
    const forged = () =>
      JSON.stringify({
        ledger_id: "led_forged",
        decision_ledger_id: ledgerId,
        grant_id: grantId,
        currency: "EUR",
        amount_minor: 0,
        held_minor: 100,
        released_minor: 100,
        settled_at: new Date().toISOString(),
      });
    proxy.forgery.current = { replaceAnswer: forged };
    await expectSettleRefused(client(jwks).decisions.settle(ledgerId, { amount_minor: 0 }), "unsigned");
    await expectSettleRefused(client().decisions.settle(ledgerId, { amount_minor: 0 }));
    expect((await client(undefined, true).decisions.settle(ledgerId, { amount_minor: 0 })).ledger_id).toBe("led_forged");
  });

  it("refuses another settlement replayed as this one's answer (nonce), and a settlement of another amount (mismatch)", async () => {
    const first = await allowed();
    let recorded: string | undefined;
    proxy.forgery.current = {
      settle: (json) => {
        recorded = JSON.stringify(json);
        return json;
      },
    };
    await client(jwks).decisions.settle(first, { amount_minor: 100 });
    const second = await allowed();
    proxy.forgery.current = { replaceAnswer: () => recorded! };
    await expectSettleRefused(client(jwks).decisions.settle(second, { amount_minor: 100 }), "replayed", "nonce");
    // The proxy settles less than asked: the server signs what it did, which is not what was asked.
    const third = await allowed();
    proxy.forgery.current = { request: (json) => ({ ...json, amount_minor: 10 }) };
    await expectSettleRefused(client(jwks).decisions.settle(third, { amount_minor: 90 }), "mismatch", "amount_minor");
  });

  it("never takes a settlement with one member of its statement or answer changed", async () => {
    const verified = client(jwks);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          "ledger_id",
          "decision_ledger_id",
          "grant_id",
          "currency",
          "amount_minor",
          "held_minor",
          "released_minor",
          "settled_at",
          "nonce",
          "type",
        ),
        fc.boolean(),
        fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.constant(null)),
        async (member, inStatement, value) => {
          const ledgerId = await allowed();
          let changed = false;
          proxy.forgery.current = {
            settle: (json) => {
              const signature = { ...json.signature, statement: { ...json.signature.statement } };
              const holder = inStatement || member === "nonce" || member === "type" ? signature.statement : json;
              changed = canonicalJson(holder[member] ?? null) !== canonicalJson(value);
              holder[member] = value;
              return { ...json, signature };
            },
          };
          const settling = verified.decisions.settle(ledgerId, { amount_minor: 100 });
          const outcome = await settling.then(
            () => "taken",
            (error: unknown) => (error instanceof AuthorityUnavailableError ? error.kind : String(error)),
          );
          expect(outcome).toBe(changed ? "unverified_answer" : "taken");
        },
      ),
      { numRuns: 20 },
    );
  });
});

/** The batch members of an answer's signature (decision 1901). */
type Batch = Pick<Body, "tree_size" | "leaf_index" | "path" | "root">;
const batchOf = (json: Answer): Batch => ({
  tree_size: json.signature.tree_size,
  leaf_index: json.signature.leaf_index,
  path: json.signature.path,
  root: json.signature.root,
});

describe("answers signed in batches, respliced behind the forging proxy", () => {
  /**
   * Answers of the real server signed in batches of two or more: `rounds` of concurrent requests
   * through the proxy, recorded as they pass, until two batches of two or more are seen (the group
   * commit takes together what arrives together). Answers the recorded answers by root.
   */
  async function twoBatches(): Promise<Answer[][]> {
    const byRoot = new Map<string, Answer[]>();
    proxy.forgery.current = {
      answer: (json) => {
        const root = String(json.signature.root);
        byRoot.set(root, [...(byRoot.get(root) ?? []), json]);
        return json;
      },
    };
    const batched = () => [...byRoot.values()].filter((answers) => answers.length >= 2);
    for (let round = 0; round < 20 && batched().length < 2; round += 1) {
      const results = await Promise.all(Array.from({ length: 8 }, () => client(jwks).authorize(pay(100))));
      for (const result of results) expect(result).toMatchObject({ outcome: "allow", unavailable: null });
    }
    const found = batched();
    expect(found.length).toBeGreaterThanOrEqual(2);
    for (const answers of found) {
      expect(answers[0]!.signature).toMatchObject({ v: 2, tree_size: expect.any(Number) });
      expect(new Set(answers.map((a) => a.signature.value)).size).toBe(1);
    }
    return found;
  }

  it("verifies every answer of a batch alone, each with its own statement and path under one signature", async () => {
    const [batch] = await twoBatches();
    const indices = batch!.map((answer) => answer.signature.leaf_index);
    expect(new Set(indices).size).toBe(batch!.length);
  });

  it("refuses an answer carrying the inclusion path, or the root, of another batch", async () => {
    const [a, b] = await twoBatches();
    const donor = a![1]!;
    const attacks: [string, (json: Answer) => Answer][] = [
      ["path of another batch", (json) => ({ ...json, signature: { ...json.signature, path: donor.signature.path } })],
      [
        "place and path of another batch",
        (json) => ({ ...json, signature: { ...json.signature, ...batchOf(donor), root: json.signature.root } }),
      ],
      [
        "root and value of another batch",
        (json) => ({ ...json, signature: { ...json.signature, root: donor.signature.root, value: donor.signature.value } }),
      ],
      [
        "the whole batch part of another batch, own statement",
        (json) => ({ ...json, signature: { ...json.signature, ...batchOf(donor), value: donor.signature.value } }),
      ],
      ["root of another batch, own signature", (json) => ({ ...json, signature: { ...json.signature, root: b![0]!.signature.root } })],
    ];
    for (const [name, attack] of attacks) {
      proxy.forgery.current = { answer: attack };
      const result = await client(jwks).authorize(pay(100));
      expect(result.unavailable?.verification?.reason, name).toBe("bad_signature");
      expectRefused(result, "bad_signature");
      expectRefused(await client().authorize(pay(100)));
    }
    // The donor's whole signature (its own statement, validly signed) answers another request: refused for its nonce.
    proxy.forgery.current = { answer: (json) => ({ ...json, signature: donor.signature }) };
    expectRefused(await client(jwks).authorize(pay(100)), "replayed", "nonce");
  });

  it("refuses statements moved between the answers of one batch, with or without their paths", async () => {
    const moves: [string, (mine: Answer, mate: Answer) => Answer, string][] = [
      [
        "the mate's statement, own path",
        (mine, mate) => ({ ...mine, signature: { ...mine.signature, statement: mate.signature.statement } }),
        "bad_signature",
      ],
      ["the mate's whole signature", (mine, mate) => ({ ...mine, signature: mate.signature }), "replayed"],
      [
        "the mate's place and path, own statement",
        (mine, mate) => ({ ...mine, signature: { ...mine.signature, ...batchOf(mate) } }),
        "bad_signature",
      ],
    ];
    for (const [name, move, reason] of moves) {
      let swapped = 0;
      for (let round = 0; round < 20 && swapped === 0; round += 1) {
        const group = 8;
        const held: { json: Answer; release: (forged: unknown) => void }[] = [];
        proxy.forgery.current = {
          // Held until the group's answers are all in; then each with a mate in its batch gets the mate's.
          answerLater: (json) =>
            new Promise((release) => {
              held.push({ json, release });
              if (held.length < group) return;
              const originals = held.map((h) => h.json);
              for (const h of held) {
                const mate = originals.find((o) => o !== h.json && o.signature.root === h.json.signature.root);
                if (mate !== undefined) swapped += 1;
                h.release(mate === undefined ? h.json : move(h.json, mate));
              }
            }),
        };
        const results = await Promise.all(Array.from({ length: group }, () => client(jwks).authorize(pay(100))));
        const refused = results.filter((r) => r.unavailable !== null);
        expect(refused.length, name).toBe(swapped);
        for (const result of refused) expectRefused(result, reason);
        for (const result of results.filter((r) => r.unavailable === null)) expect(result.outcome).toBe("allow");
      }
      expect(swapped, name).toBeGreaterThan(0);
    }
  });

  it("keeps guard from running the tool on an answer respliced from another batch", async () => {
    const [a] = await twoBatches();
    proxy.forgery.current = {
      answer: (json) => ({ ...json, signature: { ...json.signature, ...batchOf(a![0]!), value: a![0]!.signature.value } }),
    };
    let ran = false;
    const result = await client(jwks).guard(
      grantId,
      "payments.send",
      () => {
        ran = true;
        return { value: "paid", spent_minor: 100 };
      },
      { amount_minor: 100, currency: "EUR", args: { to: "ACME" } },
    );
    expect(ran).toBe(false);
    expect(result).toMatchObject({ ran: false });
  });
});
