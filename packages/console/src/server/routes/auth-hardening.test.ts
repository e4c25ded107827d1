// What an anonymous or half-trusted caller cannot do, against a real ZooKeeper with the real
// authenticator and auditor: forge its address through X-Forwarded-For behind --trust-proxy (the
// audit's address and the per-address login limit), flood the audit log with failed logins, or
// mint tokens with a token. And a user deletion whose token cleanup fails is still audited.
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { ZK_PERMS, createMetrics, createZkClient, orreryAcl, paths, readMetric, silentLogger, type HttpApp, type Metrics, type TrustProxy, type ZkClient } from '@orrery/core';
import { eventually, uniqueRoot } from '@orrery/core/testing';
import { createConsoleApp } from '../app.js';
import { createAuditor } from '../auditor.js';
import { createAuthenticator, SESSION_COOKIE, LOGIN_ATTEMPTS_PER_MINUTE } from '../auth.js';
import { createConsoleCache, type ConsoleCache } from '../console-cache.js';
import type { ConsoleContext } from '../context.js';
import { ALL_ROUTES } from './index.js';
import { ensureSessionSecret } from '../../store/tokens.js';
import { createUser, ensureFirstAdmin } from '../../store/users.js';

const zkConnect = inject('zkConnect');
const ADMIN_PASSWORD = 'admin-password-1';
const LOCKER_AUTH = 'locker:locker-password';
let root: string;
let zk: ZkClient;
let cache: ConsoleCache;
let metrics: Metrics;
const apps: HttpApp[] = [];
let adminCookie = '';

/** Signs in once the console's cache has seen the user (just created). */
async function loginWhenSeen(app: HttpApp, user: string, password: string): Promise<string> {
  let cookie = '';
  await eventually(async () => {
    cookie = cookieOf(await login(app, user, password));
  });
  return cookie;
}

/** A console app on the shared ZooKeeper session and cache (each app: its own rate limits). */
async function consoleApp(trustProxy?: TrustProxy): Promise<HttpApp> {
  const ctx: ConsoleContext = {
    zk, cache, logger: silentLogger(), metrics,
    auth: createAuthenticator({ cache, now: Date.now }),
    audit: createAuditor({ zk, cache, logger: silentLogger(), now: Date.now }),
    clusterToken: undefined, sessionTtlMs: 3_600_000, now: Date.now,
  };
  const app = createConsoleApp(ctx, { routes: ALL_ROUTES, ...(trustProxy !== undefined ? { trustProxy } : {}) });
  apps.push(app);
  await app.ready();
  return app;
}

beforeAll(async () => {
  root = uniqueRoot('console-auth-hardening');
  zk = createZkClient({ connect: zkConnect, root });
  await zk.start();
  await ensureSessionSecret(zk, Date.now());
  await ensureFirstAdmin(zk, { password: ADMIN_PASSWORD, now: Date.now() });
  await createUser(zk, { name: 'owen', password: 'owen-password', roles: { shop: 'owner' } }, Date.now());
  cache = createConsoleCache(zk);
  await cache.start();
  metrics = createMetrics({ processMetrics: false });
  const app = await consoleApp();
  adminCookie = cookieOf(await login(app, 'admin', ADMIN_PASSWORD));
});
afterAll(async () => {
  for (const app of apps) await app.close();
  await cache?.close();
  await zk?.close();
});

type Answer = Awaited<ReturnType<HttpApp['inject']>>;
function login(app: HttpApp, user: string, password: string, headers: Record<string, string> = {}): Promise<Answer> {
  return app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { user, password }, headers });
}
function cookieOf(answer: Answer): string {
  const c = answer.cookies.find((x) => x.name === SESSION_COOKIE);
  if (!c) throw new Error(`no session cookie in ${answer.statusCode} ${answer.body}`);
  return `${SESSION_COOKIE}=${c.value}`;
}
async function auditEntries(app: HttpApp, query: string): Promise<Array<Record<string, any>>> {
  const answer = await app.inject({ method: 'GET', url: `/api/v1/audit?limit=1000&${query}`, headers: { cookie: adminCookie } });
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json().entries;
}
const auditSize = async (): Promise<number> => (await zk.getChildren(paths.consoleAudit())).length;
const failedLogins = async (): Promise<number> => readMetric(await metrics.metrics(), 'orrery_console_logins_failed_total') ?? 0;

describe('--trust-proxy: the client cannot choose its address', () => {
  it('with one proxy hop, a forged leftmost X-Forwarded-For is not the audit address', async () => {
    const proxied = await consoleApp(1);
    // The client wrote "6.6.6.6"; the proxy appended the address it saw, 203.0.113.9.
    const answer = await login(proxied, 'owen', 'owen-password', { 'x-forwarded-for': '6.6.6.6, 203.0.113.9', 'x-forwarded-proto': 'https' });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.cookies.find((c) => c.name === SESSION_COOKIE)).toMatchObject({ secure: true });
    // The audit is listed from the watch-fed cache: wait for it.
    await eventually(async () => expect((await auditEntries(proxied, 'action=auth.login&user=owen'))[0]).toMatchObject({ ip: '203.0.113.9' }));
  });

  it('with the proxy named by address, the same', async () => {
    const proxied = await consoleApp(['127.0.0.1', '10.0.0.0/8']);
    const answer = await login(proxied, 'owen', 'owen-password', { 'x-forwarded-for': '6.6.6.6, 198.51.100.4, 10.1.2.3' });
    expect(answer.statusCode, answer.body).toBe(200);
    await eventually(async () => expect((await auditEntries(proxied, 'action=auth.login&user=owen'))[0]).toMatchObject({ ip: '198.51.100.4' }));
  });

  it('a new forged address per attempt does not escape the per-address login limit', async () => {
    const proxied = await consoleApp(1);
    const statuses: number[] = [];
    // Different user names: the per-user limit stays out of it.
    for (let i = 0; i <= LOGIN_ATTEMPTS_PER_MINUTE; i += 1) {
      statuses.push((await login(proxied, `spray-${i}`, 'wrong-password', { 'x-forwarded-for': `192.0.2.${i}, 203.0.113.77` })).statusCode);
    }
    expect(statuses.slice(0, LOGIN_ATTEMPTS_PER_MINUTE).every((s) => s === 401), String(statuses)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
  });
});

describe('failed logins', () => {
  it('write nothing to the audit log: 50 of them leave its size as it was, and are counted', async () => {
    const proxied = await consoleApp(1);
    const sizeBefore = await auditSize();
    const countedBefore = await failedLogins();
    // 50 anonymous attempts from 50 addresses (the per-address limit is 30 a minute).
    for (let i = 0; i < 50; i += 1) {
      const answer = await login(proxied, `nobody-${i}`, 'wrong-password', { 'x-forwarded-for': `198.51.100.${i}` });
      expect(answer.statusCode).toBe(401);
    }
    expect(await auditSize()).toBe(sizeBefore);
    expect(await failedLogins()).toBe(countedBefore + 50);
    expect(await auditEntries(proxied, 'action=auth.login-failed')).toEqual([]);
    // A successful login is still audited.
    expect((await login(proxied, 'owen', 'owen-password', { 'x-forwarded-for': '198.51.100.200' })).statusCode).toBe(200);
    expect(await auditSize()).toBe(sizeBefore + 1);
    expect(await failedLogins()).toBe(countedBefore + 50);
  });
});

describe('tokens', () => {
  it('are created from a signed-in session only: a token may not create one (403, before the body is read)', async () => {
    const app = await consoleApp();
    const owen = cookieOf(await login(app, 'owen', 'owen-password'));
    const created = await app.inject({ method: 'POST', url: '/api/v1/tokens', headers: { cookie: owen }, payload: { name: 'short-lived', expiresInDays: 1 } });
    expect(created.statusCode, created.body).toBe(201);
    const token = created.json().token as string;
    await eventually(async () => expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(200));
    const minted = await app.inject({ method: 'POST', url: '/api/v1/tokens', headers: { authorization: `Bearer ${token}` }, payload: { name: 'forever' } });
    expect(minted.statusCode).toBe(403);
    expect(minted.json().error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('create tokens from a signed-in session'), details: { need: 'session', via: 'token' } });
    const malformed = await app.inject({ method: 'POST', url: '/api/v1/tokens', headers: { authorization: `Bearer ${token}` }, payload: { colour: 'red' } });
    expect(malformed.statusCode).toBe(403);
    const listed = await app.inject({ method: 'GET', url: '/api/v1/tokens', headers: { cookie: owen } });
    expect(listed.json().tokens.map((t: { name: string }) => t.name)).toEqual(['short-lived']);
  });
});

describe('deleting a user', () => {
  it('is audited even when revoking their tokens fails, and the entry says the cleanup did not finish', async () => {
    const app = await consoleApp();
    expect((await app.inject({ method: 'POST', url: '/api/v1/users', headers: { cookie: adminCookie }, payload: { name: 'tom', password: 'tom-password' } })).statusCode).toBe(201);
    const tom = await loginWhenSeen(app, 'tom', 'tom-password');
    expect((await app.inject({ method: 'POST', url: '/api/v1/tokens', headers: { cookie: tom }, payload: { name: 'tom script' } })).statusCode).toBe(201);
    // Another identity takes the tokens node from the console: listing the tokens fails.
    const locker = createZkClient({ connect: zkConnect, root, auth: LOCKER_AUTH });
    await locker.start();
    try {
      await locker.setAcl(paths.consoleTokens(), orreryAcl(LOCKER_AUTH));
      const deleted = await app.inject({ method: 'DELETE', url: '/api/v1/users/tom', headers: { cookie: adminCookie } });
      expect(deleted.statusCode).toBeGreaterThanOrEqual(400);
      expect(await zk.exists(paths.consoleUser('tom'))).toBeNull();
      await eventually(async () => {
        expect((await auditEntries(app, 'action=user.delete'))[0]).toMatchObject({ user: 'admin', target: 'tom', before: { name: 'tom' }, details: { tokenCleanup: 'failed', tokenCleanupError: expect.any(String) } });
      });
    } finally {
      await locker.setAcl(paths.consoleTokens(), [{ perms: ZK_PERMS.all, scheme: 'world', id: 'anyone' }]);
      await locker.close();
    }
    // With the tokens node readable again, a deletion finishes its cleanup and says so.
    expect((await app.inject({ method: 'POST', url: '/api/v1/users', headers: { cookie: adminCookie }, payload: { name: 'una', password: 'una-password' } })).statusCode).toBe(201);
    const una = await loginWhenSeen(app, 'una', 'una-password');
    const id = (await app.inject({ method: 'POST', url: '/api/v1/tokens', headers: { cookie: una }, payload: { name: 'una script' } })).json().id as string;
    expect((await app.inject({ method: 'DELETE', url: '/api/v1/users/una', headers: { cookie: adminCookie } })).statusCode).toBe(204);
    await eventually(async () => {
      expect((await auditEntries(app, 'action=user.delete'))[0]).toMatchObject({ target: 'una', details: { tokenCleanup: 'finished', tokensRevoked: [id] } });
    });
  });
});
