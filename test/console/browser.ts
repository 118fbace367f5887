// Debian's Chromium driven by playwright-core for the console's end-to-end tests: headless, no
// sandbox (containers), no background traffic, and a fresh profile every run.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type Locator, type Page } from "playwright-core";
import { afterAll, describe, it } from "vitest";
import type { StoreTarget } from "../server/targets.js";

/** Where Debian's `chromium` package puts the browser; `CHROMIUM_PATH` overrides it. */
export const CHROMIUM_PATH = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium";

export const CHROMIUM_ARGS: readonly string[] = Object.freeze([
  "--no-sandbox",
  "--disable-background-networking",
  "--disable-gpu",
  "--disable-component-update",
  "--no-first-run",
  "--disable-dev-shm-usage",
]);

/** Why the browser suite cannot run here, or null when it can. */
export function chromiumMissing(): string | null {
  return existsSync(CHROMIUM_PATH)
    ? null
    : `Chromium not found at ${CHROMIUM_PATH} (install it with \`apt-get install -y chromium\`, or set CHROMIUM_PATH)`;
}

export interface ConsoleBrowser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** A persistent context is the one way playwright takes a user-data-dir of our own: a fresh one each time. */
export async function launchBrowser(): Promise<ConsoleBrowser> {
  const profile = mkdtempSync(join(tmpdir(), "authority-console-profile-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS],
    viewport: { width: 1000, height: 720 },
    deviceScaleFactor: 1,
    timeout: 30_000,
  });
  return {
    context,
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The browser suite, or in its place a loud skip (a failure under CI) when Chromium is missing. */
export function browserSuite(title: string, suite: () => void): void {
  const missing = chromiumMissing();
  if (missing === null) {
    describe(title, suite);
  } else if (process.env["CI"] === "true") {
    describe(title, () => {
      it("runs under CI, where Chromium is required", () => {
        throw new Error(`the browser suite must run under CI: ${missing}`);
      });
    });
  } else {
    console.warn(`\n${"!".repeat(78)}\n!! ${title} SKIPPED: ${missing}\n${"!".repeat(78)}\n`);
    describe(title, () => {
      it.skip(`skipped because ${missing}`, () => undefined);
    });
  }
}

/** A fresh SQLite database in a temporary directory. */
export const sqliteTarget: StoreTarget = {
  name: "sqlite",
  async create() {
    const dir = mkdtempSync(join(tmpdir(), "authority-console-"));
    return { url: join(dir, "authority.db"), dispose: async () => rmSync(dir, { recursive: true, force: true }) };
  },
};

/**
 * Screenshots are taken on every run; they replace the ones in docs/console/ only when asked
 * (`AUTHORITY_UPDATE_SCREENSHOTS=1 npm test`), so that a test run leaves the working tree as it was.
 */
const SHOTS =
  process.env["AUTHORITY_UPDATE_SCREENSHOTS"] === "1"
    ? fileURLToPath(new URL("../../docs/console/", import.meta.url))
    : mkdtempSync(join(tmpdir(), "authority-console-shots-"));
if (process.env["AUTHORITY_UPDATE_SCREENSHOTS"] !== "1") afterAll(() => rmSync(SHOTS, { recursive: true, force: true }));

/** A screenshot of the top of the page, for docs/console.md. */
export async function shot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SHOTS, `${name}.png`), type: "png" });
}

/** A screenshot of one element (a card), for docs/console.md. */
export async function shotOf(locator: Locator, name: string): Promise<void> {
  await locator.screenshot({ path: join(SHOTS, `${name}.png`), type: "png" });
}

export async function signIn(page: Page, origin: string, key: string): Promise<void> {
  await page.goto(`${origin}/console`);
  await page.locator("#signin input[name=key]").fill(key);
  await page.locator("#signin button[type=submit]").click();
  await page.locator("#who").waitFor();
}

/**
 * Collects what must never happen: script errors, CSP violations, dialogs, and any console file
 * that failed to load. A refused API call is logged by Chromium as a failed resource; the tests
 * check those answers themselves.
 */
export function watchErrors(page: Page, errors: string[]): void {
  page.setDefaultTimeout(10_000);
  page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(`console: ${m.text()}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400 && !new URL(r.url()).pathname.startsWith("/v1/")) errors.push(`${r.status()} ${r.url()}`);
  });
  page.on("dialog", (d) => {
    errors.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
}
