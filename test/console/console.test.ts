// The approvals console in a real browser against a real server on a random port and a fresh
// SQLite database: sign-in, approving a pending grant and a gated action (the agent's retry is then
// allowed), certificates, the ledger's verification, and hostile text that
// must render as text. Each view is photographed into docs/console/ for docs/console.md.

import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ADMIN_KEY, CERTIFICATION, startTestServer, type TestServer } from "../server/http-harness.js";
import { browserSuite, launchBrowser, shot, shotOf, signIn, sqliteTarget, watchErrors, type ConsoleBrowser } from "./browser.js";

const APPROVER = "alice@example.com";
/** Text that would run script if it were ever parsed as HTML. */
const HOSTILE_IMG = "<img src=x onerror=window.__pwned=1>";
const HOSTILE_SCRIPT = "</script><script>window.__pwned=2</script>";
/** A right-to-left override and a zero-width space: raw, they would hide in what an approver reads. */
const HIDDEN = "x\u202e\u200b";
const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

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
  /** The agent's allowed retry after the approval, sealed after the gated decision. */
  retryLedgerId?: string;
  /** The settlement of that retry, sealed after it. */
  settlementLedgerId?: string;
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
    agent_id: agent.id,
    principal_type: "team",
    principal_id: "payments-ops",
    scope: { tool: ["refunds.*"] },
    budget_amount_minor: 50_000,
    budget_currency: "EUR",
    budget_count: 20,
    ttl_hours: 48,
    audience: "shop.example",
    conditions: { clean_context: true },
    delegation_policy: "attenuating",
    require_approval: true,
    policy: `amount_minor <= 20000 && args.memo != "${HOSTILE_IMG}" && args.note != "${HOSTILE_SCRIPT}" && args.ref != "${HIDDEN}" || approver in ["cfo@example.com", "${APPROVER}"]`,
  });
  const gated = await post("/grants", {
    agent_id: agent.id,
    principal_type: "human",
    principal_id: "dana@example.com",
    scope: { tool: ["payments.send"] },
    budget_amount_minor: 5_000,
    budget_currency: "EUR",
    policy: `amount_minor <= 1000 || approver == "${APPROVER}"`,
  });
  expect(gated.status).toBe("active");
  const decision = await post(
    "/authorize",
    {
      grant_id: gated.id,
      tool: "payments.send",
      amount_minor: 2500,
      currency: "EUR",
      attestation: ATTESTATION,
      args: { order: "7", memo: HOSTILE_IMG },
    },
    agentKey,
  );
  expect(decision.outcome).toBe("gated");
  void admin;
  return {
    t,
    origin: t.baseUrl.replace(/\/v1$/, ""),
    approverKey,
    auditorKey,
    agentKey,
    agentId: agent.id,
    pendingGrantId: pending.id,
    gatedGrantId: gated.id,
    gatedLedgerId: decision.ledger_id,
    otherAgentId: other.id,
  };
}

/**
 * What a reader of the page at its current width would lose: anything beyond the screen, a cell
 * whose content is wider than the cell (cut, or scrolled), a table scrolled sideways (columns out
 * of sight), and an id broken across lines (one box per line).
 */
function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    const where = (e: Element): string => `${e.tagName.toLowerCase()}.${e.className} "${(e.textContent ?? "").slice(0, 30)}"`;
    if (document.documentElement.scrollWidth > window.innerWidth) found.push(`page ${document.documentElement.scrollWidth} px wide`);
    for (const e of Array.from(document.querySelectorAll("main *"))) {
      const box = e.getBoundingClientRect();
      if (box.width > 0 && box.right > window.innerWidth + 0.5) found.push(`beyond the screen: ${where(e)}`);
    }
    for (const e of Array.from(document.querySelectorAll("main td, main th, main dd")))
      if (e.scrollWidth > e.clientWidth + 1) found.push(`cut: ${where(e)}`);
    for (const e of Array.from(document.querySelectorAll("main .table-scroll")))
      if (e.scrollWidth > e.clientWidth + 1) found.push(`scrolled sideways: ${where(e)}`);
    for (const e of Array.from(document.querySelectorAll("main .id")))
      if (e.getClientRects().length > 1) found.push(`id broken: ${where(e)}`);
    return found;
  });
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
      session: Object.values(sessionStorage),
      local: localStorage.length,
      cookie: document.cookie,
    }));
    expect(storage).toEqual({ session: [w.approverKey], local: 0, cookie: "" });
    // The approver lands on what waits for them, with the counts of both queues in the navigation.
    await page.locator("#view-gated[aria-busy=false]").waitFor();
    expect(await page.locator("nav a[aria-current=page]").getAttribute("data-view")).toBe("gated");
    expect(await page.locator("nav a[data-view=gated] .count").textContent()).toBe("1");
    expect(await page.locator("nav a[data-view=pending] .count").textContent()).toBe("1");
    expect(await page.locator(`article.decision[data-ledger-id="${w.gatedLedgerId}"]`).count()).toBe(1);
    await shot(page, "landing");
  });

  it("lands on the grants awaiting approval when no decision waits, and on the first view when nothing waits", async () => {
    // A key whose residual admits no waiting decision: the gated queue counts 0 for it.
    const bobKey = await w.t.key("bob@example.com", ["approver"]);
    await page.locator("#signout").click();
    await signIn(page, w.origin, bobKey);
    await page.locator("#view-pending[aria-busy=false]").waitFor();
    expect(await page.locator("nav a[data-view=gated] .count").textContent()).toBe("0");
    expect(await page.locator("nav a[data-view=pending] .count").textContent()).toBe("1");
    await page.locator("#signout").click();
    await signIn(page, w.origin, w.approverKey);
    await page.locator("#view-gated[aria-busy=false]").waitFor();
  });

  it("shows a pending grant's full shape and renders a hostile policy as text", async () => {
    await page.locator("a[data-view=pending]").click();
    const card = page.locator(`article.grant[data-grant-id="${w.pendingGrantId}"]`);
    await card.waitFor();
    const policy = await card.locator("pre.policy").textContent();
    expect(policy).toContain(HOSTILE_IMG);
    expect(policy).toContain(HOSTILE_SCRIPT);
    expect(policy).toContain("\n"); // laid out one clause per line
    // Hidden characters are shown as escapes, never raw.
    expect(policy).toContain("x\\u202e\\u200b");
    expect(policy).not.toMatch(/[\u202e\u200b]/);
    const shape = await card.locator("dl.fields").first().textContent();
    for (const text of ["payments-ops", "refunds.*", "50000 minor units (500.00 EUR)", "shop.example", "attenuating", "admin"])
      expect(shape).toContain(text);
    expect(await page.locator("main img, main script").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await shot(page, "pending-grants");
  });

  it("approves the pending grant through the API with the signed-in key", async () => {
    const card = page.locator(`article.grant[data-grant-id="${w.pendingGrantId}"]`);
    await card.locator("input[name=note]").fill("checked with payments-ops");
    await card.locator("form.approve button[type=submit]").click();
    await expect.poll(() => card.locator(".success").textContent()).toContain(`Approved by ${APPROVER}`);
    // Nothing waits in that queue any more, and the navigation says so without a reload.
    await expect.poll(() => page.locator("nav a[data-view=pending] .count").textContent()).toBe("0");
    const grant = await w.t.call("GET", `/grants/${w.pendingGrantId}`, { key: ADMIN_KEY });
    expect(grant.body).toMatchObject({ status: "active", approved_by: APPROVER });
  });

  it("offers a read-only key no approval", async () => {
    const other = await w.t.call("POST", "/grants", {
      key: ADMIN_KEY,
      body: {
        agent_id: w.agentId,
        principal_type: "team",
        principal_id: "ops",
        scope: { tool: ["refunds.read"] },
        require_approval: true,
        enforcement_mode: "observe",
      },
    });
    await page.locator("#signout").click();
    await signIn(page, w.origin, w.auditorKey);
    const card = page.locator(`article.grant[data-grant-id="${other.body.id}"]`);
    await card.waitFor();
    expect(await card.locator("form.approve").count()).toBe(0);
    expect(await page.locator("nav a[data-view]").evaluateAll((links) => links.map((a) => a.getAttribute("data-view")))).toEqual([
      "pending",
      "grants",
      "families",
      "agents",
      "contracts",
      "breakers",
      "ledger",
    ]);
    await page.goto(`${w.origin}/console/#gated`);
    await page.locator("#view-gated[aria-busy=false]").waitFor();
    expect(await page.locator("#view-gated").textContent()).toContain("Your roles do not include this view");
    expect(await page.locator("form.approve-decision").count()).toBe(0);
    await page.locator("#signout").click();
    await signIn(page, w.origin, w.approverKey);
  });

  it("lists the gated decision with who can approve and its gates, approves it from the list, and the agent's retry is allowed", async () => {
    await page.locator("a[data-view=gated]").click();
    const card = page.locator(`article.decision[data-ledger-id="${w.gatedLedgerId}"]`);
    await card.waitFor();
    expect(await card.locator(".residual pre").textContent()).toBe(`approver == "${APPROVER}"`);
    expect(await card.locator(".residual h3").textContent()).toBe("Who can approve");
    expect(await card.locator("ol.gates li").evaluateAll((lis) => lis.map((li) => [li.getAttribute("data-gate"), li.className]))).toEqual(
      ["grant", "status", "window", "audience", "certification", "scope", "conditions", "policy", "budget"].map((gate) => [
        gate,
        gate === "policy" ? "fail" : gate === "budget" ? "not_reached" : "pass",
      ]),
    );
    const shape = await card.locator("dl.fields").first().textContent();
    for (const text of ["payments.send", "2500 minor units (25.00 EUR)", w.gatedGrantId, w.agentId]) expect(shape).toContain(text);
    // The approver sees what they approve: the agent by name and the action's own arguments, as text.
    expect(await card.locator(".agent-name").textContent()).toBe("refund-bot");
    const args = await card.locator(".action-args dl.fields").textContent();
    expect(args).toContain("order7");
    expect(args).toContain(`memo${HOSTILE_IMG}`);
    // The ledger id comes from the list: the form asks only for the ceiling, prefilled with the amount.
    const form = card.locator("form.approve-decision");
    expect(await form.locator("input[name=ledger_id]").count()).toBe(0);
    expect(await form.locator("input[name=amount_minor_max]").inputValue()).toBe("2500");
    await shot(page, "gated-decisions");
    await form.locator("input[name=note]").fill("refund for order 7");
    await form.locator("button[type=submit]").click();
    const approvalId = (await card.locator(".approval-id").textContent())!;
    expect(approvalId).toMatch(/^apv_/);
    // Approved: the button cannot approve again, says so, and the queue's count drops.
    const button = form.locator("button[type=submit]");
    expect(await button.isDisabled()).toBe(true);
    expect(await button.textContent()).toBe("Approved");
    expect(await form.locator("input[name=note]").isDisabled()).toBe(true);
    await expect.poll(() => page.locator("nav a[data-view=gated] .count").textContent()).toBe("0");
    await shot(page, "gated-decision-approved");
    const retry = await w.t.call("POST", "/authorize", {
      key: w.agentKey,
      body: {
        grant_id: w.gatedGrantId,
        tool: "payments.send",
        amount_minor: 2500,
        currency: "EUR",
        attestation: ATTESTATION,
        approval_id: approvalId,
        args: { order: "7", memo: HOSTILE_IMG },
      },
    });
    expect(retry.body).toMatchObject({ outcome: "allow", approver: APPROVER });
    w.retryLedgerId = retry.body.ledger_id;
    // Approved, it leaves the list.
    await page.reload();
    await page.locator("#view-gated[aria-busy=false]").waitFor();
    expect(await page.locator(`article.decision[data-ledger-id="${w.gatedLedgerId}"]`).count()).toBe(0);
    expect(await page.locator("#view-gated").textContent()).toContain("No gated decision is waiting for a human.");
  });

  it("offers no approve button to an approver the residual does not admit, and says why", async () => {
    const grant = await w.t.call("POST", "/grants", {
      key: ADMIN_KEY,
      body: {
        agent_id: w.agentId,
        principal_type: "human",
        principal_id: "dana@example.com",
        scope: { tool: ["payments.send"] },
        budget_amount_minor: 5_000,
        budget_currency: "EUR",
        policy: 'amount_minor <= 1000 || approver == "bob@example.com"',
      },
    });
    const decision = await w.t.call("POST", "/authorize", {
      key: w.agentKey,
      body: {
        grant_id: grant.body.id,
        tool: "payments.send",
        amount_minor: 1800,
        currency: "EUR",
        attestation: ATTESTATION,
        args: { order: "8" },
      },
    });
    expect(decision.body.outcome).toBe("gated");
    await page.reload();
    const card = page.locator(`article.decision[data-ledger-id="${decision.body.ledger_id}"]`);
    await card.waitFor();
    expect(await card.locator("form.approve-decision").count()).toBe(0);
    const why = await card.locator(".not-admitted").textContent();
    expect(why).toContain(APPROVER);
    expect(why).toContain('only an approver satisfying approver == "bob@example.com" can');
    await shot(page, "gated-decision-not-admitted");
    // The server says the same to anyone who tries, and the decision stays for bob.
    const refused = await w.t.call("POST", `/decisions/${decision.body.ledger_id}/approve`, { key: w.approverKey, body: {} });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe("approver_not_admitted");
    await page.reload();
    await card.waitFor();
    expect(await card.locator(".abandoned").count()).toBe(0);
    // The agent stops waiting (as the MCP gateway reports it): the approver is told on the card.
    const abandoned = await w.t.call("POST", `/decisions/${decision.body.ledger_id}/abandoned`, {
      key: w.agentKey,
      body: { reason: "timeout", waited_ms: 55_000 },
    });
    expect(abandoned.status).toBe(200);
    await page.reload();
    await card.waitFor();
    const told = await card.locator(".abandoned").textContent();
    expect(told).toContain("The agent stopped waiting at");
    expect(told).toContain("no approval came within 55 s");
    expect(told).toContain("its call was refused");
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
    // At 1280 px (and at the suite's 1000 px) every certificate table stays inside its card.
    for (const width of [1280, 1000]) {
      await page.setViewportSize({ width, height: 720 });
      const overflow = await page.locator("article.agent").evaluateAll((cards) =>
        cards.map((c) => {
          const table = c.querySelector("table.certificates");
          return table === null ? 0 : table.getBoundingClientRect().right - c.getBoundingClientRect().right;
        }),
      );
      expect(Math.max(...overflow), `overflow at ${width} px`).toBeLessThanOrEqual(0);
      const wide = await page.evaluate(() =>
        Array.from(document.querySelectorAll("main *"))
          .filter((e) => e.getBoundingClientRect().right > window.innerWidth)
          .map((e) => `${e.tagName}.${e.className}`)
          .slice(0, 5),
      );
      expect(wide, `page scrolls sideways at ${width} px`).toEqual([]);
    }
  });

  it("shows a tree's decisions in chain order, each with its nine gates and outcome, and the chain status", async () => {
    const settled = await w.t.call("POST", `/decisions/${w.retryLedgerId}/settle`, { key: w.agentKey, body: { amount_minor: 2000 } });
    expect(settled.status).toBe(200);
    w.settlementLedgerId = settled.body.ledger_id;
    await page.goto(`${w.origin}/console/#ledger/${w.gatedGrantId}`);
    await expect.poll(() => page.locator("#chain-status").textContent()).toBe("Chains verified");
    await expect.poll(() => page.locator("#tree-chain-status").textContent()).toBe("This tree's chain verified");
    const records = page.locator("article.ledger-record");
    expect(await records.evaluateAll((cards) => cards.map((c) => c.getAttribute("data-ledger-id")))).toEqual([
      w.gatedLedgerId,
      w.retryLedgerId,
      w.settlementLedgerId,
    ]);
    expect(await records.locator("h3 .badge").allTextContents()).toEqual(["gated", "allow", "settlement"]);
    // A settlement shows what was settled against which decision, in the hold's currency; no "amount none".
    const settlement = await records.nth(2).locator("dl.fields").textContent();
    for (const text of [
      `decision${w.retryLedgerId}`,
      "settled2000 minor units (20.00 EUR)",
      "held2500 minor units (25.00 EUR)",
      "released500 minor units (5.00 EUR)",
      "settled byrefund-bot-key",
    ])
      expect(settlement).toContain(text);
    expect(settlement).not.toMatch(/amount|none/);
    expect(await records.nth(2).locator("ol.gates").count()).toBe(0);
    await shotOf(records.nth(2), "ledger-settlement");
    for (let i = 0; i < 2; i += 1) expect(await records.nth(i).locator("ol.gates li").count()).toBe(9);
    expect(await records.nth(0).locator("ol.gates li[data-gate=policy]").getAttribute("class")).toBe("fail");
    expect(await records.nth(1).locator("ol.gates li.pass").count()).toBe(9);
    expect(await records.nth(0).locator(".residual pre").textContent()).toBe(`approver == "${APPROVER}"`);
    expect(await records.nth(1).locator("dl.fields").textContent()).toContain(APPROVER);
    await shot(page, "ledger");
  });

  it("says which record of the tree was changed after sealing", async () => {
    const [sealed] = (await w.t.db.raw("SELECT record FROM ledger WHERE id = ?", [w.retryLedgerId])) as { record: string }[];
    await w.t.db.raw("DROP TRIGGER ledger_sealed");
    try {
      await w.t.db.raw("UPDATE ledger SET record = ? WHERE id = ?", [
        sealed!.record.replace('"amount_minor":2500', '"amount_minor":25'),
        w.retryLedgerId,
      ]);
      await page.reload();
      await expect.poll(() => page.locator("#tree-chain-status").textContent()).toBe("This tree's chain is broken");
      expect(await page.locator("#chain-status").textContent()).toBe("This tree's chain is broken");
      const line = await page.locator("#tree-chain-status").locator("xpath=..").textContent();
      expect(line).toContain(`at record 2 (${w.retryLedgerId}) of tree ${w.gatedGrantId}`);
      expect(line).toContain("changed after sealing");
      await shot(page, "ledger-broken");
    } finally {
      await w.t.db.raw("UPDATE ledger SET record = ? WHERE id = ?", [sealed!.record, w.retryLedgerId]);
      await w.t.db.raw("CREATE TRIGGER ledger_sealed BEFORE UPDATE ON ledger BEGIN SELECT RAISE(ABORT, 'ledger records are sealed'); END");
    }
    await page.reload();
    await expect.poll(() => page.locator("#tree-chain-status").textContent()).toBe("This tree's chain verified");
  });

  it("lists grants with filters and opens a grant's ledger from its row, without typing an id", async () => {
    await page.goto(`${w.origin}/console/#grants`);
    await page.locator("#view-grants[aria-busy=false]").waitFor();
    const rows = page.locator("table.grants tbody tr");
    const listed = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-grant-id")));
    expect(listed).toEqual(expect.arrayContaining([w.pendingGrantId, w.gatedGrantId]));
    // Each row names its agent, with the id below, and shows usage in the budget's own format.
    const row = page.locator(`table.grants tr[data-grant-id="${w.gatedGrantId}"]`);
    expect(await row.locator(".agent-name").textContent()).toBe("refund-bot");
    expect(await row.locator("td[data-label=agent] .id").textContent()).toBe(w.agentId);
    expect(await row.locator(".budget").textContent()).toBe("5000 minor units (50.00 EUR)");
    expect(await row.locator("ul.usage li").allTextContents()).toEqual([
      "1 use",
      "0 minor units (0.00 EUR) held",
      "2000 minor units (20.00 EUR) settled",
    ]);
    expect(await page.locator(`table.grants tr[data-grant-id="${w.pendingGrantId}"] ul.usage li`).first().textContent()).toBe(
      "0 of 20 uses",
    );
    await shot(page, "grants");
    // The table stays inside the page, and no column hides behind a sideways scroll or is cut.
    expect(await layoutProblems(page)).toEqual([]);
    // Filtering by an agent with no grant lists none; by status, only grants that read so.
    await page.locator("form.grant-filters input[name=agent_id]").fill(w.otherAgentId);
    await page.locator("form.grant-filters button[type=submit]").click();
    await page.locator("#view-grants[aria-busy=false]").waitFor();
    expect(await page.locator("#view-grants").textContent()).toContain("No grant matches.");
    await page.locator("form.grant-filters input[name=agent_id]").fill(w.agentId);
    await page.locator("form.grant-filters select[name=status]").selectOption("active");
    await page.locator("form.grant-filters button[type=submit]").click();
    await page.locator(`table.grants tr[data-grant-id="${w.gatedGrantId}"]`).waitFor();
    expect(await page.locator("table.grants .badge.active").count()).toBe(await page.locator("table.grants tbody tr").count());
    await page.locator(`table.grants tr[data-grant-id="${w.gatedGrantId}"] a.ledger-link`).click();
    await page.locator("#view-ledger[aria-busy=false]").waitFor();
    expect(await page.locator("article.ledger-record").evaluateAll((cards) => cards.map((c) => c.getAttribute("data-ledger-id")))).toEqual(
      expect.arrayContaining([w.gatedLedgerId]),
    );
  });

  it("renders hostile text from the address bar as text", async () => {
    await page.goto(`${w.origin}/console/#ledger/${encodeURIComponent(HOSTILE_IMG)}`);
    await page.locator("#view-ledger .error").waitFor();
    expect(await page.locator("main img, main script").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  it("at 420 px (and at 1000 and 1280) cuts no column, keeps every view on the screen and never breaks an id inside", async () => {
    for (const width of [1280, 1000, 420]) {
      await page.setViewportSize({ width, height: 900 });
      for (const view of ["grants", "gated", `ledger/${w.gatedGrantId}`, "agents", "pending"]) {
        await page.goto(`${w.origin}/console/#${view}`);
        await page.locator(`#view-${view.split("/")[0]}[aria-busy=false]`).waitFor();
        expect(await layoutProblems(page), `${view} at ${width} px`).toEqual([]);
        expect(await page.locator("main .id").count(), view).toBeGreaterThan(0);
        if (view === "grants" && width === 420) await shot(page, "narrow-grants");
      }
    }
    await page.setViewportSize({ width: 1000, height: 720 });
  });

  it("raised no script error and no CSP violation", () => {
    expect(pageErrors).toEqual([]);
  });
}
