/**
 * The console UI's jobs page with a large namespace, in headless Chromium (Debian's, driven by
 * playwright-core): time to interactive (navigation → the first rows shown, the search box usable),
 * and how smoothly the virtualised table scrolls through every job (frame intervals while
 * scrolling one step a frame, the page fetching the API's cursor pages as the end comes near).
 * Part of `npm run bench console` when Chromium is installed.
 */
import { existsSync } from 'node:fs';
import { CHROMIUM_PATH, launchBrowser } from '../src/browser.js';

/** What one visit of the jobs page measured (ms from the navigation's start, per the page's clock). */
export interface JobsPageVisit {
  interactiveMs: number;
}

/** What {@link measureJobsPage} measured. */
export interface JobsPageBenchResult {
  jobs: number;
  visits: JobsPageVisit[];
  /**
   * Scrolling from the first job to the last, 600 px a frame (the page fetches the next 500 jobs
   * as the end comes near): frame intervals in ms, and the whole scroll's duration.
   */
  scroll: { frames: number; p50: number; p99: number; max: number; over50ms: number; totalMs: number };
}

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/**
 * Signs in as `user`, opens the jobs page of `namespace` `visits` times (a fresh page each time)
 * and scrolls the last one from top to bottom. Undefined when Chromium is not installed.
 */
export async function measureJobsPage(url: string, namespace: string, user: string, password: string, visits = 3): Promise<JobsPageBenchResult | undefined> {
  if (!existsSync(CHROMIUM_PATH)) return undefined;
  const browser = await launchBrowser();
  try {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, locale: 'en-US' });
    const login = await context.request.post(`${url}/api/v1/auth/login`, { data: { user, password } });
    if (login.status() !== 200) throw new Error(`login: ${login.status()} ${await login.text()}`);
    const results: JobsPageVisit[] = [];
    let jobs = 0;
    let page = await context.newPage();
    for (let i = 0; i < visits; i++) {
      if (i > 0) {
        await page.close();
        page = await context.newPage();
      }
      await page.goto(`${url}/ns/${encodeURIComponent(namespace)}/jobs`, { waitUntil: 'commit' });
      // Interactive: rows of jobs in the table and the search box enabled.
      const interactiveMs = await (await page.waitForFunction(() => {
        const rows = document.querySelectorAll('.jobs-scroll tbody tr[aria-rowindex]');
        const search = document.querySelector<HTMLInputElement>('input[type="search"]');
        return rows.length > 1 && search && !search.disabled ? performance.now() : false;
      }, undefined, { timeout: 60_000, polling: 'raf' })).jsonValue() as number;
      results.push({ interactiveMs: Math.round(interactiveMs) });
    }
    // No named functions in code sent to the page: the bench runs through tsx, whose keepNames
    // would wrap them in a helper (__name) that the page does not have.
    const scrolled = await page.evaluate(async () => {
      const box = document.querySelector<HTMLElement>('.jobs-scroll')!;
      const COUNT = /([\d,]+) of ([\d,]+) jobs/;
      box.scrollTop = 0;
      const gaps: number[] = [];
      const start = await new Promise<number>((r) => requestAnimationFrame(r));
      let last = start;
      let total = 0;
      // Until every job is loaded and the last one is in view (bounded: 10 minutes of frames).
      while (last - start < 600_000) {
        const m = COUNT.exec(document.body.innerText);
        const shown = m ? Number(m[1]!.replace(/,/g, '')) : 0;
        total = m ? Number(m[2]!.replace(/,/g, '')) : 0;
        if (m && shown === total && box.scrollTop + box.clientHeight >= box.scrollHeight - 1) break;
        box.scrollTop += 600;
        const now = await new Promise<number>((r) => requestAnimationFrame(r));
        gaps.push(now - last);
        last = now;
      }
      return { gaps, totalMs: last - start, jobs: total };
    });
    const intervals = scrolled.gaps;
    jobs = scrolled.jobs;
    const sorted = [...intervals].sort((a, b) => a - b);
    return {
      jobs,
      visits: results,
      scroll: { frames: sorted.length, p50: pct(sorted, 50), p99: pct(sorted, 99), max: sorted.at(-1) ?? NaN, over50ms: sorted.filter((g) => g > 50).length, totalMs: Math.round(scrolled.totalMs) },
    };
  } finally {
    await browser.close();
  }
}
