// Contracts and breakers in the console, in a real browser against a real server: the Wilson
// interval drawn against the ceiling, the counterfactual trips on a 90-day timeline, and arming,
// refused with the wrong expected count and accepted with the right one.

import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ADMIN_KEY, CERTIFICATION, startTestServer, type TestServer } from "../server/http-harness.js";
import { browserSuite, launchBrowser, shot, signIn, sqliteTarget, watchErrors, type ConsoleBrowser } from "./browser.js";

const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

browserSuite("console in a browser: contracts and breakers", () => {
  let t: TestServer;
  let origin: string;
  let browser: ConsoleBrowser;
  let page: Page;
  let agentId: string;
  let contractId: string;
  let breakerId: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    t = await startTestServer(sqliteTarget);
    origin = t.baseUrl.replace(/\/v1$/, "");
    const post = async (path: string, body: unknown, key = ADMIN_KEY) => {
      const reply = await t.call("POST", path, { key, body });
      if (reply.status >= 300) throw new Error(`${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
      return reply.body;
    };
    const agent = await post("/agents", { name: "ledger-bot" });
    agentId = agent.id;
    await post(`/agents/${agentId}/certification`, CERTIFICATION);
    const agentKey = await t.key("ledger-bot-key", ["agent"], { kind: "service", agent_id: agentId });
    const grant = await post("/grants", {
      agent_id: agentId,
      principal_type: "team",
      principal_id: "finance",
      scope: { tool: ["ledger.read"] },
    });
    const contract = await post(`/agents/${agentId}/contracts`, {
      metric: "deny_rate",
      ceiling: 0.1,
      window_decisions: 20,
      description: "denials stay rare",
    });
    contractId = contract.id;
    // Two more, so the view shows every status: within its ceiling, and not demonstrated either way.
    await post(`/agents/${agentId}/contracts`, { metric: "refusal_rate", ceiling: 0.9, window_decisions: 20 });
    await post(`/agents/${agentId}/contracts`, { metric: "gated_rate", ceiling: 0.05, window_decisions: 20 });
    breakerId = (await post(`/agents/${agentId}/breakers`, { contract_id: contractId, action: "notify" })).id;
    // Twenty in scope, then every other one out of scope: the last 20 decisions deny at 50%, whose
    // interval lies wholly above the 10% ceiling, so the contract breaches.
    for (let i = 0; i < 40; i += 1) {
      const tool = i >= 20 && i % 2 === 0 ? "ledger.write" : "ledger.read";
      await post("/authorize", { grant_id: grant.id, tool, attestation: ATTESTATION }, agentKey);
    }
    browser = await launchBrowser();
    page = await browser.context.newPage();
    watchErrors(page, pageErrors);
    await signIn(page, origin, await t.key("alice@example.com", ["approver", "auditor"]));
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("shows a contract's live status and its Wilson interval against the ceiling", async () => {
    const live = (await t.call("GET", `/agents/${agentId}/contracts`, { key: ADMIN_KEY })).body.contracts.find(
      (c: { id: string }) => c.id === contractId,
    );
    await page.goto(`${origin}/console/#contracts/${agentId}`);
    const card = page.locator(`article.contract[data-contract-id="${contractId}"]`);
    await card.waitFor();
    expect(await card.locator("h3 .badge").textContent()).toBe(live.status);
    expect(await card.locator("svg.wilson rect.interval").count()).toBe(1);
    expect(await card.locator("svg.wilson line.ceiling").count()).toBe(1);
    expect(await card.textContent()).toContain(`${(live.interval.lower * 100).toFixed(2)}% to ${(live.interval.upper * 100).toFixed(2)}%`);
    await shot(page, "contracts");
  });

  it("arms a breaker only with the expected trip count the server computes", async () => {
    const counterfactual = (await t.call("GET", `/agents/${agentId}/breakers/counterfactual`, { key: ADMIN_KEY })).body;
    const trips = counterfactual.breakers.find((b: { breaker_id: string }) => b.breaker_id === breakerId).trips as number;
    await page.goto(`${origin}/console/#breakers/${agentId}`);
    const card = page.locator(`article.breaker[data-breaker-id="${breakerId}"]`);
    await card.waitFor();
    expect(await card.locator("h3 .badge").first().textContent()).toBe("observe");
    expect(await card.locator("svg.timeline line.trip").count()).toBe(trips);
    // The form says the count the server expects, without filling it in: the human states it.
    expect(await card.locator(".arm-hint .expected-trips").textContent()).toBe(String(trips));
    expect(await card.locator(".arm-hint").textContent()).toContain("Arming with any other count is refused.");
    expect(await card.locator("input[name=expecting_trips]").getAttribute("placeholder")).toBe(String(trips));
    expect(await card.locator("input[name=expecting_trips]").inputValue()).toBe("");
    await card.locator("input[name=expecting_trips]").fill(String(trips + 1));
    await card.locator("input[name=basis]").fill("reviewed the last 90 days with finance");
    await shot(page, "breakers");
    await card.locator("form.arm button[type=submit]").click();
    await expect.poll(() => card.locator(".arm-result .error").textContent()).toContain("409");
    expect((await t.call("GET", `/breakers/${breakerId}`, { key: ADMIN_KEY })).body.mode).toBe("observe");
    await card.locator("input[name=expecting_trips]").fill(String(trips));
    await card.locator("form.arm button[type=submit]").click();
    await expect.poll(() => card.locator("h3 .badge").first().textContent()).toBe("armed");
    const armed = (await t.call("GET", `/breakers/${breakerId}`, { key: ADMIN_KEY })).body;
    expect(armed).toMatchObject({ mode: "armed", armed_by: "alice@example.com" });
    // The "armed" field reads as one line: its time and who armed it, not a list with a broken item.
    const field = card.locator("dl.fields dt", { hasText: /^armed$/ }).locator("xpath=following-sibling::dd[1]");
    expect(await field.locator("ol, li").count()).toBe(0);
    expect(await field.textContent()).toBe(`${armed.armed_at.replace("T", " ").replace(/\.\d+Z$/, "Z")} by alice@example.com`);
  });

  it("raised no script error and no CSP violation", () => {
    expect(pageErrors).toEqual([]);
  });
});
