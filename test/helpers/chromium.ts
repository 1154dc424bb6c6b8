import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/**
 * Chromium from Debian, driven by playwright-core, for the tests in test/browser. .ci/run installs
 * it; on a machine without it those tests say so and are skipped, but under CI they must run.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM);
if (!chromiumAvailable && process.env.CI) throw new Error(`Chromium is required under CI (${CHROMIUM}); .ci/run installs it from Debian`);

type ContextOptions = NonNullable<Parameters<typeof chromium.launchPersistentContext>[1]>;

/** A headless browser with a fresh profile, which `close()` removes; `extraArgs` follow the usual flags. */
export async function launchChromium(
  options: ContextOptions = {},
  extraArgs: readonly string[] = [],
): Promise<{ browser: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'cairn-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
    ...options,
  });
  return {
    browser,
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
