// The web console served by the console app (no ZooKeeper needed: these routes never touch it):
// the bundle's files, index.html for client routes, JSON 404s under the server's own prefixes, and
// a clear answer when the bundle is missing.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics, silentLogger } from '@orrery/core';
import { createConsoleApp } from './app.js';
import type { ConsoleContext } from './context.js';
import { isServerPath } from './ui.js';

// Only what building the app reads; the UI routes use none of it.
const context = { logger: silentLogger(), metrics: createMetrics(), auth: { authenticate: async () => undefined } } as unknown as ConsoleContext;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'orrery-ui-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><div id="root"></div><script type="module" src="/assets/index-abc.js"></script>');
  writeFileSync(join(dir, 'assets', 'index-abc.js'), 'console.log(1)');
  writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the web console at /', () => {
  it('serves index.html at / and for client routes, its files as they are, and JSON 404s under /api', async () => {
    const app = createConsoleApp(context, { routes: [], uiDir: dir });
    try {
      for (const url of ['/', '/ns/shop/jobs', '/ns/shop/jobs/nightly?tab=runs', '/login']) {
        const page = await app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
        expect(page.statusCode, url).toBe(200);
        expect(page.headers['content-type'], url).toMatch(/^text\/html/);
        expect(page.headers['cache-control'], url).toBe('no-cache');
        expect(page.body, url).toContain('<div id="root">');
        // helmet's CSP: scripts from the console itself only (the bundle has no inline script).
        expect(page.headers['content-security-policy'], url).toContain("script-src 'self'");
        // Served over plain http too (TLS ends at a proxy): the UI's scripts must not be sent to https.
        expect(page.headers['content-security-policy'], url).not.toContain('upgrade-insecure-requests');
      }
      const asset = await app.inject({ method: 'GET', url: '/assets/index-abc.js' });
      expect(asset.statusCode).toBe(200);
      expect(asset.headers['content-type']).toMatch(/javascript/);
      expect(asset.headers['cache-control']).toContain('immutable');
      expect((await app.inject({ method: 'GET', url: '/favicon.svg' })).body).toContain('<svg');
      // Outside the bundle: index.html, never the file.
      expect((await app.inject({ method: 'GET', url: '/%2e%2e/%2e%2e/etc/passwd' })).body).toContain('<div id="root">');
      // Ranges are not served here: malformed ones (two Range headers) are ignored, never a 500.
      for (const method of ['GET', 'HEAD'] as const) {
        const ranged = await app.inject({ method, url: '/runs/', headers: { range: ['bytes=Q"o0', 'bytes=C%*1{'] as unknown as string } });
        expect(ranged.statusCode, method).toBe(200);
      }

      for (const url of ['/api/v1/x', '/api', '/api/v2/jobs', '/metrics/x', '/healthz/x']) {
        const missing = await app.inject({ method: 'GET', url });
        expect(missing.statusCode, url).toBe(404);
        expect(missing.json(), url).toEqual({ error: { code: 'not-found', message: expect.stringContaining(`no route GET ${url}`) } });
      }
      const post = await app.inject({ method: 'POST', url: '/api/v1/x', payload: {} });
      expect(post.statusCode).toBe(404);
      expect(post.json().error.code).toBe('not-found');
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).not.toBe(404);
    } finally {
      await app.close();
    }
  });

  it('says how to build the bundle when it is missing, in HTML to a browser and JSON otherwise', async () => {
    const app = createConsoleApp(context, { routes: [], uiDir: join(dir, 'nowhere') });
    try {
      const page = await app.inject({ method: 'GET', url: '/ns/shop', headers: { accept: 'text/html,*/*' } });
      expect(page.statusCode).toBe(503);
      expect(page.body).toContain('npm run build');
      const json = await app.inject({ method: 'GET', url: '/' });
      expect(json.statusCode).toBe(503);
      expect(json.json().error).toMatchObject({ code: 'unavailable', message: expect.stringContaining('npm run build') });
      expect((await app.inject({ method: 'GET', url: '/api/v1/x' })).statusCode).toBe(404);
    } finally {
      await app.close();
    }
  });

  it('knows the server prefixes', () => {
    expect(['/api', '/api/v1/jobs', '/docs', '/docs/static/x', '/healthz', '/metrics'].map(isServerPath)).toEqual([true, true, true, true, true, true]);
    expect(['/', '/apis', '/ns/api', '/docsy', '/login'].map(isServerPath)).toEqual([false, false, false, false, false]);
  });
});
