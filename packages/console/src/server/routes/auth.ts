/**
 * `/api/v1/auth`: login (a session cookie), logout, who am I, and changing one's own password.
 * Login is rate-limited per client address (the route's limit) and per user name (failures).
 *
 * A successful login is audited; a failed one is not (it changes nothing, and anyone may try: a
 * flood of them would push real entries out of the bounded audit log). It is logged (`"login
 * failed"`, with the address and the name tried) and counted (`orrery_console_logins_failed_total`).
 */
import { Type } from '@sinclair/typebox';
import { OrreryError, hasErrorCode } from '@orrery/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleRoutes } from '../app.js';
import type { AuditEntry, ConsoleContext } from '../context.js';
import { accountsOf } from '../accounts.js';
import { LOGIN_ATTEMPTS_PER_MINUTE, SESSION_COOKIE, checkCredentials, createLoginLimiter, principalOf, signSession } from '../auth.js';
import { PASSWORD_MAX_LENGTH, changeOwnPassword, endSessions, type UserRecord } from '../../store/users.js';

const RolesSchema = Type.Record(Type.String(), Type.Union([Type.Literal('viewer'), Type.Literal('operator'), Type.Literal('owner')]));
/** The caller, as `/auth/me` and login answer. */
export const MeSchema = Type.Object({
  user: Type.String(),
  admin: Type.Boolean(),
  roles: RolesSchema,
  via: Type.Union([Type.Literal('session'), Type.Literal('token')]),
  /** When the session ends (epoch ms); absent for a token. */
  expiresAt: Type.Optional(Type.Integer()),
});

/** One message for every failed login: it says nothing about which part was wrong. */
const LOGIN_FAILED = 'wrong user name or password';

/** Sets the session cookie for `user` (httpOnly, SameSite=Strict; Secure over https). */
function setSessionCookie(ctx: ConsoleContext, request: FastifyRequest, reply: FastifyReply, user: string, record: UserRecord): number {
  const secret = accountsOf(ctx.cache).secret();
  if (!secret) throw new OrreryError('not-connected', 'the console has not read its session secret yet; try again in a moment');
  const expires = ctx.now() + ctx.sessionTtlMs;
  void reply.setCookie(SESSION_COOKIE, signSession(secret, { u: user, c: record.createdAt, e: record.sessionEpoch, x: expires }), {
    httpOnly: true,
    sameSite: 'strict',
    secure: request.protocol === 'https',
    path: '/',
    maxAge: Math.floor(ctx.sessionTtlMs / 1000),
  });
  return expires;
}

export const authRoutes: ConsoleRoutes = async (app, ctx) => {
  const limiter = createLoginLimiter();
  const loginsFailed = ctx.metrics.counter('orrery_console_logins_failed_total', 'Logins refused for a wrong user name or password (not audited: logged as "login failed")');
  const audit = (request: FastifyRequest, entry: AuditEntry): Promise<void> => ctx.audit.record(request, entry);

  app.post('/auth/login', {
    schema: {
      tags: ['auth'],
      summary: 'Sign in: sets the session cookie (httpOnly, SameSite=Strict). Rate-limited per address and per user',
      security: [],
      body: Type.Object({ user: Type.String({ minLength: 1, maxLength: 256 }), password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }) }, { additionalProperties: false }),
      response: { 200: MeSchema },
    },
    config: { access: { level: 'public' }, readsOwnWrites: false, rateLimit: { max: LOGIN_ATTEMPTS_PER_MINUTE, timeWindow: 60_000 } },
  }, async (request, reply) => {
    const { user, password } = request.body as { user: string; password: string };
    const wait = limiter.retryAfterSeconds(user, ctx.now());
    if (wait > 0) {
      void reply.header('retry-after', String(wait));
      throw new OrreryError('too-many-requests', `too many failed attempts; try again in ${wait} s`, { details: { retryAfterSeconds: wait } });
    }
    const record = await checkCredentials(ctx.cache, user, password);
    if (!record) {
      limiter.failed(user, ctx.now());
      loginsFailed.inc();
      ctx.logger.warn({ ip: request.ip, user, reqId: request.id }, 'login failed');
      throw new OrreryError('no-auth', LOGIN_FAILED);
    }
    limiter.succeeded(user);
    const expiresAt = setSessionCookie(ctx, request, reply, user, record);
    request.principal = principalOf(user, record, 'session');
    await audit(request, { action: 'auth.login' });
    return { user, admin: record.admin, roles: record.roles, via: 'session' as const, expiresAt };
  });

  app.post('/auth/logout', {
    schema: {
      tags: ['auth'],
      summary: 'Sign out: clears the session cookie; with ?everywhere=true also ends every session of the user on every console',
      querystring: Type.Object({ everywhere: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
      response: { 204: Type.Null() },
    },
    config: { access: { level: 'public' } },
  }, async (request, reply) => {
    const { everywhere } = request.query as { everywhere?: boolean };
    const principal = request.principal;
    if (everywhere && !principal) throw new OrreryError('no-auth', 'sign in first: ending every session needs to know whose');
    // Bumping the epoch is what a password change does to sessions, without the password.
    if (everywhere && principal) await endSessions(ctx.zk, principal.user, ctx.now());
    void reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'strict', secure: request.protocol === 'https' });
    if (principal) await audit(request, { action: everywhere ? 'auth.logout-everywhere' : 'auth.logout' });
    void reply.code(204);
  });

  app.get('/auth/me', {
    schema: { tags: ['auth'], summary: 'The caller: user, admin, roles per namespace', response: { 200: MeSchema } },
    config: { access: { level: 'user' } },
  }, async (request) => {
    const p = request.principal!;
    return { user: p.user, admin: p.admin, roles: { ...p.roles }, via: p.via };
  });

  app.post('/auth/password', {
    schema: {
      tags: ['auth'],
      summary: "Change one's own password (with the current one); every other session of the user ends",
      body: Type.Object({ currentPassword: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }), newPassword: Type.String({ maxLength: PASSWORD_MAX_LENGTH }) }, { additionalProperties: false }),
      response: { 204: Type.Null() },
    },
    config: { access: { level: 'user' }, rateLimit: { max: LOGIN_ATTEMPTS_PER_MINUTE, timeWindow: 60_000 } },
  }, async (request, reply) => {
    const principal = request.principal!;
    const { currentPassword, newPassword } = request.body as { currentPassword: string; newPassword: string };
    const wait = limiter.retryAfterSeconds(principal.user, ctx.now());
    if (wait > 0) throw new OrreryError('too-many-requests', `too many failed attempts; try again in ${wait} s`, { details: { retryAfterSeconds: wait } });
    let changed;
    try {
      changed = await changeOwnPassword(ctx.zk, principal.user, currentPassword, newPassword, ctx.now());
    } catch (error) {
      if (hasErrorCode(error, 'forbidden')) limiter.failed(principal.user, ctx.now());
      throw error;
    }
    await audit(request, { action: 'user.password', target: principal.user, details: { sessionsEnded: true } });
    // The caller's own session survives its password change: a fresh cookie at the new epoch.
    if (principal.via === 'session') setSessionCookie(ctx, request, reply, principal.user, changed.record);
    void reply.code(204);
  });
};
