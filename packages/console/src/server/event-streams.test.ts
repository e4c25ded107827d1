// The console's open event streams (live events and log streams together) with the real
// authenticator against a real ZooKeeper, over real sockets: a stream whose token is revoked or
// whose user loses the role ends with `closed` {reason: 'access-revoked'}; one user's streams are
// capped (429 too-many-requests), and closing one lets a new one in; the caps' pure rule.
import { request as httpRequest, createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { HTTP_MAX_CONNECTIONS, createHttpApp, createMetrics, createZkClient, encodeJson, paths, silentLogger, type HttpApp, type ZkClient } from '@orrery/core';
import { eventually, uniqueRoot } from '@orrery/core/testing';
import { CONSOLE_MAX_CONNECTIONS, admitStream, createConsoleApp } from './app.js';
import { createAuthenticator } from './auth.js';
import { createConsoleCache, type ConsoleCache } from './console-cache.js';
import type { ConsoleContext } from './context.js';
import { createEventRoutes } from './routes/events.js';
import { runRoutes } from './routes/runs.js';
import { writeJob, writeShard } from './routes/cluster-test-support.js';
import { createNamespace } from '../store/namespaces.js';
import { createToken, deleteToken, ensureSessionSecret } from '../store/tokens.js';
import { createUser, readUser, updateUser } from '../store/users.js';

const zkConnect = inject('zkConnect');
const RUN = 'lx0-0-abc';
const PER_USER = 2;
let zk: ZkClient;
let cache: ConsoleCache;
let app: HttpApp;
let port = 0;
let executor: Server;

/** A token for `user` (who must exist). */
async function tokenOf(user: string): Promise<{ token: string; id: string }> {
  const found = await readUser(zk, user);
  const { token, view } = await createToken(zk, { user, userCreatedAt: found!.record.createdAt, name: `t${Math.random()}`, expiresAt: null }, Date.now());
  await eventually(() => expect(cache.consoleNode(paths.consoleToken(view.id))).toBeDefined());
  return { token, id: view.id };
}

beforeAll(async () => {
  zk = createZkClient({ connect: zkConnect, root: uniqueRoot('console-event-streams') });
  await zk.start();
  await ensureSessionSecret(zk, Date.now());
  await createNamespace(zk, 'shop');
  for (const name of ['vera', 'rita', 'cap']) await createUser(zk, { name, password: `${name}-password`, roles: { shop: 'viewer' } }, Date.now());
  // A stand-in executor running a run that prints nothing: its log stream stays open.
  executor = createServer((req, res) => {
    if (req.url?.includes('/log')) return void res.writeHead(416, { 'x-log-size': '0', 'content-range': 'bytes */0' }).end();
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"code":"not-found","message":"no record"}');
  });
  await new Promise<void>((resolve) => executor.listen(0, '127.0.0.1', resolve));
  await zk.mkdirp(paths.executor('shop', 'e1'));
  await zk.create(paths.executorPresence('shop', 'e1'), encodeJson({ host: '127.0.0.1', pid: 1, version: 'test', startedAt: 1, handlers: [], tags: [], httpUrl: `http://127.0.0.1:${(executor.address() as AddressInfo).port}` }), 'ephemeral');
  await writeJob(zk, { name: 'report', cron: '0 0 * * *' });
  await writeShard(zk, 'report', 0, { state: 'running', executor: 'e1', session: 's', runId: RUN, fireTime: 1, startedAt: 1, attempt: 1 });
  cache = createConsoleCache(zk);
  await cache.start();
  await eventually(() => expect(cache.job('shop', 'report')?.shards.get(0)).toBeDefined());
  await eventually(() => expect(cache.executor('shop', 'e1')?.presence).toBeDefined());
  const ctx: ConsoleContext = {
    zk, cache, logger: silentLogger(), metrics: createMetrics(),
    auth: createAuthenticator({ cache, now: () => Date.now() }),
    audit: { record: async () => undefined },
    clusterToken: 'cluster-token', sessionTtlMs: 3_600_000, now: () => Date.now(),
  };
  app = createConsoleApp(ctx, { routes: [createEventRoutes({ coalesceMs: 50, heartbeatMs: 60_000 }), runRoutes], streamLimits: { perUser: PER_USER } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await app?.close();
  await cache?.close();
  await zk?.close();
  await new Promise((resolve) => executor.close(resolve));
});

const EVENTS = '/api/v1/namespaces/shop/events';
const LOG_STREAM = `/api/v1/namespaces/shop/jobs/report/runs/${RUN}/log/stream`;

interface OpenStream {
  res: IncomingMessage;
  text: () => string;
  ended: () => boolean;
  close: () => void;
}

/** Opens an event stream with `token`; collects its text (the whole answer for a refusal). */
function open(path: string, token: string): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (res) => {
      let text = '';
      let ended = false;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => { ended = true; });
      res.on('close', () => { ended = true; });
      res.on('error', () => {});
      resolve({ res, text: () => text, ended: () => ended, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

const REVOKED = /event: closed\n(id: \d+\n)?data: \{"reason":"access-revoked","message":"[^"]+"\}\n\n$/;

describe('an open event stream re-checks its caller', () => {
  it('ends the live events with closed {reason: access-revoked} once its token is revoked', async () => {
    const { token, id } = await tokenOf('vera');
    const stream = await open(EVENTS, token);
    try {
      expect(stream.res.statusCode).toBe(200);
      await eventually(() => expect(stream.text()).toContain('event: ready'));
      await deleteToken(zk, id);
      await eventually(() => expect(stream.ended()).toBe(true), { timeoutMs: 3000 });
      expect(stream.text()).toMatch(/^id: \d+\nevent: closed\n/m);
      expect(stream.text()).toContain('"reason":"access-revoked"');
    } finally {
      stream.close();
    }
  });

  it('ends a log stream with closed {reason: access-revoked} once its user loses the role', async () => {
    const { token } = await tokenOf('rita');
    const stream = await open(LOG_STREAM, token);
    try {
      expect(stream.res.statusCode).toBe(200);
      await eventually(() => expect(stream.text()).toContain('retry: 3000'));
      const rita = await readUser(zk, 'rita');
      await updateUser(zk, 'rita', { roles: {} }, rita!.version, Date.now());
      await eventually(() => expect(stream.ended()).toBe(true), { timeoutMs: 3000 });
      expect(stream.text()).toMatch(REVOKED);
    } finally {
      stream.close();
    }
  });
});

describe('the caps on open streams', () => {
  it(`refuses a user's stream past ${PER_USER} with 429 (events and log streams together); closing one lets a new one in`, async () => {
    const { token } = await tokenOf('cap');
    const first = await open(EVENTS, token);
    const second = await open(LOG_STREAM, token);
    const streams = [first, second];
    try {
      expect([first.res.statusCode, second.res.statusCode]).toEqual([200, 200]);
      for (const path of [EVENTS, LOG_STREAM]) {
        const refused = await open(path, token);
        await eventually(() => expect(refused.ended()).toBe(true));
        expect(refused.res.statusCode).toBe(429);
        expect(JSON.parse(refused.text()).error).toMatchObject({ code: 'too-many-requests', message: expect.stringContaining(`${PER_USER} event streams open`), details: { limit: PER_USER, scope: 'user' } });
      }
      // Another user is not held back by this one.
      const other = await open(EVENTS, (await tokenOf('vera')).token);
      streams.push(other);
      expect(other.res.statusCode).toBe(200);
      first.close();
      await eventually(async () => {
        const again = await open(EVENTS, token);
        streams.push(again);
        expect(again.res.statusCode).toBe(200);
      });
    } finally {
      for (const s of streams) s.close();
    }
    await eventually(() => expect(app.streams.size).toBe(0));
  });

  it.each([
    [{ total: 0, user: 0 }, 'admitted'],
    [{ total: 199, user: 7 }, 'admitted'],
    [{ total: 10, user: 8 }, 'user-limit'],
    [{ total: 200, user: 0 }, 'total-limit'],
    [{ total: 200, user: 8 }, 'user-limit'],
  ] as const)('admitStream(%j) with 8 per user, 200 in all: %s', (open, verdict) => {
    expect(admitStream(open, { perUser: 8, total: 200 })).toBe(verdict);
  });

  it('gives the console a connection limit of its own, the other processes keep the default', () => {
    expect(app.server.maxConnections).toBe(CONSOLE_MAX_CONNECTIONS);
    const plain = createHttpApp({ metrics: createMetrics(), health: () => ({ ok: true }) });
    expect(plain.server.maxConnections).toBe(HTTP_MAX_CONNECTIONS);
    expect(createHttpApp({ metrics: createMetrics(), health: () => ({ ok: true }), maxConnections: 4000 }).server.maxConnections).toBe(4000);
  });
});
