// The console app's frame against a real ZooKeeper: every route declares its access (else the app
// will not start), 401 and 403 before any handler, errors as {error: {code, message, details}},
// the OpenAPI document, and the namespace routes (cache reads, audited compare-and-set writes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createMetrics, createZkClient, silentLogger, type ZkClient } from '@orrery/core';
import { eventually, uniqueRoot } from '@orrery/core/testing';
import type { FastifyRequest } from 'fastify';
import { createConsoleApp } from './app.js';
import { createConsoleCache, type ConsoleCache } from './console-cache.js';
import type { AuditEntry, ConsoleContext } from './context.js';
import type { Principal } from './access.js';
import { namespaceRoutes } from './routes/namespaces.js';

const zkConnect = inject('zkConnect');
let zk: ZkClient;
let cache: ConsoleCache;
const audited: AuditEntry[] = [];
// Test credentials: a header naming one of these principals (the real authenticator is tested on its own).
const PRINCIPALS: Record<string, Principal> = {
  root: { user: 'root', admin: true, roles: {}, via: 'token' },
  ann: { user: 'ann', admin: false, roles: { shop: 'owner' }, via: 'token' },
  vic: { user: 'vic', admin: false, roles: { shop: 'viewer' }, via: 'token' },
};

function context(): ConsoleContext {
  return {
    zk, cache, logger: silentLogger(), metrics: createMetrics(),
    auth: { authenticate: async (request: FastifyRequest) => PRINCIPALS[String(request.headers['x-test-user'] ?? '')] },
    audit: { record: async (_request, entry) => { audited.push(entry); } },
    clusterToken: undefined, sessionTtlMs: 3_600_000, now: () => Date.now(),
  };
}

beforeAll(async () => {
  zk = createZkClient({ connect: zkConnect, root: uniqueRoot('console-app') });
  await zk.start();
  cache = createConsoleCache(zk);
  await cache.start();
});
afterAll(async () => {
  await cache.close();
  await zk.close();
});

describe('the console app', () => {
  it('refuses to start with a route that declares no access', async () => {
    const app = createConsoleApp(context(), { routes: [async (api) => { api.get('/oops', async () => 'x'); }] });
    await expect(app.ready()).rejects.toThrow(/GET \/api\/v1\/oops declares no access/);
    await app.close();
  });

  it('answers 401 without credentials and 403 without the role, as {error: {code, message}}', async () => {
    const app = createConsoleApp(context(), { routes: [namespaceRoutes] });
    try {
      const anonymous = await app.inject({ method: 'GET', url: '/api/v1/namespaces' });
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.json()).toEqual({ error: { code: 'no-auth', message: expect.stringContaining('sign in first') } });
      const viewer = await app.inject({ method: 'POST', url: '/api/v1/namespaces', headers: { 'x-test-user': 'vic' }, payload: { name: 'x' } });
      expect(viewer.statusCode).toBe(403);
      expect(viewer.json().error).toMatchObject({ code: 'forbidden', details: { need: 'admin' } });
      const missing = await app.inject({ method: 'GET', url: '/api/v1/nothing-here' });
      expect(missing.statusCode).toBe(404);
      expect(missing.json().error.code).toBe('not-found');
      const spec = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
      expect(spec.statusCode).toBe(200);
      expect(Object.keys(spec.json().paths)).toEqual(expect.arrayContaining(['/api/v1/namespaces', '/api/v1/namespaces/{namespace}']));
    } finally {
      await app.close();
    }
  });

  it('creates, reads, updates (compare-and-set) and lists namespaces, each write audited', async () => {
    const app = createConsoleApp(context(), { routes: [namespaceRoutes] });
    try {
      const created = await app.inject({ method: 'POST', url: '/api/v1/namespaces', headers: { 'x-test-user': 'root' }, payload: { name: 'shop', description: 'the shop' } });
      expect(created.statusCode, created.body).toBe(201);
      expect(audited.at(-1)).toMatchObject({ action: 'namespace.create', namespace: 'shop' });
      const again = await app.inject({ method: 'POST', url: '/api/v1/namespaces', headers: { 'x-test-user': 'root' }, payload: { name: 'shop' } });
      expect(again.statusCode).toBe(409);
      const bad = await app.inject({ method: 'POST', url: '/api/v1/namespaces', headers: { 'x-test-user': 'root' }, payload: { name: '../etc', colour: 'blue' } });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.details.issues.map((i: { field: string }) => i.field)).toEqual(expect.arrayContaining(['name']));
      await eventually(async () => {
        const got = await app.inject({ method: 'GET', url: '/api/v1/namespaces/shop', headers: { 'x-test-user': 'vic' } });
        expect(got.statusCode).toBe(200);
        expect(got.json()).toMatchObject({ name: 'shop', version: 0, settings: { description: 'the shop' }, jobs: 0, executors: { online: 0, total: 0 } });
      });
      const updated = await app.inject({ method: 'PUT', url: '/api/v1/namespaces/shop', headers: { 'x-test-user': 'ann' }, payload: { version: 0, settings: { description: 'renamed' } } });
      expect(updated.statusCode, updated.body).toBe(200);
      expect(updated.json()).toMatchObject({ version: 1, settings: { description: 'renamed' } });
      expect(audited.at(-1)).toMatchObject({ action: 'namespace.update', before: { description: 'the shop' }, after: { description: 'renamed' } });
      const stale = await app.inject({ method: 'PUT', url: '/api/v1/namespaces/shop', headers: { 'x-test-user': 'ann' }, payload: { version: 0, settings: { description: 'lost update' } } });
      expect(stale.statusCode).toBe(409);
      expect(stale.json().error).toMatchObject({ code: 'conflict', details: { version: 1, current: { description: 'renamed' } } });
      const forbidden = await app.inject({ method: 'PUT', url: '/api/v1/namespaces/shop', headers: { 'x-test-user': 'vic' }, payload: { version: 1, settings: {} } });
      expect(forbidden.statusCode).toBe(403);
      await eventually(async () => {
        const listed = await app.inject({ method: 'GET', url: '/api/v1/namespaces', headers: { 'x-test-user': 'vic' } });
        expect(listed.json().namespaces.map((n: { name: string }) => n.name)).toEqual(['shop']);
      });
    } finally {
      await app.close();
    }
  });
});
