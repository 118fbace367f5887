// The approvals console in a real browser against a real server on a random port and a fresh
// SQLite database: sign-in, approving a pending grant and a gated action (the agent's retry is then
// allowed), certificates, the ledger's verification, and hostile text that
// must render as text. Each view is photographed into docs/console/ for docs/console.md.

import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ADMIN_KEY, CERTIFICATION, startTestServer, type TestServer } from "../server/http-harness.js";
import { browserSuite, launchBrowser, shot, signIn, sqliteTarget, watchErrors, type ConsoleBrowser } from "./browser.js";

const APPROVER = "alice@example.com";
/** Text that would run script if it were ever parsed as HTML. */
const HOSTILE_IMG = "<img src=x onerror=window.__pwned=1>";
const HOSTILE_SCRIPT = "</script><script>window.__pwned=2</script>";
const ATTESTATION = { manifest_hash: CERTIFICATION.manifest_hash, content_hash: CERTIFICATION.content_hash, provenance_version: CERTIFICATION.provenance_version };

browserSuite("console in a browser", consoleSuite);

interface World {
  t: TestServer;
  origin: string;
  approverKey: string;
  auditorKey: string;
  agentKey: string;
  agentId: string;
  pendingGrantId: string;
  gatedGrantId: string;
  gatedLedgerId: string;
  otherAgentId: string;
}

async function seed(t: TestServer): Promise<World> {
  const admin = { key: ADMIN_KEY };
  const post = async (path: string, body: unknown, key = ADMIN_KEY) => {
    const reply = await t.call("POST", path, { key, body });
    if (reply.status >= 300) throw new Error(`${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  };
  const agent = await post("/agents", { name: "refund-bot", description: `refunds ${HOSTILE_SCRIPT}` });
  const other = await post("/agents", { name: "triage-bot", description: "sorts the queue" });
  await post(`/agents/${agent.id}/certification`, CERTIFICATION);
  const approverKey = await t.key(APPROVER, ["approver", "certifier", "auditor"]);
  const auditorKey = await t.key("carol@example.com", ["auditor"]);
  const agentKey = await t.key("refund-bot-key", ["agent"], { kind: "service", agent_id: agent.id });
  const pending = await post("/grants", {
    agent_id: agent.id, principal_type: "team", principal_id: "payments-ops", scope: { tool: ["refunds.*"] },
    budget_amount_minor: 50_000, budget_currency: "EUR", budget_count: 20, ttl_hours: 48, audience: "shop.example",
    conditions: { clean_context: true }, delegation_policy: "attenuating", require_approval: true,
    policy: `amount_minor <= 20000 && args.memo != "${HOSTILE_IMG}" && args.note != "${HOSTILE_SCRIPT}" || approver in ["cfo@example.com", "${APPROVER}"]`,
  });
  const gated = await post("/grants", {
    agent_id: agent.id, principal_type: "human", principal_id: "dana@example.com", scope: { tool: ["payments.send"] },
    budget_amount_minor: 5_000, budget_currency: "EUR", policy: `amount_minor <= 1000 || approver == "${APPROVER}"`,
  });
  expect(gated.status).toBe("active");
  const decision = await post("/authorize", { grant_id: gated.id, tool: "payments.send", amount_minor: 2500, currency: "EUR", attestation: ATTESTATION }, agentKey);
  expect(decision.outcome).toBe("gated");
  void admin;
  return {
    t, origin: t.baseUrl.replace(/\/v1$/, ""), approverKey, auditorKey, agentKey, agentId: agent.id,
    pendingGrantId: pending.id, gatedGrantId: gated.id, gatedLedgerId: decision.ledger_id, otherAgentId: other.id,
  };
}

function consoleSuite(): void {
  let w: World;
  let browser: ConsoleBrowser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const t = await startTestServer(sqliteTarget);
    w = await seed(t);
    browser = await launchBrowser();
    page = await browser.context.newPage();
    watchErrors(page, pageErrors);
  });

  afterAll(async () => {
    await browser?.close();
    await w?.t.close();
  });

  it("signs in with a key kept in session storage only and shows the identity, kind and roles", async () => {
    await page.goto(`${w.origin}/console`);
    await page.locator("#signin").waitFor();
    await shot(page, "sign-in");
    await signIn(page, w.origin, w.approverKey);
    expect(await page.locator("#who").textContent()).toBe(APPROVER);
    expect(await page.locator("#kind").textContent()).toBe("human");
    expect(await page.locator("#roles").textContent()).toBe("approver, certifier, auditor");
    expect(page.url()).not.toContain(w.approverKey);
    const storage = await page.evaluate(() => ({
      session: Object.values(sessionStorage), local: localStorage.length, cookie: document.cookie,
    }));
    expect(storage).toEqual({ session: [w.approverKey], local: 0, cookie: "" });
  });

  it("shows a pending grant's full shape and renders a hostile policy as text", async () => {
    const card = page.locator(`article.grant[data-grant-id="${w.pendingGrantId}"]`);
    await card.waitFor();
    const policy = await card.locator("pre.policy").textContent();
    expect(policy).toContain(HOSTILE_IMG);
    expect(policy).toContain(HOSTILE_SCRIPT);
    expect(policy).toContain("\n"); // laid out one clause per line
    const shape = await card.locator("dl.fields").first().textContent();
    for (const text of ["payments-ops", "refunds.*", "50000 minor units (500.00 EUR)", "shop.example", "attenuating", "admin"]) expect(shape).toContain(text);
    expect(await page.locator("main img, main script").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await shot(page, "pending-grants");
  });

  it("approves the pending grant through the API with the signed-in key", async () => {
    const card = page.locator(`article.grant[data-grant-id="${w.pendingGrantId}"]`);
    await card.locator("input[name=note]").fill("checked with payments-ops");
    await card.locator("form.approve button[type=submit]").click();
    await expect.poll(() => card.locator(".success").textContent()).toContain(`Approved by ${APPROVER}`);
    const grant = await w.t.call("GET", `/grants/${w.pendingGrantId}`, { key: ADMIN_KEY });
    expect(grant.body).toMatchObject({ status: "active", approved_by: APPROVER });
  });

  it("offers a read-only key no approval", async () => {
    const other = await w.t.call("POST", "/grants", { key: ADMIN_KEY, body: {
      agent_id: w.agentId, principal_type: "team", principal_id: "ops", scope: { tool: ["refunds.read"] }, require_approval: true, enforcement_mode: "observe",
    } });
    await page.locator("#signout").click();
    await signIn(page, w.origin, w.auditorKey);
    const card = page.locator(`article.grant[data-grant-id="${other.body.id}"]`);
    await card.waitFor();
    expect(await card.locator("form.approve").count()).toBe(0);
    expect(await page.locator("nav a[data-view]").evaluateAll((links) => links.map((a) => a.getAttribute("data-view"))))
      .toEqual(["pending", "agents", "contracts", "breakers", "ledger"]);
    await page.goto(`${w.origin}/console/#gated`);
    await page.locator("#view-gated[aria-busy=false]").waitFor();
    expect(await page.locator("#view-gated").textContent()).toContain("Your roles do not include this view");
    expect(await page.locator("form.approve-decision").count()).toBe(0);
    await page.locator("#signout").click();
    await signIn(page, w.origin, w.approverKey);
  });

  it("approves a gated action with an amount ceiling, and the agent's retry is allowed", async () => {
    await page.locator("a[data-view=gated]").click();
    const form = page.locator("form.approve-decision");
    await form.locator("input[name=ledger_id]").fill(w.gatedLedgerId);
    await form.locator("input[name=amount_minor_max]").fill("2500");
    await form.locator("input[name=note]").fill("refund for order 7");
    await form.locator("button[type=submit]").click();
    const approvalId = (await page.locator(".approval-id").textContent())!;
    expect(approvalId).toMatch(/^apv_/);
    await shot(page, "gated-decisions");
    const retry = await w.t.call("POST", "/authorize", { key: w.agentKey, body: {
      grant_id: w.gatedGrantId, tool: "payments.send", amount_minor: 2500, currency: "EUR", attestation: ATTESTATION, approval_id: approvalId,
    } });
    expect(retry.body).toMatchObject({ outcome: "allow", approver: APPROVER });
    // The same ledger id again is refused by the API, and the console says so.
    await page.reload();
    await form.locator("input[name=ledger_id]").fill(w.gatedLedgerId);
    await form.locator("button[type=submit]").click();
    await expect.poll(() => page.locator(".approval-result .error").textContent()).toContain("decision_already_approved");
  });

  it("certifies an agent, revokes the certificate and keeps it in the history", async () => {
    await page.locator("a[data-view=agents]").click();
    const card = page.locator(`article.agent[data-agent-id="${w.otherAgentId}"]`);
    await card.locator("details.certify-panel summary").click();
    const form = card.locator("form.certify");
    await form.locator("input[name=basis]").fill("red-team report 14");
    await form.locator("input[name=provenance_version]").fill("model-2026-03");
    await form.locator("input[name=manifest_hash]").fill("sha256:aaaa");
    await form.locator("input[name=content_hash]").fill("sha256:bbbb");
    await form.locator("textarea[name=checks]").fill("tool manifest reviewed\nred-team run 14");
    await form.locator("button[type=submit]").click();
    await card.locator("tr.certificate[data-status=valid]").waitFor();
    await card.locator("tr.certificate[data-status=valid] input[name=reason]").fill("model swapped");
    await card.locator("tr.certificate[data-status=valid] form.revoke-certificate button").click();
    await card.locator("tr.certificate[data-status=revoked]").waitFor();
    expect(await card.locator("tr.certificate").count()).toBe(1);
    expect(await card.locator("tr.certificate[data-status=revoked]").textContent()).toContain("model swapped");
    // The description of the other agent carries hostile text: it is text.
    expect(await page.locator(`article.agent[data-agent-id="${w.agentId}"] dl.fields`).first().textContent()).toContain(HOSTILE_SCRIPT);
    expect(await page.locator("main img, main script").count()).toBe(0);
    await shot(page, "agents");
  });

  it("shows the ledger's chain verification", async () => {
    await page.goto(`${w.origin}/console/#ledger/${w.gatedGrantId}`);
    await expect.poll(() => page.locator("#chain-status").textContent()).toBe("Chains verified");
    await shot(page, "ledger");
  });

  it("renders hostile text from the address bar as text", async () => {
    await page.goto(`${w.origin}/console/#ledger/${encodeURIComponent(HOSTILE_IMG)}`);
    await page.locator("#view-ledger .error").waitFor();
    expect(await page.locator("main img, main script").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  it("raised no script error and no CSP violation", () => {
    expect(pageErrors).toEqual([]);
  });
}
