// The auth, users, tokens and audit routes with the real authenticator and auditor against a real
// ZooKeeper: login sets an httpOnly SameSite=Strict cookie, a failed login says nothing about
// which part was wrong and is rate-limited, tokens are shown once and revoked, users are managed
// by admins with compare-and-set, and every change lands in the audit log without a secret.
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { createMetrics, createZkClient, paths, silentLogger, type HttpApp, type ZkClient } from '@orrery/core';
import { eventually, uniqueRoot } from '@orrery/core/testing';
import { createConsoleApp } from '../app.js';
import { createAuditor } from '../auditor.js';
import { createAuthenticator, SESSION_COOKIE } from '../auth.js';
import { createConsoleCache, type ConsoleCache } from '../console-cache.js';
import type { ConsoleContext } from '../context.js';
import { ALL_ROUTES } from './index.js';
import { ensureSessionSecret } from '../../store/tokens.js';
import { createUser, ensureFirstAdmin } from '../../store/users.js';

const zkConnect = inject('zkConnect');
const ADMIN_PASSWORD = 'admin-password-1';
let zk: ZkClient;
let cache: ConsoleCache;
let app: HttpApp;
let now = Date.now();

beforeAll(async () => {
  zk = createZkClient({ connect: zkConnect, root: uniqueRoot('console-accounts') });
  await zk.start();
  await ensureSessionSecret(zk, now);
  await ensureFirstAdmin(zk, { password: ADMIN_PASSWORD, now });
  await createUser(zk, { name: 'owen', password: 'owen-password', roles: { shop: 'owner' } }, now);
  await createUser(zk, { name: 'vera', password: 'vera-password', roles: { shop: 'viewer' } }, now);
  cache = createConsoleCache(zk);
  await cache.start();
  const ctx: ConsoleContext = {
    zk, cache, logger: silentLogger(), metrics: createMetrics(),
    auth: createAuthenticator({ cache, now: () => now }),
    audit: createAuditor({ zk, cache, logger: silentLogger(), now: () => now }),
    clusterToken: undefined, sessionTtlMs: 3_600_000, now: () => now,
  };
  app = createConsoleApp(ctx, { routes: ALL_ROUTES });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await cache?.close();
  await zk?.close();
});

type Answer = Awaited<ReturnType<HttpApp['inject']>>;
async function login(user: string, password: string, headers: Record<string, string> = {}): Promise<Answer> {
  return app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { user, password }, headers });
}
function cookieOf(answer: Answer): string {
  const c = answer.cookies.find((x) => x.name === SESSION_COOKIE);
  if (!c) throw new Error(`no session cookie in ${answer.statusCode} ${answer.body}`);
  return `${SESSION_COOKIE}=${c.value}`;
}
async function auditActions(): Promise<string[]> {
  const answer = await app.inject({ method: 'GET', url: '/api/v1/audit?limit=1000', headers: { cookie: adminCookie } });
  return answer.json().entries.map((e: { action: string }) => e.action);
}
let adminCookie = '';

describe('login, logout, me', () => {
  it('sets an httpOnly, SameSite=Strict session cookie that /auth/me accepts', async () => {
    const answer = await login('admin', ADMIN_PASSWORD);
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toMatchObject({ user: 'admin', admin: true, roles: {}, via: 'session', expiresAt: now + 3_600_000 });
    const cookie = answer.cookies.find((c) => c.name === SESSION_COOKIE)!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/', maxAge: 3600 });
    expect(cookie.secure).toBeFalsy(); // plain http here; Secure over https
    adminCookie = cookieOf(answer);
    const me = await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: adminCookie } });
    expect(me.json()).toEqual({ user: 'admin', admin: true, roles: {}, via: 'session' });
    const fake = await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: `${adminCookie}x` } });
    expect(fake.statusCode).toBe(401);
  });

  it('sets Secure when the request came over https through a trusted proxy', async () => {
    // A second app, as with --trust-proxy: X-Forwarded-Proto says https.
    const ctx = { zk, cache, logger: silentLogger(), metrics: createMetrics(), auth: createAuthenticator({ cache, now: () => now }), audit: createAuditor({ zk, cache, logger: silentLogger(), now: () => now }), clusterToken: undefined, sessionTtlMs: 60_000, now: () => now };
    const proxied = createConsoleApp(ctx, { routes: ALL_ROUTES, trustProxy: 1 });
    try {
      const answer = await proxied.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { user: 'vera', password: 'vera-password' }, headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.9' } });
      expect(answer.statusCode).toBe(200);
      expect(answer.cookies.find((c) => c.name === SESSION_COOKIE)).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Strict' });
      await eventually(async () => {
        const entries = (await app.inject({ method: 'GET', url: '/api/v1/audit?action=auth.login&user=vera', headers: { cookie: adminCookie } })).json().entries;
        expect(entries[0]).toMatchObject({ ip: '203.0.113.9', via: 'session' });
      });
    } finally {
      await proxied.close();
    }
  });

  it('a failed login says nothing about which part was wrong, and is not audited (it changes nothing)', async () => {
    const wrongPassword = await login('owen', 'not-his-password');
    const noSuchUser = await login('nobody', 'not-his-password');
    expect(wrongPassword.statusCode).toBe(401);
    expect(noSuchUser.statusCode).toBe(401);
    expect(wrongPassword.json()).toEqual(noSuchUser.json());
    expect(wrongPassword.json().error).toMatchObject({ code: 'no-auth', message: 'wrong user name or password' });
    expect(wrongPassword.cookies).toHaveLength(0);
    const bad = await login('', '');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.issues.map((i: { field: string }) => i.field).sort()).toEqual(['password', 'user']);
    // Logged and counted instead (auth-hardening.test.ts): an anonymous caller cannot flood the audit log.
    const answer = await app.inject({ method: 'GET', url: '/api/v1/audit?action=auth.login-failed', headers: { cookie: adminCookie } });
    expect(answer.json().entries).toEqual([]);
  });

  it('limits failed logins per user (429 with the wait), even with the right password after', async () => {
    for (let i = 0; i < 10; i += 1) expect((await login('vera', `wrong-${i}-password`)).statusCode).toBe(401);
    const limited = await login('vera', 'vera-password');
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toMatchObject({ code: 'too-many-requests', details: { retryAfterSeconds: expect.any(Number) } });
    expect(limited.headers['retry-after']).toBeDefined();
    now += 16 * 60_000; // the window passes (the app's clock)
    expect((await login('vera', 'vera-password')).statusCode).toBe(200);
  });

  it('logout clears the cookie; ?everywhere=true ends every session of the user', async () => {
    const first = cookieOf(await login('owen', 'owen-password'));
    const second = cookieOf(await login('owen', 'owen-password'));
    const out = await app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { cookie: first } });
    expect(out.statusCode).toBe(204);
    const cleared = out.cookies.find((c) => c.name === SESSION_COOKIE)!;
    expect(cleared.value).toBe('');
    expect(new Date(cleared.expires!).getTime()).toBeLessThan(Date.now());
    expect((await app.inject({ method: 'POST', url: '/api/v1/auth/logout' })).statusCode).toBe(204); // no session: fine
    expect((await app.inject({ method: 'POST', url: '/api/v1/auth/logout?everywhere=true' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'POST', url: '/api/v1/auth/logout?everywhere=true', headers: { cookie: second } })).statusCode).toBe(204);
    await eventually(async () => {
      expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: first } })).statusCode).toBe(401);
      expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: second } })).statusCode).toBe(401);
    });
  });

  it('a session expires with its time', async () => {
    const cookie = cookieOf(await login('owen', 'owen-password'));
    expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie } })).statusCode).toBe(200);
    now += 3_600_000;
    expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie } })).statusCode).toBe(401);
    adminCookie = cookieOf(await login('admin', ADMIN_PASSWORD));
  });
});

describe('API tokens', () => {
  it('are shown once, authenticate as their owner (scheme in any case), list without secrets, and die when revoked', async () => {
    const owen = cookieOf(await login('owen', 'owen-password'));
    const created = await app.inject({ method: 'POST', url: '/api/v1/tokens', headers: { cookie: owen }, payload: { name: 'ci deploy', expiresInDays: 30 } });
    expect(created.statusCode, created.body).toBe(201);
    const { token, id } = created.json();
    expect(created.json()).toMatchObject({ user: 'owen', name: 'ci deploy', expiresAt: now + 30 * 86_400_000 });
    expect(token).toMatch(/^orr_[0-9a-f]{16}_/);
    const stored = (await zk.get(paths.consoleToken(id))).data!.toString();
    expect(stored).not.toContain(token);
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      await eventually(async () => {
        const me = await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `${scheme} ${token}` } });
        expect(me.statusCode).toBe(200);
        expect(me.json()).toEqual({ user: 'owen', admin: false, roles: { shop: 'owner' }, via: 'token' });
      });
    }
    const listed = await app.inject({ method: 'GET', url: '/api/v1/tokens', headers: { authorization: `Bearer ${token}` } });
    expect(listed.json().tokens).toEqual([{ id, user: 'owen', name: 'ci deploy', createdAt: now, expiresAt: now + 30 * 86_400_000 }]);
    expect(listed.body).not.toContain(token.slice(21));
    // Another user's listing and revoking: refused / not found; an admin may.
    const vera = cookieOf(await login('vera', 'vera-password'));
    expect((await app.inject({ method: 'GET', url: '/api/v1/tokens?user=owen', headers: { cookie: vera } })).statusCode).toBe(403);
    expect((await app.inject({ method: 'DELETE', url: `/api/v1/tokens/${id}`, headers: { cookie: vera } })).statusCode).toBe(404);
    const all = await app.inject({ method: 'GET', url: '/api/v1/tokens?all=true', headers: { cookie: adminCookie } });
    expect(all.json().tokens.map((t: { id: string }) => t.id)).toContain(id);
    // A token that is wrong in one character is nobody.
    const forged = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${forged}` } })).statusCode).toBe(401);
    // A bad token is not rescued by a good cookie.
    expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${forged}`, cookie: owen } })).statusCode).toBe(401);
    const revoked = await app.inject({ method: 'DELETE', url: `/api/v1/tokens/${id}`, headers: { authorization: `Bearer ${token}` } });
    expect(revoked.statusCode).toBe(204);
    await eventually(async () => {
      expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(401);
    });
    expect((await app.inject({ method: 'DELETE', url: `/api/v1/tokens/${id}`, headers: { cookie: owen } })).statusCode).toBe(404);
    await eventually(async () => {
      const audit = await app.inject({ method: 'GET', url: '/api/v1/audit?user=owen&limit=1000', headers: { cookie: adminCookie } });
      expect(audit.body).not.toContain(token.slice(21));
      expect(audit.json().entries.filter((e: { action: string }) => e.action.startsWith('token.')).map((e: { action: string; via: string }) => [e.action, e.via])).toEqual([['token.revoke', 'token'], ['token.create', 'session']]);
    });
  });

  it('a token revoked right after it was created is revoked (the console reads its own write)', async () => {
    for (let i = 0; i < 5; i += 1) {
      const created = await app.inject({ method: 'POST', url: '/api/v1/tokens', headers: { cookie: adminCookie }, payload: { name: `at once ${i}` } });
      expect(created.statusCode).toBe(201);
      const revoked = await app.inject({ method: 'DELETE', url: `/api/v1/tokens/${created.json().id as string}`, headers: { cookie: adminCookie } });
      expect(revoked.statusCode, revoked.body).toBe(204);
    }
  });

  it('refuses bad input with the field and the rule, and expires', async () => {
    const bad = await app.inject({ method: 'POST', url: '/api/v1/tokens', headers: { cookie: adminCookie }, payload: { name: '', expiresInDays: 0, colour: 'red' } });
    expect(bad.statusCode).toBe(400);
    expect([...new Set(bad.json().error.details.issues.map((i: { field: string }) => i.field))].sort()).toEqual(['colour', 'expiresInDays', 'name']);
    expect((await app.inject({ method: 'DELETE', url: '/api/v1/tokens/..%2F..', headers: { cookie: adminCookie } })).statusCode).toBe(400);
    const short = (await app.inject({ method: 'POST', url: '/api/v1/tokens', headers: { cookie: adminCookie }, payload: { name: 'one day', expiresInDays: 1 } })).json();
    await eventually(async () => expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${short.token}` } })).statusCode).toBe(200));
    now += 86_400_001;
    expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${short.token}` } })).statusCode).toBe(401);
    now -= 86_400_001;
  });
});

describe('users (admin)', () => {
  it('are created, updated with compare-and-set, and deleted (with their tokens); never the last admin', async () => {
    const created = await app.inject({ method: 'POST', url: '/api/v1/users', headers: { cookie: adminCookie }, payload: { name: 'dan', password: 'dan-password', roles: { shop: 'operator' } } });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toEqual({ name: 'dan', admin: false, roles: { shop: 'operator' }, createdAt: now, version: 0 });
    expect((await app.inject({ method: 'POST', url: '/api/v1/users', headers: { cookie: adminCookie }, payload: { name: 'dan', password: 'dan-password' } })).statusCode).toBe(409);
    const bad = await app.inject({ method: 'POST', url: '/api/v1/users', headers: { cookie: adminCookie }, payload: { name: '../x', password: 'short', roles: { shop: 'king' } } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.issues.map((i: { field: string }) => i.field)).toEqual(expect.arrayContaining(['name', 'password']));
    expect(bad.body).not.toContain('short"');
    const dan = cookieOf(await login('dan', 'dan-password'));
    const danToken = (await app.inject({ method: 'POST', url: '/api/v1/tokens', headers: { cookie: dan }, payload: { name: 'dan script' } })).json().token as string;
    // A non-admin may not manage users.
    expect((await app.inject({ method: 'GET', url: '/api/v1/users', headers: { cookie: dan } })).statusCode).toBe(403);
    const updated = await app.inject({ method: 'PUT', url: '/api/v1/users/dan', headers: { cookie: adminCookie }, payload: { version: 0, roles: { shop: 'viewer', bank: 'owner' }, password: 'dan-password-2' } });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toMatchObject({ roles: { shop: 'viewer', bank: 'owner' }, version: 1 });
    const stale = await app.inject({ method: 'PUT', url: '/api/v1/users/dan', headers: { cookie: adminCookie }, payload: { version: 0, admin: true } });
    expect(stale.statusCode).toBe(409);
    expect(stale.json().error.details).toMatchObject({ version: 1, current: { name: 'dan', roles: { bank: 'owner' } } });
    expect(stale.body).not.toContain('scrypt');
    // The new password ended dan's session; his token carries his new roles.
    await eventually(async () => {
      expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: dan } })).statusCode).toBe(401);
      expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${danToken}` } })).json().roles).toEqual({ shop: 'viewer', bank: 'owner' });
    });
    await eventually(async () => {
      const listed = await app.inject({ method: 'GET', url: '/api/v1/users', headers: { cookie: adminCookie } });
      expect(listed.json().users.map((u: { name: string }) => u.name)).toEqual(['admin', 'dan', 'owen', 'vera']);
      expect(listed.body).not.toContain('passwordHash');
    });
    expect((await app.inject({ method: 'DELETE', url: '/api/v1/users/admin', headers: { cookie: adminCookie } })).json().error).toMatchObject({ code: 'conflict', details: { rule: 'last-admin' } });
    expect((await app.inject({ method: 'DELETE', url: '/api/v1/users/dan', headers: { cookie: adminCookie } })).statusCode).toBe(204);
    expect((await app.inject({ method: 'DELETE', url: '/api/v1/users/dan', headers: { cookie: adminCookie } })).statusCode).toBe(404);
    await eventually(async () => {
      expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${danToken}` } })).statusCode).toBe(401);
    });
    // Recreated under the same name: the old token stays dead.
    await app.inject({ method: 'POST', url: '/api/v1/users', headers: { cookie: adminCookie }, payload: { name: 'dan', password: 'dan-password' } });
    expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${danToken}` } })).statusCode).toBe(401);
    await eventually(async () => expect(await auditActions()).toEqual(expect.arrayContaining(['user.create', 'user.update', 'user.delete'])));
    const audit = await app.inject({ method: 'GET', url: '/api/v1/audit?action=user.update', headers: { cookie: adminCookie } });
    const entry = audit.json().entries[0];
    expect(entry).toMatchObject({ user: 'admin', via: 'session', target: 'dan', before: { roles: { shop: 'operator' } }, after: { roles: { bank: 'owner' } }, details: { passwordChanged: true } });
    expect(audit.body).not.toContain('dan-password');
  });

  it('a user changes their own password with the current one, and stays signed in', async () => {
    const owen = cookieOf(await login('owen', 'owen-password'));
    const wrong = await app.inject({ method: 'POST', url: '/api/v1/auth/password', headers: { cookie: owen }, payload: { currentPassword: 'nope-nope', newPassword: 'owen-password-2' } });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json().error.details.issues[0].field).toBe('currentPassword');
    const changed = await app.inject({ method: 'POST', url: '/api/v1/auth/password', headers: { cookie: owen }, payload: { currentPassword: 'owen-password', newPassword: 'owen-password-2' } });
    expect(changed.statusCode, changed.body).toBe(204);
    const fresh = cookieOf(changed);
    await eventually(async () => {
      expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: owen } })).statusCode).toBe(401);
      expect((await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: fresh } })).statusCode).toBe(200);
    });
    expect((await login('owen', 'owen-password-2')).statusCode).toBe(200);
  });
});

describe('the audit log', () => {
  it('admins see all; a namespace owner sees their namespaces; others are refused', async () => {
    await app.inject({ method: 'POST', url: '/api/v1/namespaces', headers: { cookie: adminCookie }, payload: { name: 'shop' } });
    await app.inject({ method: 'POST', url: '/api/v1/namespaces', headers: { cookie: adminCookie }, payload: { name: 'bank' } });
    const owen = cookieOf(await login('owen', 'owen-password-2'));
    await eventually(async () => {
      const mine = await app.inject({ method: 'GET', url: '/api/v1/audit', headers: { cookie: owen } });
      expect(mine.statusCode).toBe(200);
      expect(mine.json().entries.map((e: { action: string; namespace: string }) => [e.action, e.namespace])).toEqual([['namespace.create', 'shop']]);
    });
    expect((await app.inject({ method: 'GET', url: '/api/v1/audit?namespace=bank', headers: { cookie: owen } })).statusCode).toBe(403);
    const vera = cookieOf(await login('vera', 'vera-password'));
    expect((await app.inject({ method: 'GET', url: '/api/v1/audit', headers: { cookie: vera } })).json().error).toMatchObject({ code: 'forbidden', details: { need: 'owner' } });
    const all = await app.inject({ method: 'GET', url: '/api/v1/audit?limit=2', headers: { cookie: adminCookie } });
    expect(all.json().entries).toHaveLength(2);
    const next = all.json().next;
    expect(next).toBeLessThan(all.json().entries[0].id);
    const older = await app.inject({ method: 'GET', url: `/api/v1/audit?limit=2&before=${next}`, headers: { cookie: adminCookie } });
    expect(older.json().entries[0].id).toBeLessThan(next);
    for (const q of ['limit=0', 'limit=1001', 'limit=1e3', 'before=-1', 'namespace=../x', 'colour=red']) {
      expect((await app.inject({ method: 'GET', url: `/api/v1/audit?${q}`, headers: { cookie: adminCookie } })).statusCode, q).toBe(400);
    }
    expect((await app.inject({ method: 'GET', url: '/api/v1/audit' })).statusCode).toBe(401);
  });
});
