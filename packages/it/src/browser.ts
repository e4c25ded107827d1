/**
 * A real browser for the console's end-to-end tests: Debian's Chromium (`/usr/bin/chromium`,
 * installed by `npm test` when missing), driven headless by playwright-core — no browser download.
 * Screenshots go under `test-output/screenshots/` at the repository root (not committed), one file
 * per page and width, so a person can look at every page after a run.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Where Debian's chromium package puts the browser (`ORRERY_CHROMIUM` overrides it). */
export const CHROMIUM_PATH = process.env.ORRERY_CHROMIUM ?? '/usr/bin/chromium';

/** Where the E2E run's screenshots go. */
export const SCREENSHOT_DIR = fileURLToPath(new URL('../../../test-output/screenshots/', import.meta.url));

/** The widths every page is photographed at, in CSS pixels. */
export const SCREENSHOT_WIDTHS = [1400, 1000] as const;

/** Starts headless Chromium (without its sandbox when running as root, which it refuses otherwise). */
export async function launchBrowser(): Promise<Browser> {
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...(asRoot ? ['--no-sandbox'] : []), '--disable-dev-shm-usage', '--font-render-hinting=none'],
  });
}

/**
 * Screenshots the page as it is now at each of {@link SCREENSHOT_WIDTHS} (`<name>-<width>.png`,
 * the whole page), then restores the viewport. Returns the files written.
 */
export async function screenshotPage(page: Page, name: string, widths: readonly number[] = SCREENSHOT_WIDTHS): Promise<string[]> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const before = page.viewportSize();
  const files: string[] = [];
  // From the top: a full-page shot of a scrolled page draws sticky bars in the middle of it.
  await page.evaluate(() => window.scrollTo(0, 0));
  for (const width of widths) {
    await page.setViewportSize({ width, height: before?.height ?? 900 });
    // Let layout settle at the new width: two animation frames.
    await page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))));
    const file = `${SCREENSHOT_DIR}${name}-${width}.png`;
    await page.screenshot({ path: file, fullPage: true });
    files.push(file);
  }
  if (before) await page.setViewportSize(before);
  return files;
}
