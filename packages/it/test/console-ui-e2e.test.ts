// The console UI in a real browser (headless Chromium from Debian, driven by playwright-core) against
// real processes on a real ZooKeeper: orrery-console serving its built UI, orrery-sharding, and two
// orrery-executor processes. A user signs in, creates a 3-shard shell job in the editor, enables it,
// watches its shards run and the runs timeline fill, opens a running log and sees it end with its
// outcome, edits the cron and rolls it back from the history, drains an executor after reading the
// preview of its moves, and switches to Chinese; a viewer sees no enable button and gets a 403 when
// calling the API anyway. Every page is screenshotted at 1400 and 1000 px (test-output/screenshots/).
import { existsSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually } from '@orrery/core/testing';
import { startProcess, stopAllProcesses } from '../src/index.js';
import { CHROMIUM_PATH, launchBrowser, screenshotPage } from '../src/browser.js';
import { NS, TOKEN, startCluster, type Cluster } from './executor-support.js';

const zkConnect = inject('zkConnect');
const ADMIN_PASSWORD = 'console-e2e-admin-pw';
const VIEWER_PASSWORD = 'console-e2e-viewer-pw';
const UI_BUILT = existsSync(new URL('../../console-ui/dist/index.html', import.meta.url));
const JOB = 'e2e-ticker';
const CRON = '*/15 * * * * *';
// Twelve lines, half a second apart: a run lasts about 6 s, long enough to open it while it runs.
const COMMAND = 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "item $ORRERY_SHARD_ITEM line $i"; sleep 0.5; done';

let c: Cluster;
let consoleUrl: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let adminCookie: string;

/** The console API with the admin's session, from the test (not the browser). */
async function adminApi(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${consoleUrl}/api/v1${path}`, { method, headers: { cookie: adminCookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
}

/** Signs in through the login page and waits for the namespaces page. */
async function signIn(p: Page, user: string, password: string): Promise<void> {
  await p.goto(`${consoleUrl}/`);
  await p.getByLabel(/user name|用户名/i).fill(user);
  await p.getByLabel(/^password$|^密码$/i).fill(password);
  await p.getByRole('button', { name: /sign in|登录/i }).click();
  await p.getByRole('heading', { name: /namespaces|命名空间/i }).first().waitFor();
}

/** An API call from the page itself (its session cookie): what a user's script in the browser would get. */
async function apiFromPage(p: Page, method: string, path: string, body?: unknown): Promise<number> {
  return p.evaluate(async ({ method, path, body }) => {
    const response = await fetch(`/api/v1${path}`, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return response.status;
  }, { method, path, body });
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`Chromium is not at ${CHROMIUM_PATH}: npm test installs Debian's chromium package; run it, or set ORRERY_CHROMIUM`);
  if (!UI_BUILT) throw new Error('the console UI is not built: npm test builds it (packages/console-ui/scripts/build.sh)');
  c = await startCluster('console-e2e', zkConnect);
  await c.startExecutor('e1');
  await c.startExecutor('e2');
  await c.startAllocator();
  await c.waitMembers(2);
  const consoleProcess = startProcess('orrery-console', ['--zk', zkConnect, '--root', c.root, '--port', '0'], { ORRERY_ADMIN_PASSWORD: ADMIN_PASSWORD, ORRERY_CLUSTER_TOKEN: TOKEN });
  const line = await consoleProcess.waitForLine(/"msg":"console started"/, 60_000);
  consoleUrl = (JSON.parse(line) as { url: string }).url;
  const login = await fetch(`${consoleUrl}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'admin', password: ADMIN_PASSWORD }) });
  expect(login.status).toBe(200);
  adminCookie = login.headers.get('set-cookie')!.split(';')[0]!;
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1400, height: 900 }, locale: 'en-US', timezoneId: 'Europe/Berlin' });
  page = await context.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await c?.close();
  await stopAllProcesses();
});

describe('the console UI in Chromium', () => {
  it('signs in and shows the namespaces with their counts', async () => {
    await page.goto(`${consoleUrl}/`);
    await page.getByRole('button', { name: /sign in/i }).waitFor();
    await screenshotPage(page, 'login');
    await signIn(page, 'admin', ADMIN_PASSWORD);
    const row = page.getByRole('row', { name: new RegExp(NS) });
    await row.waitFor();
    await screenshotPage(page, 'namespaces');
  });

  it('creates a 3-shard shell job in the editor, enables it, and watches its shards run and the timeline fill', async () => {
    await page.getByRole('link', { name: NS, exact: true }).first().click();
    await page.getByRole('heading', { name: /dashboard/i }).waitFor();
    await page.getByRole('navigation', { name: /main navigation/i }).getByRole('link', { name: 'Jobs', exact: true }).click();
    await page.getByRole('link', { name: 'New job' }).click();
    const name = page.getByLabel('Name', { exact: true });
    await name.waitFor();
    await name.fill(JOB);
    await page.getByLabel('Command', { exact: true }).fill(COMMAND);
    await page.getByLabel('Cron expression', { exact: true }).fill('not a cron');
    // The server's own checker, in the page: the field says what is wrong before anything is sent.
    await page.getByText(/cron/i).filter({ hasText: /invalid|not a valid|expected/i }).first().waitFor();
    await page.getByLabel('Cron expression', { exact: true }).fill(CRON);
    await page.getByLabel('Shard count', { exact: true }).fill('3');
    // The preview of the next five fire times, in the job's zone.
    await eventually(async () => expect(await page.locator('.cron-preview ol.fires li').count()).toBe(5), { timeoutMs: 10_000, message: 'five fire times previewed' });
    await screenshotPage(page, 'job-editor');
    await page.getByRole('button', { name: 'Create job' }).click();
    await page.waitForURL(new RegExp(`/ns/${NS}/jobs/${JOB}(\\?|$)`));
    expect((await adminApi('GET', `/namespaces/${NS}/jobs/${JOB}`)).json).toMatchObject({ version: 0, config: { shardingTotalCount: 3, cron: CRON, enabled: false } });

    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await page.getByRole('button', { name: 'Disable', exact: true }).waitFor();
    // The shards run: each of the three items ends up succeeded (live, without a reload).
    await eventually(async () => expect(await page.getByRole('cell', { name: 'Succeeded', exact: true }).count()).toBeGreaterThanOrEqual(3), { timeoutMs: 60_000, intervalMs: 500, message: 'three items succeeded in the shards table' });
    await screenshotPage(page, 'job-detail-shards');
    await page.getByRole('tab', { name: 'Runs' }).click();
    const cells = page.getByRole('button', { name: /^Shard \d, .*: (Succeeded|Running)/ });
    await eventually(async () => expect(await cells.count()).toBeGreaterThanOrEqual(3), { timeoutMs: 60_000, intervalMs: 500, message: 'three runs in the timeline' });
    for (const item of [0, 1, 2]) expect(await page.getByRole('button', { name: new RegExp(`^Shard ${item}, `) }).count()).toBeGreaterThanOrEqual(1);
    await screenshotPage(page, 'job-detail-runs');
  }, 150_000);

  it('opens a running log and sees it end with the outcome', async () => {
    // Run it now (the next cron fire may be up to 15 s away), then open the run while it runs.
    await page.getByRole('button', { name: 'Run now', exact: true }).click();
    const running = page.getByRole('button', { name: /^Shard \d, .*: Running/ }).first();
    await running.waitFor({ timeout: 30_000 });
    await running.click();
    await page.getByText('Following the log live…').waitFor({ timeout: 10_000 });
    await page.getByText(/line 1$/m).first().waitFor();
    await screenshotPage(page, 'job-detail-log-live');
    await page.getByText('Run ended: Succeeded.').waitFor({ timeout: 30_000 });
    await expect(page.getByText(/line 12/).first().isVisible()).resolves.toBe(true);
    await screenshotPage(page, 'job-detail-log-ended');
    await page.getByRole('button', { name: 'Close the run' }).click();
  }, 90_000);

  it('edits the cron, then rolls it back from the config history', async () => {
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    const cron = page.getByLabel('Cron expression', { exact: true });
    await cron.waitFor();
    await cron.fill('*/20 * * * * *');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(new RegExp(`/ns/${NS}/jobs/${JOB}(\\?|$)`));
    await eventually(async () => expect((await adminApi('GET', `/namespaces/${NS}/jobs/${JOB}`)).json).toMatchObject({ version: 2, config: { cron: '*/20 * * * * *', enabled: true } }));
    await page.getByRole('tab', { name: 'Config history' }).click();
    await page.getByRole('radio', { name: 'Compare from version 1' }).check();
    await page.getByRole('radio', { name: 'Compare to version 2' }).check();
    await page.getByRole('cell', { name: '*/20 * * * * *' }).first().waitFor();
    await screenshotPage(page, 'job-detail-history');
    await page.getByRole('button', { name: 'Roll back to version 1' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Roll back', exact: true }).click();
    await eventually(async () => expect((await adminApi('GET', `/namespaces/${NS}/jobs/${JOB}`)).json).toMatchObject({ version: 3, config: { cron: CRON, enabled: true } }));
    await eventually(async () => {
      const audit = await adminApi('GET', `/audit?namespace=${NS}&job=${JOB}`);
      expect(audit.json.entries.map((e: { action: string }) => e.action).slice(0, 5)).toEqual(['job.rollback', 'job.update', 'job.run', 'job.enable', 'job.create']);
    }, { message: 'the audit log, newest first' });
    await page.getByRole('tab', { name: 'Config', exact: true }).click();
    await page.getByText(CRON).first().waitFor();
    await screenshotPage(page, 'job-detail-config');
  }, 90_000);

  it('drains an executor after reading the preview of its moves, and the assignment changes', async () => {
    const before = (await adminApi('GET', `/namespaces/${NS}/assignment`)).json;
    await page.getByRole('navigation', { name: /main navigation/i }).getByRole('link', { name: 'Assignment', exact: true }).click();
    await page.getByRole('heading', { name: 'Assignment' }).first().waitFor();
    await page.getByRole('row', { name: new RegExp(JOB) }).first().waitFor();
    await screenshotPage(page, 'assignment');
    await page.getByRole('navigation', { name: /main navigation/i }).getByRole('link', { name: 'Executors', exact: true }).click();
    await page.getByRole('row', { name: /e1/ }).first().waitFor();
    await screenshotPage(page, 'executors');
    await page.getByRole('group', { name: /e1/ }).getByRole('button', { name: 'Drain…' }).click();
    const dialog = page.getByRole('dialog');
    // The preview: the e2e job's items held by e1 move to e2, before anything is written.
    await dialog.getByText(/Shards that move \(\d+\)/).waitFor({ timeout: 20_000 });
    await dialog.getByRole('rowheader', { name: JOB }).first().waitFor();
    expect((await adminApi('GET', `/namespaces/${NS}/executors`)).json.executors.find((e: { name: string }) => e.name === 'e1')).toMatchObject({ state: 'online' });
    await screenshotPage(page, 'executors-drain-preview');
    await dialog.getByRole('button', { name: 'Confirm drain' }).click();
    await eventually(async () => {
      const now = (await adminApi('GET', `/namespaces/${NS}/assignment`)).json;
      const row = now.jobs.find((j: { job: string }) => j.job === JOB);
      expect(row.items.e1 ?? []).toEqual([]);
      expect(row.items.e2).toEqual([0, 1, 2]);
    }, { timeoutMs: 30_000, message: 'e1 holds none of the job\'s shards after the drain' });
    // Before the drain e1 held some of the items.
    expect(before.jobs.find((j: { job: string }) => j.job === JOB)?.items.e1 ?? []).not.toEqual([]);
    await page.getByRole('navigation', { name: /main navigation/i }).getByRole('link', { name: 'Assignment', exact: true }).click();
    await page.getByRole('row', { name: new RegExp(JOB) }).first().waitFor();
    await screenshotPage(page, 'assignment-after-drain');
  }, 90_000);

  it('shows the dashboard, jobs, audit, users and tokens pages', async () => {
    const nav = page.getByRole('navigation', { name: /main navigation/i });
    await nav.getByRole('link', { name: 'Dashboard', exact: true }).click();
    await page.getByRole('heading', { name: /dashboard/i }).waitFor();
    await screenshotPage(page, 'dashboard');
    await nav.getByRole('link', { name: 'Jobs', exact: true }).click();
    await page.getByRole('link', { name: JOB, exact: true }).waitFor();
    await screenshotPage(page, 'jobs');
    await nav.getByRole('link', { name: 'Audit log', exact: true }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    await page.getByText('job.rollback').first().waitFor();
    await screenshotPage(page, 'audit');
    await nav.getByRole('link', { name: 'Users', exact: true }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await screenshotPage(page, 'users');
    await page.goto(`${consoleUrl}/tokens`);
    await page.getByRole('heading', { name: 'API tokens' }).waitFor();
    await screenshotPage(page, 'tokens');
  }, 60_000);

  it('switches to Chinese from the user menu, and remembers it', async () => {
    await page.goto(`${consoleUrl}/ns/${NS}/jobs/${JOB}`);
    await page.getByRole('heading', { name: JOB }).waitFor();
    await page.getByLabel('User menu for admin').click();
    await page.getByLabel('Language').selectOption('zh-CN');
    await page.getByRole('tab', { name: '分片' }).waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('zh-CN');
    await screenshotPage(page, 'zh-user-menu');
    await page.getByLabel('admin 的用户菜单').click(); // closes the menu
    await screenshotPage(page, 'zh-job-detail');
    await page.reload();
    await page.getByRole('tab', { name: '分片' }).waitFor();
    const nav = page.getByRole('navigation', { name: '主导航' });
    // Each page in Chinese, once its own content is in (the heading names the page).
    for (const [link, heading, name] of [['概览', /概览/, 'zh-dashboard'], ['作业', /作业/, 'zh-jobs'], ['执行器', /执行器/, 'zh-executors'], ['分片分配', /分片分配/, 'zh-assignment']] as const) {
      await nav.getByRole('link', { name: link, exact: true }).click();
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await eventually(async () => expect(await page.locator('.state-loading').count()).toBe(0), { message: 'the page loaded' });
      await screenshotPage(page, name);
    }
    // Back to English for whoever uses this browser next.
        await page.evaluate(() => localStorage.removeItem('orrery.locale'));
  }, 60_000);

  it('a viewer sees no enable, run or drain button, and gets 403 from the API anyway', async () => {
    expect((await adminApi('POST', '/users', { name: 'vera', password: VIEWER_PASSWORD, roles: { [NS]: 'viewer' } })).status).toBe(201);
    const viewerContext = await browser.newContext({ viewport: { width: 1400, height: 900 }, locale: 'en-US' });
    const viewer = await viewerContext.newPage();
    await signIn(viewer, 'vera', VIEWER_PASSWORD);
    await viewer.goto(`${consoleUrl}/ns/${NS}/jobs/${JOB}`);
    await viewer.getByRole('heading', { name: JOB }).waitFor();
    await viewer.getByRole('tab', { name: 'Shards' }).waitFor();
    for (const name of ['Enable', 'Disable', 'Run now', 'Stop', 'Edit']) expect(await viewer.getByRole('button', { name, exact: true }).count(), name).toBe(0);
    expect(await viewer.getByRole('link', { name: 'Edit', exact: true }).count()).toBe(0);
    await screenshotPage(viewer, 'viewer-job-detail');
    await viewer.goto(`${consoleUrl}/ns/${NS}/jobs`);
    await viewer.getByRole('link', { name: JOB, exact: true }).waitFor();
    for (const name of ['Enable', 'Disable', 'Run now', 'New job', 'Import…']) expect(await viewer.getByRole('button', { name, exact: true }).count() + await viewer.getByRole('link', { name, exact: true }).count(), name).toBe(0);
    await viewer.goto(`${consoleUrl}/ns/${NS}/executors`);
    await viewer.getByRole('row', { name: /e2/ }).first().waitFor();
    expect(await viewer.getByRole('button', { name: /Drain|Undrain|Remove/ }).count()).toBe(0);
    // The API refuses what the page does not offer.
    expect(await apiFromPage(viewer, 'POST', `/namespaces/${NS}/jobs/${JOB}/disable`, {})).toBe(403);
    expect(await apiFromPage(viewer, 'POST', `/namespaces/${NS}/executors/e2/drain`, {})).toBe(403);
    expect(await apiFromPage(viewer, 'GET', `/namespaces/${NS}/jobs/${JOB}`)).toBe(200);
    await viewerContext.close();
  }, 60_000);
});
