// The grant families view in a real browser against a real server: the list, one family's versions,
// and the review of a candidate that raises a parameter's maximum, whose symbolic diff widens and
// whose witness is shown as its input with each version's outcome.

import type { Page } from "playwright-core";
import { stringify } from "yaml";
import { afterAll, beforeAll, expect, it } from "vitest";
import { familyBody } from "../server/families-http.js";
import { ADMIN_KEY, startTestServer, type TestServer } from "../server/http-harness.js";
import { browserSuite, launchBrowser, shotOf, signIn, sqliteTarget, watchErrors, type ConsoleBrowser } from "./browser.js";

browserSuite("console in a browser: grant families", () => {
  let t: TestServer;
  let origin: string;
  let browser: ConsoleBrowser;
  let page: Page;
  let familyId: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    t = await startTestServer(sqliteTarget);
    origin = t.baseUrl.replace(/\/v1$/, "");
    // Version 2 is skipped: a push may raise the version by more than one, and the page links only what exists.
    for (const version of [1, 3]) {
      const reply = await t.call("POST", "/grant-families", {
        key: ADMIN_KEY,
        body: familyBody(version, { name: "console-payments", budget: 10000 * version }),
      });
      if (reply.status >= 300) throw new Error(`push: ${reply.status} ${JSON.stringify(reply.body)}`);
      familyId = reply.body.id;
    }
    browser = await launchBrowser();
    page = await browser.context.newPage();
    watchErrors(page, pageErrors);
    await signIn(page, origin, await t.key("auditor@example.com", ["auditor"]));
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("lists the families and opens one at each of its versions", async () => {
    await page.goto(`${origin}/console/#families`);
    const row = page.locator(`table.families tr[data-family-id="${familyId}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain("console-payments");
    await row.locator("a.family-link").click();
    await page.locator("#view-families[aria-busy=false] p.versions").waitFor();
    expect(await page.locator("p.versions a[aria-current=page]").textContent()).toBe("3");
    expect(await page.locator("p.versions a").allTextContents()).toEqual(["3", "1"]);
    await page.locator('p.versions a[data-version="1"]').click();
    await expect.poll(() => page.locator("#view-families h3 .tag").first().textContent()).toBe("version 1");
  });

  it("reviews a candidate, pasted as the family's YAML, that raises a parameter's maximum: the diff widens, with a witness", async () => {
    await page.goto(`${origin}/console/#families/${familyId}`);
    const form = page.locator("form.review");
    await form.waitFor();
    // The text starts as the latest version with the next version number: a candidate to edit.
    expect(JSON.parse(await form.locator("textarea[name=candidate]").inputValue())).toMatchObject({ id: "console-payments", version: 4 });
    await form
      .locator("textarea[name=candidate]")
      .fill(stringify(familyBody(4, { name: "console-payments", budget: 30000, limitMax: 9000 })));
    await form.locator("button[type=submit]").click();
    const relation = form.locator(".impact-result p.relation .badge");
    await relation.waitFor({ timeout: 60_000 });
    expect(await relation.textContent()).toBe("widens");
    const witness = form.locator(".witnesses.widening article.witness").first();
    await witness.waitFor();
    expect(
      await witness
        .locator("dt", { hasText: /^latest version$/ })
        .locator("xpath=following-sibling::dd[1]")
        .textContent(),
    ).toBe("deny");
    expect(
      await witness
        .locator("dt", { hasText: /^candidate$/ })
        .locator("xpath=following-sibling::dd[1]")
        .textContent(),
    ).toBe("allow");
    // The witness names a limit above the old maximum, beside the input it decides.
    const limit = witness.locator("dt", { hasText: /^limit_minor$/ }).locator("xpath=following-sibling::dd[1]");
    expect(Number(await limit.textContent())).toBeGreaterThan(5000);
    expect(Number(await limit.textContent())).toBeLessThanOrEqual(9000);
    const amount = witness.locator(".witness-input dt", { hasText: /^amount_minor$/ }).locator("xpath=following-sibling::dd[1]");
    expect(Number(await amount.textContent())).toBeLessThanOrEqual(Number(await limit.textContent()));
    expect(await form.locator(".impact-result .changed-count").textContent()).toBe("0");
    await shotOf(form.locator(".impact-result"), "families");
  }, 90_000);

  it("shows a refused candidate's problem and changes nothing", async () => {
    const form = page.locator("form.review");
    await form.locator("textarea[name=candidate]").fill(JSON.stringify({ ...familyBody(4, { name: "another-name" }) }));
    await form.locator("button[type=submit]").click();
    await expect.poll(() => form.locator(".impact-result .error").textContent()).toContain("422");
    // A text that does not compile is refused with each error at its line and column in the text.
    await form.locator("textarea[name=candidate]").fill("id: console-payments\nversion: 3\ngrant: [unclosed\n");
    await form.locator("button[type=submit]").click();
    await expect.poll(() => form.locator(".impact-result .error").textContent()).toContain("422 invalid_family");
    expect(await form.locator(".impact-result ul.diagnostics li").first().textContent()).toMatch(/^line \d+, column \d+ /);
    const latest = await t.call("GET", `/grant-families/${familyId}`, { key: ADMIN_KEY });
    expect(latest.body.version).toBe(3);
  });

  it("raised no script error and no CSP violation", () => {
    expect(pageErrors).toEqual([]);
  });
});
