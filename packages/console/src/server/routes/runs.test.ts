// The runs routes with app.inject() against a real ZooKeeper, and stand-in executors on real
// sockets that answer well, badly or not at all: merged lists that name what is missing, error
// shapes (404 unknown run, 400 bad offset or range, 503 without a cluster token), and what is
// forwarded (only the token and a re-serialised range, never the caller's headers).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createMetrics, createZkClient, encodeJson, paths, silentLogger, type ZkClient } from '@orrery/core';
import { eventually, uniqueRoot } from '@orrery/core/testing';
import type { FastifyRequest } from 'fastify';
import { createConsoleApp } from '../app.js';
import { createConsoleCache, type ConsoleCache } from '../console-cache.js';
import type { ConsoleContext } from '../context.js';
import type { Principal } from '../access.js';
import { createNamespace } from '../../store/namespaces.js';
import { runRoutes, followEventToSse } from './runs.js';

const zkConnect = inject('zkConnect');
const TOKEN = 'route-test-cluster-token';
const T0 = Date.parse('2026-02-01T10:00:00Z');
const runId = (at: number, item = 0) => `${at.toString(36)}-${item}-abc`;
const record = (at: number, executor: string, item = 0) => ({
  job: 'report', item, trigger: 'cron', recorded: true, status: 'succeeded', exitCode: 0, startedAt: at, endedAt: at + 5, durationMs: 5,
  executor, runId: runId(at, item), fireTime: at, attempt: 1, fencingToken: 1, message: 'ok',
});
const LOG = 'one\ntwo\nthree\n';

let zk: ZkClient;
let cache: ConsoleCache;
const servers: Server[] = [];
const seen: IncomingHttpHeaders[] = [];
const seenUrls: string[] = [];
const viewer: Principal = { user: 'vic', admin: false, roles: { shop: 'viewer', calm: 'viewer' }, via: 'token' };

/** A stand-in executor: `good` serves two runs and a log, others misbehave. */
async function standIn(kind: 'good' | 'garbage' | 'refuses'): Promise<string> {
  const server = createServer((req, res) => {
    seen.push(req.headers);
    seenUrls.push(req.url ?? '');
    if (kind === 'refuses') return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"code":"no-auth","message":"no"}');
    if (kind === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>not json');
    const url = new URL(req.url ?? '/', 'http://x');
    const [, , id, log] = url.pathname.split('/');
    if (url.pathname === '/runs') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([record(T0 + 2000, 'e-good'), { hostile: true }, record(T0, 'e-good', 1)]));
    if (id === runId(T0 + 2000) && !log) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(record(T0 + 2000, 'e-good')));
    if (id === runId(T0 + 2000) && log === 'log') {
      const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
      if (range) {
        const body = LOG.slice(Number(range[1]), Number(range[2]) + 1);
        return void res.writeHead(206, { 'x-log-size': String(LOG.length), 'content-range': `bytes ${range[1]}-${range[2]}/${LOG.length}`, 'content-length': String(body.length) }).end(body);
      }
      return void res.writeHead(200, { 'x-log-size': String(LOG.length), 'content-length': String(LOG.length) }).end(LOG);
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"code":"not-found","message":"no run"}');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function register(namespace: string, name: string, httpUrl: string | undefined): Promise<void> {
  await zk.mkdirp(paths.executor(namespace, name));
  if (httpUrl === undefined) return; // offline: the node without a presence
  await zk.create(paths.executorPresence(namespace, name), encodeJson({ host: '127.0.0.1', pid: 1, version: 'test', startedAt: T0, handlers: [], tags: [], httpUrl }), 'ephemeral');
}

function context(clusterToken: string | undefined): ConsoleContext {
  return {
    zk, cache, logger: silentLogger(), metrics: createMetrics(),
    auth: { authenticate: async (request: FastifyRequest) => (request.headers['x-test-user'] === 'vic' ? viewer : undefined) },
    audit: { record: async () => undefined },
    clusterToken, sessionTtlMs: 3_600_000, now: () => Date.now(),
  };
}
const H = { 'x-test-user': 'vic', cookie: 'orrery_session=secret-cookie' };

beforeAll(async () => {
  zk = createZkClient({ connect: zkConnect, root: uniqueRoot('console-runs') });
  await zk.start();
  await createNamespace(zk, 'shop');
  await createNamespace(zk, 'calm');
  const good = await standIn('good');
  await register('shop', 'e-good', good);
  await register('shop', 'e-garbage', await standIn('garbage'));
  await register('shop', 'e-refuses', await standIn('refuses'));
  await register('shop', 'e-gone', undefined);
  await register('calm', 'e-good', good);
  cache = createConsoleCache(zk);
  await cache.start();
  await eventually(() => expect(cache.executor('shop', 'e-refuses')?.presence).toBeDefined());
});
afterAll(async () => {
  await cache.close();
  await zk.close();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

describe('the runs routes', () => {
  it("merges the executors' runs and names each one that could not be asked, with the reason", async () => {
    const app = createConsoleApp(context(TOKEN), { routes: [runRoutes] });
    try {
      const res = await app.inject({ url: '/api/v1/namespaces/shop/jobs/report/runs?limit=10', headers: H });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.runs.map((r: { runId: string }) => r.runId)).toEqual([runId(T0 + 2000), runId(T0, 1)]); // the hostile entry dropped
      expect(body.unavailable.map((u: { executor: string; reason: string }) => [u.executor, u.reason])).toEqual([
        ['e-garbage', 'bad-answer'], ['e-gone', 'offline'], ['e-refuses', 'refused'],
      ]);
      expect(body.nextBefore).toBeNull();
      expect(res.body).not.toContain(TOKEN);
    } finally {
      await app.close();
    }
  });

  it('forwards only the token and a re-serialised range, never the caller\'s headers or path', async () => {
    const app = createConsoleApp(context(TOKEN), { routes: [runRoutes] });
    try {
      seen.length = 0;
      seenUrls.length = 0;
      const res = await app.inject({ url: `/api/v1/namespaces/calm/jobs/report/runs/${runId(T0 + 2000)}/log?executor=e-good`, headers: { ...H, range: 'bytes=4-6' } });
      expect(res.statusCode, res.body).toBe(206);
      expect(res.body).toBe('two');
      expect(res.headers).toMatchObject({ 'content-range': `bytes 4-6/${LOG.length}`, 'x-log-size': String(LOG.length), 'x-executor': 'e-good' });
      const sent = seen.at(-1)!;
      expect(sent.authorization).toBe(`Bearer ${TOKEN}`);
      expect(sent.range).toBe('bytes=4-6');
      expect(sent.cookie).toBeUndefined();
      expect(sent['x-test-user']).toBeUndefined();
      expect(seenUrls.at(-1)).toBe(`/runs/${runId(T0 + 2000)}/log?stream=stdout`);
      const whole = await app.inject({ url: `/api/v1/namespaces/calm/jobs/report/runs/${runId(T0 + 2000)}/log`, headers: H });
      expect([whole.statusCode, whole.body]).toEqual([200, LOG]);
      const one = await app.inject({ url: `/api/v1/namespaces/calm/jobs/report/runs/${runId(T0 + 2000)}`, headers: H });
      expect(one.json()).toMatchObject({ runId: runId(T0 + 2000), executor: 'e-good', status: 'succeeded' });
    } finally {
      await app.close();
    }
  });

  it('answers 404 for an unknown run, namespace or log, as {error: {code, message}}', async () => {
    const app = createConsoleApp(context(TOKEN), { routes: [runRoutes] });
    try {
      for (const url of [`/api/v1/namespaces/calm/jobs/report/runs/${runId(T0 + 99)}`, `/api/v1/namespaces/calm/jobs/report/runs/${runId(T0 + 99)}/log`, '/api/v1/namespaces/nope/jobs/report/runs']) {
        const res = await app.inject({ url, headers: { 'x-test-user': 'vic' } });
        // vic has no role in 'nope': an admin-free viewer gets 403 there, before anything is read.
        if (url.includes('/nope/')) expect(res.statusCode).toBe(403);
        else {
          expect(res.statusCode, url).toBe(404);
          expect(res.json().error).toMatchObject({ code: 'not-found', message: expect.stringContaining(runId(T0 + 99)) });
        }
      }
      const hint = await app.inject({ url: `/api/v1/namespaces/calm/jobs/report/runs/${runId(T0 + 2000)}?executor=nobody`, headers: H });
      expect([hint.statusCode, hint.json().error.code]).toEqual([404, 'not-found']);
    } finally {
      await app.close();
    }
  });

  it('answers 400 naming the field for a bad offset, range, run id, stream or limit', async () => {
    const app = createConsoleApp(context(TOKEN), { routes: [runRoutes] });
    try {
      const log = `/api/v1/namespaces/calm/jobs/report/runs/${runId(T0 + 2000)}/log`;
      const cases: Array<[string, Record<string, string>, string]> = [
        [`${log}?offset=-1`, {}, 'offset'],
        [`${log}?offset=abc`, {}, 'offset'],
        [`${log}?offset=3`, { range: 'bytes=0-1' }, 'offset'],
        [log, { range: 'bytes=5-1' }, 'range'],
        [log, { range: 'bytes=0-1,4-5' }, 'range'],
        [`${log}?stream=stdin`, {}, 'stream'],
        ['/api/v1/namespaces/calm/jobs/report/runs/..%2Fetc/log', {}, 'runId'],
        ['/api/v1/namespaces/calm/jobs/report/runs?limit=0', {}, 'limit'],
        ['/api/v1/namespaces/calm/jobs/report/runs?before=yesterday', {}, 'before'],
        [`${log}/stream`, { 'last-event-id': 'x1' }, 'last-event-id'],
      ];
      for (const [url, headers, field] of cases) {
        const res = await app.inject({ url, headers: { ...H, ...headers } });
        expect(res.statusCode, `${url} ${JSON.stringify(headers)}: ${res.body}`).toBe(400);
        expect(res.json().error.code).toBe('validation');
        expect(JSON.stringify(res.json().error.details.issues)).toContain(field);
      }
    } finally {
      await app.close();
    }
  });

  it('answers 503 naming ORRERY_CLUSTER_TOKEN on every runs route when the console has no token', async () => {
    const app = createConsoleApp(context(undefined), { routes: [runRoutes] });
    try {
      const base = `/api/v1/namespaces/calm/jobs/report/runs`;
      for (const url of [base, `${base}/${runId(T0 + 2000)}`, `${base}/${runId(T0 + 2000)}/log`, `${base}/${runId(T0 + 2000)}/log/stream`]) {
        const res = await app.inject({ url, headers: H });
        expect(res.statusCode, url).toBe(503);
        expect(res.json().error).toMatchObject({ code: 'unavailable', message: expect.stringContaining('ORRERY_CLUSTER_TOKEN') });
      }
    } finally {
      await app.close();
    }
  });

  it('streams a finished run as SSE: its log, then end with the outcome', async () => {
    const app = createConsoleApp(context(TOKEN), { routes: [runRoutes] });
    try {
      const res = await app.inject({ url: `/api/v1/namespaces/calm/jobs/report/runs/${runId(T0 + 2000)}/log/stream`, headers: H });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      const events = res.body.split('\n\n').filter((b) => b.startsWith('event:')).map((b) => b.split('\n')[0]);
      expect(events).toEqual(['event: log', 'event: end']);
      expect(res.body).toContain(followEventToSse({ type: 'log', offset: 0, next: LOG.length, text: LOG }));
    } finally {
      await app.close();
    }
  });
});
