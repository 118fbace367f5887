// Debian's Chromium driven by playwright-core for the console's end-to-end tests: headless, no
// sandbox (containers), no background traffic, and a fresh profile every run.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

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
  return existsSync(CHROMIUM_PATH) ? null : `Chromium not found at ${CHROMIUM_PATH} (install it with \`apt-get install -y chromium\`, or set CHROMIUM_PATH)`;
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
