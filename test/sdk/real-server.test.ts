// Every SDK call that the reference server answers today, over HTTP against the real server on a random port.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENDPOINTS } from "@agent-authority/api";
import { AuthorityClient, AuthorityProblemError, type Grant, type GrantIssueBody } from "@agent-authority/sdk";
import { loadConfig, startServer, type AuthorityServer } from "@agent-authority/server";
import { compileFamily } from "@agent-authority/families";
import { buildManifest, compareManifest, grantedToolsOf } from "../../cli/src/manifest/index.js";
import { writeExampleAgent } from "./docs-blocks.js";

const adminKey = "aa_admin_sdk_suite_0123456789abcdef";
const has = (path: string): boolean => ENDPOINTS.some((endpoint) => endpoint.path === path);

let server: AuthorityServer;
let dataDir: string;
let admin: AuthorityClient;
let issuer: AuthorityClient;
let issuerKey: string;
let certifier: AuthorityClient;
let approver: AuthorityClient;
let agentId: string;

function client(apiKey: string, options: Partial<ConstructorParameters<typeof AuthorityClient>[0]> = {}): AuthorityClient {
  return new AuthorityClient({ baseUrl: server.baseUrl, apiKey, timeoutMs: 5_000, attempts: 2, retryDelayMs: 20, ...options });
}

/**
 * A proxy in front of the server that forwards every request but loses the answer to the first:
 * the server acted, the client saw a dropped connection. It records the idempotency keys it forwarded.
 */
async function lossyProxy(upstream: string): Promise<{ baseUrl: string; keys: string[]; close(): Promise<void> }> {
  const target = new URL(upstream);
  const keys: string[] = [];
  let forwarded = 0;
  const proxy: Server = createServer((incoming, outgoing) => {
    // Only POSTs count: a verifying client's fetch of the signing keys is passed through untouched.
    const index = incoming.method === "POST" ? forwarded++ : -1;
    if (index >= 0) keys.push(String(incoming.headers["idempotency-key"]));
    const onward = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, host: target.host },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () => {
          if (index === 0) {
            incoming.socket.destroy();
            return;
          }
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          outgoing.end(Buffer.concat(chunks));
        });
      },
    );
    incoming.pipe(onward);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    keys,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}

function grantBody(extra: Partial<GrantIssueBody> = {}): GrantIssueBody {
  return {
    agent_id: agentId,
    principal_type: "human",
    principal_id: "ops@example.com",
    scope: { tool: ["payments.*", "orders.lookup"] },
    budget_amount_minor: 5_000,
    budget_currency: "EUR",
    budget_count: 20,
    enforcement_mode: "observe",
    delegation_policy: "attenuating",
    ...extra,
  };
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "authority-sdk-"));
  const config = loadConfig(
    {
      AUTHORITY_PORT: "0",
      AUTHORITY_DATA_DIR: dataDir,
      AUTHORITY_ADMIN_KEY: adminKey,
      AUTHORITY_AUTO_APPROVAL_CEILING_MINOR: "10000",
      AUTHORITY_LOG_LEVEL: process.env["SDK_SUITE_LOG"] ?? "silent",
    },
    dataDir,
  );
  server = await startServer(config);
  admin = client(adminKey);
  const make = async (identity: string, kind: "human" | "service", role: "issuer" | "certifier" | "approver") =>
    client((await admin.keys.create({ identity, kind, roles: [role] })).key);
  issuerKey = (await admin.keys.create({ identity: "issuer-bot", kind: "service", roles: ["issuer"] })).key;
  issuer = client(issuerKey);
  certifier = await make("cert@example.com", "human", "certifier");
  approver = await make("approver@example.com", "human", "approver");
  agentId = (await issuer.agents.register({ name: "refund-bot", description: "refunds small orders" })).id;
});

afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the SDK against the reference server", () => {
  it("reads health, readiness and the OpenAPI document", async () => {
    expect(await admin.service.health()).toMatchObject({ status: "ok" });
    expect(await admin.service.ready()).toMatchObject({ status: "ok" });
    expect((await admin.service.openapi()).openapi).toBe("3.1.0");
  });

  it("registers agents idempotently by name, reads and lists them", async () => {
    const again = await issuer.agents.register({ name: "refund-bot" });
    expect(again.id).toBe(agentId);
    expect(await admin.agents.get(agentId)).toMatchObject({ id: agentId, name: "refund-bot", created_by: "issuer-bot" });
    expect((await admin.agents.list()).agents.map((agent) => agent.id)).toContain(agentId);
  });

  it("creates, lists and revokes keys; a revoked key gets typed problem details", async () => {
    const created = await admin.keys.create({ identity: "short-lived", kind: "service", roles: ["auditor"] });
    expect(created.key.length).toBeGreaterThan(10);
    expect((await admin.keys.list()).keys.map((key) => key.id)).toContain(created.id);
    const revoked = await admin.keys.revoke(created.id, { reason: "suite done" });
    expect(revoked.status).toBe("revoked");
    const failure = await client(created.key)
      .agents.list()
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AuthorityProblemError);
    expect(failure).toMatchObject({ status: 401, code: "unauthenticated" });
  });

  it("accepts the key in x-api-key as well as Bearer", async () => {
    expect((await client(adminKey, { keyHeader: "x-api-key" }).agents.get(agentId)).id).toBe(agentId);
  });

  it("issues in observe, refuses enforce for an uncertified agent, previews and reads grants", async () => {
    const grant = await issuer.grants.issue(grantBody());
    expect(grant).toMatchObject({ status: "active", enforcement_mode: "observe", agent_id: agentId });
    const refused = await issuer.grants.issue(grantBody({ enforcement_mode: "enforce" })).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 403, code: "certification_required" });
    const preview = await issuer.grants.preview({ ...grantBody({ enforcement_mode: "enforce" }), action: { tool: "files.delete" } });
    expect(preview).toMatchObject({ created: false });
    expect(["deny", "exhausted", "gated"]).toContain(preview.outcome);
    expect((await issuer.grants.get(grant.id)).id).toBe(grant.id);
  });

  it("lists grants by filter, one page or all of them behind the cursor", async () => {
    const issued: string[] = [];
    for (let i = 0; i < 3; i += 1) issued.push((await issuer.grants.issue(grantBody({ principal_id: "paging@example.com" }))).id);
    const first = await issuer.grants.list({ agent_id: agentId, principal_id: "paging@example.com", limit: 2 });
    expect(first.grants.map((g) => g.id)).toEqual(issued.slice(0, 2));
    expect(typeof first.next_cursor).toBe("string");
    const second = await issuer.grants.list({
      agent_id: agentId,
      principal_id: "paging@example.com",
      limit: 2,
      cursor: first.next_cursor!,
    });
    expect(second).toMatchObject({ grants: [{ id: issued[2] }], next_cursor: null });
    const all: string[] = [];
    for await (const grant of issuer.grants.all({ principal_id: "paging@example.com", status: "active", limit: 1 })) all.push(grant.id);
    expect(all).toEqual(issued);
    const refused = await issuer.grants.list({ cursor: "forged" }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 400, code: "invalid_cursor" });
  });

  it("lists pending grants and approves one with a human key", async () => {
    const pending = await issuer.grants.issue(grantBody({ require_approval: true }));
    expect(pending.status).toBe("pending_approval");
    expect((await approver.grants.pending()).grants.map((grant) => grant.id)).toContain(pending.id);
    const approved = await approver.grants.approve(pending.id, { note: "reviewed" });
    expect(approved).toMatchObject({ status: "active", approved_by: "approver@example.com" });
  });

  it("certifies with the manifest hash read from code, then escalates, delegates and revokes", async () => {
    const manifest = buildManifest(fileURLToPath(new URL("../manifest/fixtures/guard-agent", import.meta.url)));
    const certificate = await certifier.agents.certify(agentId, {
      basis: "reviewed the refund agent and its tool manifest",
      provenance_version: "model-2026-10",
      manifest_hash: manifest.manifest_hash,
      content_hash: "sha256:0000000000000000000000000000000000000000000000000000000000000001",
      checks: ["manifest reviewed", "least privilege"],
    });
    expect(certificate).toMatchObject({
      agent_id: agentId,
      status: "valid",
      issued_by: "cert@example.com",
      manifest_hash: manifest.manifest_hash,
    });
    expect(await issuer.agents.certification(agentId)).toMatchObject({ certified: true, certificate: { id: certificate.id } });
    expect((await admin.certificates.list({ agent_id: agentId })).certificates.map((c) => c.id)).toContain(certificate.id);

    const parent: Grant = await issuer.grants.issue(grantBody());
    expect(await issuer.grants.enforcement(parent.id, { enforcement_mode: "enforce" })).toMatchObject({ enforcement_mode: "enforce" });
    const child = await issuer.grants.delegate(parent.id, {
      agent_id: agentId,
      scope: { tool: ["payments.refund"] },
      budget_amount_minor: 1_000,
      budget_currency: "EUR",
    });
    expect(child).toMatchObject({ parent_id: parent.id, scope: { tool: ["payments.refund"] } });
    const widened = await issuer.grants
      .delegate(parent.id, { agent_id: agentId, scope: { tool: ["files.delete"] } })
      .catch((error: unknown) => error);
    expect(widened).toBeInstanceOf(AuthorityProblemError);
    expect(widened).toMatchObject({ status: 422, code: "delegation_widens" });
    const revocation = await issuer.grants.revoke(parent.id, { reason: "suite done" });
    expect([...revocation.revoked].sort()).toEqual([parent.id, child.id].sort());

    const revokedCertificate = await certifier.certificates.revoke(certificate.id, { reason: "suite done" });
    expect(revokedCertificate).toMatchObject({ status: "revoked", revoked_by: "cert@example.com" });
  });

  it("a retry after a lost answer replays the first result instead of acting twice", async (context) => {
    // Idempotency-Key on every POST is part of the decision-path work; until the server keeps keys, this is skipped.
    const probe = grantBody({ require_approval: true, principal_id: "probe@example.com" });
    const once = await issuer.grants.issue(probe, { idempotencyKey: "probe-key" });
    const twice = await issuer.grants.issue(probe, { idempotencyKey: "probe-key" });
    if (once.id !== twice.id) context.skip("the server does not replay Idempotency-Key yet");
    const proxy = await lossyProxy(server.baseUrl);
    try {
      const principal = `lossy-${Date.now()}@example.com`;
      const through = new AuthorityClient({ baseUrl: proxy.baseUrl, apiKey: issuerKey, attempts: 3, retryDelayMs: 10, timeoutMs: 5_000 });
      const grant = await through.grants.issue(grantBody({ require_approval: true, principal_id: principal }));
      expect(proxy.keys).toHaveLength(2);
      expect(proxy.keys[1]).toBe(proxy.keys[0]);
      const created = (await approver.grants.pending({ limit: 1_000 })).grants.filter((g) => g.principal_id === principal);
      expect(created.map((g) => g.id)).toEqual([grant.id]);
    } finally {
      await proxy.close();
    }
  });

  it("fails closed when the real server is down", async () => {
    const dir = mkdtempSync(join(tmpdir(), "authority-sdk-down-"));
    const config = loadConfig(
      { AUTHORITY_PORT: "0", AUTHORITY_DATA_DIR: dir, AUTHORITY_ADMIN_KEY: adminKey, AUTHORITY_LOG_LEVEL: "silent" },
      dir,
    );
    const stopped = await startServer(config);
    const url = stopped.baseUrl;
    await stopped.close();
    rmSync(dir, { recursive: true, force: true });
    const down = new AuthorityClient({ baseUrl: url, apiKey: adminKey, attempts: 2, retryDelayMs: 10, timeoutMs: 1_000 });
    const result = await down.authorize({ grant_id: "grt_00000000000000000000000000", tool: "payments.refund" });
    expect(result).toMatchObject({ outcome: "deny", ledger_id: null, unavailable: { cause: "network", attempts: 2 } });
  });
});

// The decision path: these run as soon as the api table lists `POST /authorize`.
describe.skipIf(!has("/authorize"))("the decision path against the reference server", () => {
  let agent: AuthorityClient;
  const attestation = {
    manifest_hash: "sha256:decision-path-manifest",
    content_hash: "sha256:decision-path-content",
    provenance_version: "model-2026-11",
  };

  beforeAll(async () => {
    const agentKey = (await admin.keys.create({ identity: "refund-bot-key", kind: "service", roles: ["agent"], agent_id: agentId })).key;
    agent = client(agentKey, { attestation });
  });

  it("authorizes in observe, guards and settles what the tool spent, and replays a repeated key", async () => {
    const grant = await issuer.grants.issue(grantBody());
    const action = { grant_id: grant.id, tool: "payments.refund", amount_minor: 1_000, currency: "EUR" };
    const first = await agent.authorize(action, { idempotencyKey: "refund-order-1" });
    const replay = await agent.authorize(action, { idempotencyKey: "refund-order-1" });
    expect(first).toMatchObject({ outcome: "allow", unavailable: null });
    expect(replay.ledger_id).toBe(first.ledger_id);
    // The stored answer is said to be a replay; the first is not.
    expect("replayed" in first).toBe(false);
    expect(replay).toMatchObject({ replayed: true });
    expect((await issuer.grants.get(grant.id)).held_minor).toBe(1_000);
    const guarded = await agent.guard(grant.id, "payments.refund", () => ({ value: "ok", spent_minor: 400 }), {
      amount_minor: 500,
      currency: "EUR",
    });
    expect(guarded).toMatchObject({ ran: true, value: "ok", settlement: { amount_minor: 400, released_minor: 100 }, settle_error: null });
    const observed = await agent.guard(grant.id, "files.delete", () => ({ value: "ran in observe" }));
    expect(observed).toMatchObject({ ran: true, decision: { outcome: "allow", would_outcome: "deny" } });
  });

  it("does not hold twice when the first answer is lost and the SDK retries", async () => {
    const grant = await issuer.grants.issue(grantBody());
    const proxy = await lossyProxy(server.baseUrl);
    try {
      const through = new AuthorityClient({
        baseUrl: proxy.baseUrl,
        apiKey: (await admin.keys.create({ identity: "refund-bot-proxy", kind: "service", roles: ["agent"], agent_id: agentId })).key,
        attempts: 3,
        retryDelayMs: 10,
      });
      const decision = await through.authorize({ grant_id: grant.id, tool: "payments.refund", amount_minor: 700, currency: "EUR" });
      expect(decision).toMatchObject({ outcome: "allow", unavailable: null });
      expect(proxy.keys).toHaveLength(2);
      expect(proxy.keys[1]).toBe(proxy.keys[0]);
      expect((await issuer.grants.get(grant.id)).held_minor).toBe(700);
    } finally {
      await proxy.close();
    }
  });

  it("gates, lets a human approve one action, and allows the retry with the approval", async () => {
    await certifier.agents.certify(agentId, { basis: "decision path suite", checks: ["attestation"], ...attestation });
    const grant = await issuer.grants.issue(
      grantBody({ enforcement_mode: "enforce", policy: 'amount_minor <= 1000 || approver == "approver@example.com"' }),
    );
    const action = { grant_id: grant.id, tool: "payments.refund", amount_minor: 2_000, currency: "EUR" };
    const gated = await agent.authorize(action);
    expect(gated).toMatchObject({ outcome: "gated", unavailable: null });
    // `residual` reads on any result, with no narrowing first (a type error before it did).
    const residual: string | undefined = gated.residual;
    expect(residual).toContain("approver@example.com");
    expect((await approver.decisions.pending()).decisions.map((d) => d.ledger_id)).toContain(gated.ledger_id);
    const approval = await approver.decisions.approve(gated.ledger_id!, { note: "customer called" });
    expect(approval).toMatchObject({
      ledger_id: gated.ledger_id,
      grant_id: grant.id,
      tool: "payments.refund",
      approver: "approver@example.com",
    });
    const approved = await agent.authorize({ ...action, approval_id: approval.approval_id });
    expect(approved).toMatchObject({ outcome: "allow", approver: "approver@example.com" });
    const again = await agent.authorize(action);
    expect(again.outcome).toBe("gated");
    const impostor = await agent.authorize({
      ...action,
      amount_minor: 10,
      attestation: { ...attestation, provenance_version: "another-model" },
    });
    expect(impostor).toMatchObject({ outcome: "deny", decided_by: "certification" });
  });

  it("runs the example agent of docs/sdk.md through the certification walkthrough", async () => {
    const dir = mkdtempSync(join(tmpdir(), "authority-example-"));
    try {
      const source = writeExampleAgent(dir);
      const manifest = buildManifest(dir);
      const pinned = { manifest_hash: manifest.manifest_hash, content_hash: "sha256:example-content", provenance_version: "model-2026-11" };
      await certifier.agents.certify(agentId, { basis: "walkthrough of docs/sdk.md", checks: ["manifest complete"], ...pinned });
      const grant = await issuer.grants.issue(
        grantBody({
          scope: { tool: ["orders.lookup", "payments.refund"] },
          enforcement_mode: "enforce",
          policy: 'amount_minor <= 1000 || approver == "approver@example.com"',
        }),
      );
      const agentKey = (await admin.keys.create({ identity: "refund-agent-example", kind: "service", roles: ["agent"], agent_id: agentId }))
        .key;
      Object.assign(process.env, {
        AUTHORITY_URL: server.baseUrl,
        AUTHORITY_AGENT_KEY: agentKey,
        AUTHORITY_GRANT_ID: grant.id,
        AGENT_MANIFEST_HASH: pinned.manifest_hash,
        AGENT_CONTENT_HASH: pinned.content_hash,
        AGENT_PROVENANCE: pinned.provenance_version,
      });
      const example = (await import(source)) as { refund(order: string, approvalId?: string): Promise<string> };
      const first = await example.refund("order-1001");
      expect(first).toMatch(/^refund refused \(gated\): .*approvable by .*approver@example\.com.*, ledger led_/);
      const ledgerId = /ledger (led_[0-9a-z]+)/.exec(first)![1]!;
      const approval = await approver.decisions.approve(ledgerId, { amount_minor_max: 1_250, note: "customer called" });
      expect(await example.refund("order-1001", approval.approval_id)).toBe("refunded 1250 EUR for order-1001 (settled 1250)");
      expect(await issuer.grants.get(grant.id)).toMatchObject({ settled_minor: 1_250, held_minor: 0 });
      const ledger = await admin.ledger.tree(grant.id);
      expect(ledger.verification.ok).toBe(true);
      expect(ledger.records.map((record) => record.kind)).toContain("settlement");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!has("/agents/{agent_id}/breakers"))("contracts, breakers, findings and the ledger against the reference server", () => {
  it("declares a contract, creates a breaker in observe, arms it with the counterfactual count and disarms it", async () => {
    const contract = await approver.contracts.declare(agentId, {
      metric: "deny_rate",
      ceiling: 0.5,
      window_decisions: 50,
      description: "few refusals",
    });
    expect(contract).toMatchObject({ agent_id: agentId, declared_by: "approver@example.com", metric: "deny_rate" });
    expect((await issuer.contracts.list(agentId)).contracts.map((c) => c.id)).toContain(contract.id);
    const breaker = await issuer.breakers.create(agentId, { contract_id: contract.id, action: "notify" });
    expect(breaker).toMatchObject({ mode: "observe", contract_id: contract.id, action: "notify" });
    expect((await admin.breakers.get(breaker.id)).id).toBe(breaker.id);
    const replay = await admin.breakers.counterfactual(agentId, { breaker_id: breaker.id });
    const trips = replay.breakers.find((b) => b.breaker_id === breaker.id)!.trips;
    const wrong = await approver.breakers
      .arm(breaker.id, { basis: "reviewed", expecting_trips: trips + 1 })
      .catch((error: unknown) => error);
    expect(wrong).toBeInstanceOf(AuthorityProblemError);
    expect(wrong).toMatchObject({ status: 409 });
    expect(JSON.stringify((wrong as AuthorityProblemError).problem)).not.toContain(`"trips":${trips}`);
    const armed = await approver.breakers.arm(breaker.id, { basis: "reviewed the 90-day replay", expecting_trips: trips });
    expect(armed).toMatchObject({ mode: "armed", armed_by: "approver@example.com", expecting_trips: trips });
    expect(await approver.breakers.disarm(breaker.id, { reason: "suite done" })).toMatchObject({ mode: "observe" });
    expect(Array.isArray((await admin.findings.list({ agent_id: agentId })).findings)).toBe(true);
  });

  it("answers whoami for the calling key and verifies the ledger", async () => {
    expect(await approver.keys.whoami()).toMatchObject({ identity: "approver@example.com", kind: "human", roles: ["approver"] });
    const verification = await admin.ledger.verify();
    expect(verification).toMatchObject({ ok: true, broken: null });
  });
});

describe.skipIf(!has("/grant-families/{family_id}/instantiate"))("grant families against the reference server", () => {
  const yaml = `
id: refunds
version: 1
reviewed_by: [reviewer@example.com]
parameters:
  agent_id: {type: string, pattern: "agt_[0-9a-hjkmnp-tv-z]{26}", example: agt_nwj47tan9zt24mnpzx45hy43kw}
grant:
  agent_id: \${agent_id}
  principal_type: team
  principal_id: support
  scope: {tool: [orders.lookup, payments.refund, mail.*, crm.notes]}
  budget_amount_minor: 5000
  budget_currency: EUR
  enforcement_mode: observe
examples:
  - name: a refund is in scope
    action: {tool: payments.refund, amount_minor: 500, currency: EUR}
    expect: allow
`;

  it("defines, lists, reads and instantiates a family, previews an impact, and compares it with an agent's manifest", async () => {
    const compiled = compileFamily(yaml, "refunds.yaml");
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
    // The body travels as JSON, as it does from `authority push`.
    const body: Parameters<typeof issuer.families.define>[0] = JSON.parse(JSON.stringify(compiled.body));
    const family = await issuer.families.define(body);
    expect(family).toMatchObject({ name: "refunds", version: 1, pushed_by: "issuer-bot" });
    expect((await issuer.families.list({ name: "refunds" })).families.map((f) => f.id)).toContain(family.id);
    expect((await issuer.families.get(family.id, { version: 1 })).content_hash).toBe(family.content_hash);
    const grant = await issuer.families.instantiate(family.id, { parameters: { agent_id: agentId } });
    expect(grant).toMatchObject({ agent_id: agentId, family_id: family.id, enforcement_mode: "observe" });
    const impact = await issuer.families.impact(family.id, { family: body, days: 7 });
    expect(impact).toMatchObject({ family_id: family.id, changed: 0 });

    const granted = grantedToolsOf(await issuer.families.get(family.id));
    expect(granted).toEqual({ tools: ["orders.lookup", "payments.refund", "mail.*", "crm.notes"], placeholders: [] });
    const manifest = buildManifest(fileURLToPath(new URL("../manifest/fixtures/guard-agent", import.meta.url)));
    expect(compareManifest(manifest, granted.tools)).toEqual({
      used_not_granted: [],
      granted_not_used: ["crm.notes"],
      least_privilege: false,
      complete: true,
    });
  });
});
