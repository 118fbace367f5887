// The console listens to GET /v1/events in a real browser: a pending grant and a gated decision
// appear in their views when they are made through the API, and disappear when they are approved
// elsewhere, without a reload of the page.

import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ADMIN_KEY, CERTIFICATION, startTestServer, type TestServer } from "../server/http-harness.js";
import { browserSuite, launchBrowser, signIn, sqliteTarget, watchErrors, type ConsoleBrowser } from "./browser.js";

const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

browserSuite("console listens to events", () => {
  let t: TestServer;
  let browser: ConsoleBrowser;
  let page: Page;
  let approverKey: string;
  let otherApproverKey: string;
  let agentKey: string;
  let agentId: string;
  const errors: string[] = [];

  const post = async (path: string, body: unknown, key = ADMIN_KEY) => {
    const reply = await t.call("POST", path, { key, body });
    if (reply.status >= 300) throw new Error(`${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  };

  beforeAll(async () => {
    t = await startTestServer(sqliteTarget, { eventPollMs: 20 });
    const agent = await post("/agents", { name: "live-bot" });
    agentId = agent.id;
    await post(`/agents/${agentId}/certification`, CERTIFICATION);
    approverKey = await t.key("alice@example.com", ["approver", "auditor"]);
    otherApproverKey = await t.key("bob@example.com", ["approver"]);
    agentKey = await t.key("live-bot-key", ["agent"], { kind: "service", agent_id: agentId });
    browser = await launchBrowser();
    page = await browser.context.newPage();
    watchErrors(page, errors);
    await signIn(page, t.baseUrl.replace(/\/v1$/, ""), approverKey);
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("shows a pending grant when it is issued and drops it when another human approves it", async () => {
    await page.evaluate(() => {
      location.hash = "#pending";
    });
    await page.locator("#no-pending").waitFor();
    const marker = await page.evaluate(() => {
      (window as unknown as { __same?: number }).__same = 1;
      return 1;
    });
    const grant = await post("/grants", {
      agent_id: agentId,
      principal_type: "human",
      principal_id: "p@example.com",
      scope: { tool: ["refunds.*"] },
      require_approval: true,
    });
    const card = page.locator(`article.grant[data-grant-id="${grant.id}"]`);
    await card.waitFor();
    await post(`/grants/${grant.id}/approve`, {}, otherApproverKey);
    await card.waitFor({ state: "detached" });
    // The same page all along: no reload happened.
    expect(await page.evaluate(() => (window as unknown as { __same?: number }).__same)).toBe(marker);
  });

  it("shows a gated decision when the agent is gated and drops it once approved elsewhere", async () => {
    await page.evaluate(() => {
      location.hash = "#gated";
    });
    await page.locator("#view-gated").waitFor();
    const grant = await post("/grants", {
      agent_id: agentId,
      principal_type: "human",
      principal_id: "p@example.com",
      scope: { tool: ["payments.send"] },
      budget_amount_minor: 5_000,
      budget_currency: "EUR",
      policy: 'amount_minor <= 1000 || approver in ["alice@example.com", "bob@example.com"]',
    });
    const decision = await post(
      "/authorize",
      { grant_id: grant.id, tool: "payments.send", amount_minor: 2_500, currency: "EUR", attestation: ATTESTATION },
      agentKey,
    );
    expect(decision.outcome).toBe("gated");
    const card = page.locator(`article.decision[data-ledger-id="${decision.ledger_id}"]`);
    await card.waitFor();
    await post(`/decisions/${decision.ledger_id}/approve`, {}, otherApproverKey);
    await card.waitFor({ state: "detached" });
    expect(await page.evaluate(() => (window as unknown as { __same?: number }).__same)).toBe(1);
  });

  it("raised no script error and no CSP violation", () => {
    expect(errors).toEqual([]);
  });
});
