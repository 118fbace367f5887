// What an agent sends is shown to the approver with its hidden characters as escapes: a gated
// action's arguments (values and keys), an agent's description, and a pending grant's card, which
// names its agent. The console's hidden set is the policy language's, U+2800 included.

import { pathToFileURL } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HIDDEN_PATTERN_SOURCE, isHidden } from "@agent-authority/grammar";
import { ADMIN_KEY, CERTIFICATION, startTestServer, type TestServer } from "../server/http-harness.js";
import { browserSuite, launchBrowser, signIn, sqliteTarget, watchErrors, type ConsoleBrowser } from "./browser.js";

/** Every character planted: a right-to-left override, a zero-width space, a Braille blank, a Hangul filler, a tag. */
const PLANTED = /[\u202e\u200b\u2800\u3164\u{E0041}]/u;
const IBAN = "DE89\u202e3704\u2800";
const KEY = "ib\u200ban";
const ATTESTATION = {
  manifest_hash: CERTIFICATION.manifest_hash,
  content_hash: CERTIFICATION.content_hash,
  provenance_version: CERTIFICATION.provenance_version,
};

describe("the console's hidden set", () => {
  it("is the policy language's, and holds U+2800 BRAILLE PATTERN BLANK", async () => {
    const url = pathToFileURL(new URL("../../server/console/hidden.js", import.meta.url).pathname).href;
    const consoleModule = (await import(url)) as { HIDDEN: RegExp; showHidden(text: string): string };
    expect(consoleModule.HIDDEN.source).toBe(HIDDEN_PATTERN_SOURCE);
    expect(isHidden(0x2800)).toBe(true);
    expect(consoleModule.showHidden("a\u2800b\u{E0041}")).toBe("a\\u2800b\\udb40\\udc41");
    expect(consoleModule.showHidden("plain text, tab\tand space")).toBe("plain text, tab\tand space");
  });
});

browserSuite("console in a browser: hidden text an agent sent", () => {
  let t: TestServer;
  let origin: string;
  let browser: ConsoleBrowser;
  let page: Page;
  let ledgerId: string;
  let pendingGrantId: string;
  let agentId: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    t = await startTestServer(sqliteTarget);
    origin = t.baseUrl.replace(/\/v1$/, "");
    const post = async (path: string, body: unknown, key = ADMIN_KEY) => {
      const reply = await t.call("POST", path, { key, body });
      if (reply.status >= 300) throw new Error(`${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
      return reply.body;
    };
    const agent = await post("/agents", { name: "payout-bot", description: "pays\u3164out \u{E0041}" });
    agentId = agent.id;
    await post(`/agents/${agentId}/certification`, CERTIFICATION);
    const agentKey = await t.key("payout-bot-key", ["agent"], { kind: "service", agent_id: agentId });
    const grant = await post("/grants", {
      agent_id: agentId,
      principal_type: "human",
      principal_id: "dana@example.com",
      scope: { tool: ["payments.send"] },
      budget_amount_minor: 5_000,
      budget_currency: "EUR",
      policy: `amount_minor <= 1000 || approver == "alice@example.com"`,
    });
    pendingGrantId = (
      await post("/grants", {
        agent_id: agentId,
        principal_type: "team",
        principal_id: "payments-ops",
        scope: { tool: ["payments.send"] },
        require_approval: true,
      })
    ).id;
    const decision = await post(
      "/authorize",
      {
        grant_id: grant.id,
        tool: "payments.send",
        amount_minor: 2500,
        currency: "EUR",
        attestation: ATTESTATION,
        args: { [KEY]: IBAN, memo: ["rent\u2800", { "n\u202eote": "x" }] },
      },
      agentKey,
    );
    expect(decision.outcome).toBe("gated");
    ledgerId = decision.ledger_id;
    browser = await launchBrowser();
    page = await browser.context.newPage();
    watchErrors(page, pageErrors);
    await signIn(page, origin, await t.key("alice@example.com", ["approver", "auditor"]));
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("shows a gated action's arguments, keys and values, with every hidden character as its escape", async () => {
    await page.goto(`${origin}/console/#gated`);
    const card = page.locator(`article.decision[data-ledger-id="${ledgerId}"]`);
    await card.waitFor();
    const text = (await card.textContent()) ?? "";
    expect(text).toContain("DE89\\u202e3704\\u2800");
    expect(text).toContain("ib\\u200ban");
    expect(text).toContain("rent\\u2800");
    expect(text).toContain("n\\u202eote");
    expect(text).not.toMatch(PLANTED);
    // The agent is named, as on every view.
    expect(text).toContain("payout-bot");
    expect(await page.locator("main").evaluate((m) => m.textContent ?? "")).not.toMatch(PLANTED);
  });

  it("names the agent on a pending grant's card, and shows an agent's description escaped", async () => {
    await page.goto(`${origin}/console/#pending`);
    const card = page.locator(`article.grant[data-grant-id="${pendingGrantId}"]`);
    await card.waitFor();
    expect(await card.locator("h3 .agent-name").textContent()).toBe("payout-bot");
    expect(await card.locator("h3").first().textContent()).toContain(agentId);
    await page.goto(`${origin}/console/#agents`);
    await page.locator("#view-agents[aria-busy=false]").waitFor();
    const agents = await page.locator("#view-agents").evaluate((m) => m.textContent ?? "");
    expect(agents).toContain("pays\\u3164out \\udb40\\udc41");
    expect(agents).not.toMatch(PLANTED);
    expect(pageErrors).toEqual([]);
  });
});
