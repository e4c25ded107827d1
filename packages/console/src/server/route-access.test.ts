// The route-role table: every route the console registers (all of routes/index.ts, collected as
// they are registered — not a hand list) is called as anonymous, viewer, operator, owner and admin
// with a minimal request. Anonymous gets 401 on every route that is not public; every role below
// the one a route declares gets 403; a role at or above it gets past authentication (an admin is
// never refused). A route added without the right role fails here.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { createMetrics, createZkClient, silentLogger, type HttpApp, type ZkClient } from '@orrery/core';
import { uniqueRoot } from '@orrery/core/testing';
import type { FastifyRequest } from 'fastify';
import type { Access, Principal } from './access.js';
import { API_PREFIX, createConsoleApp, type ConsoleRoutes } from './app.js';
import { createConsoleCache, type ConsoleCache } from './console-cache.js';
import type { ConsoleContext } from './context.js';
import { ALL_ROUTES } from './routes/index.js';

const zkConnect = inject('zkConnect');
/** The namespace every route's `:namespace` names; the roles below are held in it. */
const NS = 'ns1';
/** Callers, weakest first. */
const CALLERS = ['anonymous', 'viewer', 'operator', 'owner', 'admin'] as const;
type Caller = (typeof CALLERS)[number];
// Signed in with a session: a token is refused one route whatever its role (POST /tokens).
const PRINCIPALS: Record<Exclude<Caller, 'anonymous'>, Principal> = {
  viewer: { user: 'vic', admin: false, roles: { [NS]: 'viewer', other: 'owner' }, via: 'session' },
  operator: { user: 'opal', admin: false, roles: { [NS]: 'operator', other: 'owner' }, via: 'session' },
  owner: { user: 'oona', admin: false, roles: { [NS]: 'owner' }, via: 'session' },
  admin: { user: 'root', admin: true, roles: {}, via: 'session' },
};
/** The weakest caller each declared level lets in (by index in CALLERS). */
const REQUIRED: Record<Access['level'], number> = { public: 0, user: 1, viewer: 1, operator: 2, owner: 3, admin: 4 };
/** How long an allowed call may take to answer its headers (a stream may never end). */
const ANSWER_WAIT_MS = 5_000;

interface DeclaredRoute { method: string; url: string; access: Access }

let zk: ZkClient;
let cache: ConsoleCache;
let app: HttpApp;
let base = '';
const declared: DeclaredRoute[] = [];

beforeAll(async () => {
  zk = createZkClient({ connect: zkConnect, root: uniqueRoot('route-access') });
  await zk.start();
  cache = createConsoleCache(zk);
  await cache.start();
  const ctx: ConsoleContext = {
    zk, cache, logger: silentLogger(), metrics: createMetrics(),
    auth: { authenticate: async (request: FastifyRequest) => PRINCIPALS[String(request.headers['x-test-caller'] ?? '') as keyof typeof PRINCIPALS] },
    audit: { record: async () => undefined },
    clusterToken: undefined, sessionTtlMs: 3_600_000, now: () => Date.now(),
  };
  // Each plugin is wrapped so that an onRoute hook sees every route it registers, with its config.
  const collecting: ConsoleRoutes[] = ALL_ROUTES.map((routes) => async (api, c) => {
    api.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) {
        if (method === 'HEAD') continue;
        declared.push({ method, url: route.url, access: (route.config as { access: Access }).access });
      }
    });
    await routes(api, c);
  });
  app = createConsoleApp(ctx, { routes: collecting });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await app?.close();
  await cache?.close();
  await zk?.close();
});

/** The route's URL with each parameter filled in (`:namespace` with {@link NS}). */
function concrete(url: string): string {
  // `::` is Fastify's escaped colon: a literal ':' in the path (`/jobs::batch` is `/jobs:batch`).
  return url
    .replaceAll('::', '\u0000')
    .replace(/:namespace(?=\/|$)/g, NS)
    .replace(/:[A-Za-z0-9_]+(\([^)]*\))?/g, 'x1')
    .replace(/\*$/, 'x')
    .replaceAll('\u0000', ':');
}

/** Calls once; resolves the status, or 'no-answer' when none came in time (a stream that passed auth). */
async function call(route: DeclaredRoute, caller: Caller): Promise<number | 'no-answer'> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ANSWER_WAIT_MS);
  try {
    const response = await fetch(`${base}${concrete(route.url)}`, {
      method: route.method,
      headers: caller === 'anonymous' ? {} : { 'x-test-caller': caller },
      signal: controller.signal,
    });
    const status = response.status;
    controller.abort(); // do not wait for a body (an event stream never ends)
    return status;
  } catch (error) {
    if (controller.signal.aborted) return 'no-answer';
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

describe('the route-role table', () => {
  it('collects every API route with its declared access', () => {
    expect(declared.length).toBeGreaterThanOrEqual(15);
    for (const url of ['/namespaces', '/auth/login', '/auth/me', '/users', '/users/:user', '/tokens', '/tokens/:id', '/audit']) {
      expect(declared.map((r) => r.url)).toContain(`${API_PREFIX}${url}`);
    }
    for (const route of declared) expect(Object.keys(REQUIRED), `${route.method} ${route.url}`).toContain(route.access.level);
  });

  it('401 for anonymous on every non-public route, 403 for every role below the declared one', async () => {
    const problems: string[] = [];
    for (const route of declared) {
      const required = REQUIRED[route.access.level];
      const namesNamespace = route.url.includes(':namespace');
      if (['viewer', 'operator', 'owner'].includes(route.access.level) && !namesNamespace) {
        problems.push(`${route.method} ${route.url}: declares the namespace role ${route.access.level} but names no :namespace (only admins would pass)`);
        continue;
      }
      for (const [index, caller] of CALLERS.entries()) {
        const status = await call(route, caller);
        const what = `${route.method} ${route.url} (${route.access.level}) as ${caller}: ${status}`;
        if (index < required) {
          const want = index === 0 ? 401 : 403;
          if (status !== want) problems.push(`${what}, expected ${want}`);
        } else if (status === 401 || (caller === 'admin' && status === 403)) {
          problems.push(`${what}, expected to get past authentication`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('the OpenAPI document', () => {
  it('covers every API route, and the interactive docs answer', async () => {
    const spec = (await (await fetch(`${base}${API_PREFIX}/openapi.json`)).json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(spec.openapi).toMatch(/^3\./);
    const missing: string[] = [];
    for (const route of declared) {
      if (route.url === `${API_PREFIX}/openapi.json`) continue;
      // Fastify's `:param` is OpenAPI's `{param}`; `::` is a literal colon.
      const path = route.url.replaceAll('::', '\u0000').replace(/:([A-Za-z0-9_]+)/g, '{$1}').replaceAll('\u0000', ':');
      if (!spec.paths[path]?.[route.method.toLowerCase()]) missing.push(`${route.method} ${path}`);
    }
    expect(missing).toEqual([]);
    const docs = await fetch(`${base}/docs/`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toContain('text/html');
  });
});
