/**
 * Who is calling: session cookies for the UI, API tokens for automation.
 *
 * What it guarantees:
 * - **Stateless sessions, good on every console**: the cookie is `v1.<claims>.<mac>`, an
 *   HMAC-SHA256 over `{user, createdAt, sessionEpoch, expires}` with the secret every console reads
 *   from ZooKeeper (`/console/secret`). Nothing is stored per session; a cookie is refused once it
 *   expires, once the user's password changes (the epoch moves), or once the user is deleted (even
 *   if recreated: `createdAt` differs). Checked in constant time.
 * - **Tokens** (`Authorization: Bearer orr_…`, scheme in any case) authenticate as their owner with
 *   the owner's roles as they are now; revoking one takes effect as soon as each console's watch
 *   sees the delete.
 * - **No ZooKeeper round trip**: every check reads the watch-fed cache (users, tokens, secret).
 * - Login checks cost the same whether the user exists or not (scrypt against a dummy hash) and
 *   fail with one message; failures are limited per user ({@link createLoginLimiter}) on top of
 *   the route's limit per address.
 *
 * Not guaranteed: that a session can be ended on its own before it expires — logout clears the
 * cookie in the browser; a copied cookie stays good until it expires or the password changes
 * (`POST /auth/logout` with `{everywhere: true}` bumps the epoch and ends every session).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Principal } from './access.js';
import type { Authenticator } from './context.js';
import type { ConsoleCache } from './console-cache.js';
import { accountsOf } from './accounts.js';
import { tokenIdOf, tokenMatches } from '../store/tokens.js';
import { unknownUserHash, verifyPassword, type UserRecord } from '../store/users.js';

/** The session cookie's name. */
export const SESSION_COOKIE = 'orrery_session';
/** Longest cookie or bearer value looked at (anything longer is refused unread). */
const CREDENTIAL_MAX_LENGTH = 1024;

/** What a session cookie says. */
export interface SessionClaims {
  /** The user. */
  u: string;
  /** The user's `createdAt`. */
  c: number;
  /** The user's `sessionEpoch` at login. */
  e: number;
  /** Expiry, epoch ms. */
  x: number;
}

const mac = (secret: Buffer, payload: string): Buffer => createHmac('sha256', secret).update(`orrery-session:${payload}`).digest();

/** Signs session claims into a cookie value (pure). */
export function signSession(secret: Buffer, claims: SessionClaims): string {
  const payload = Buffer.from(JSON.stringify({ u: claims.u, c: claims.c, e: claims.e, x: claims.x })).toString('base64url');
  return `v1.${payload}.${mac(secret, payload).toString('base64url')}`;
}

/**
 * The claims of a cookie value when its MAC is right and it has not expired at `now` (pure);
 * undefined for anything else — tampered, truncated, expired, or not a cookie of ours.
 */
export function verifySession(secret: Buffer, value: string, now: number): SessionClaims | undefined {
  if (typeof value !== 'string' || value.length > CREDENTIAL_MAX_LENGTH) return undefined;
  const parts = value.split('.');
  if (parts.length !== 3 || parts[0] !== 'v1') return undefined;
  const [, payload, sent] = parts as [string, string, string];
  const expected = mac(secret, payload);
  const given = Buffer.from(sent, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const c = claims as Partial<SessionClaims> | null;
  if (!c || typeof c.u !== 'string' || !Number.isSafeInteger(c.c) || !Number.isSafeInteger(c.e) || !Number.isSafeInteger(c.x)) return undefined;
  if (c.x! <= now) return undefined;
  return { u: c.u, c: c.c!, e: c.e!, x: c.x! };
}

/** The principal of a user record. */
export function principalOf(name: string, record: UserRecord, via: 'session' | 'token', tokenId?: string): Principal {
  return { user: name, admin: record.admin, roles: { ...record.roles }, via, ...(tokenId !== undefined ? { tokenId } : {}) };
}

/** The bearer token of an `Authorization` header (scheme in any case), or undefined. */
export function bearerOf(header: string | undefined): string | undefined {
  if (typeof header !== 'string' || header.length > CREDENTIAL_MAX_LENGTH) return undefined;
  const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m ? m[1] : undefined;
}

/** Options of {@link createAuthenticator}. */
export interface AuthenticatorOptions {
  cache: ConsoleCache;
  now: () => number;
}

/** The console's authenticator: the session cookie or the bearer token, read from the cache only. */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const accounts = accountsOf(options.cache);
  return {
    async authenticate(request: FastifyRequest): Promise<Principal | undefined> {
      const authorization = request.headers.authorization;
      // A request that sends a token is judged by the token alone (a bad one is not rescued by a cookie).
      if (authorization !== undefined) {
        const token = bearerOf(authorization);
        const id = token === undefined ? undefined : tokenIdOf(token);
        if (token === undefined || id === undefined) return undefined;
        const record = accounts.token(id);
        if (!record || !tokenMatches(token, record.hash)) return undefined;
        if (record.expiresAt !== null && record.expiresAt <= options.now()) return undefined;
        const owner = accounts.user(record.user);
        if (!owner || owner.record.createdAt !== record.userCreatedAt) return undefined;
        return principalOf(record.user, owner.record, 'token', id);
      }
      const cookie = (request.cookies as Record<string, string | undefined> | undefined)?.[SESSION_COOKIE];
      if (cookie === undefined) return undefined;
      const secret = accounts.secret();
      if (!secret) return undefined;
      const claims = verifySession(secret, cookie, options.now());
      if (!claims) return undefined;
      const user = accounts.user(claims.u);
      if (!user || user.record.createdAt !== claims.c || user.record.sessionEpoch !== claims.e) return undefined;
      return principalOf(claims.u, user.record, 'session');
    },
  };
}

/**
 * Checks a name and password against the cache (same cost whether the user exists or not):
 * the user's record when both are right, else undefined.
 */
export async function checkCredentials(cache: ConsoleCache, user: string, password: string): Promise<UserRecord | undefined> {
  const found = accountsOf(cache).user(user);
  const ok = await verifyPassword(password, found?.record.passwordHash ?? (await unknownUserHash()));
  return ok && found ? found.record : undefined;
}

/** Failed logins allowed per user name within {@link LOGIN_FAILURE_WINDOW_MS} (per console). */
export const LOGIN_FAILURES_MAX = 10;
/** The window of {@link LOGIN_FAILURES_MAX}, in ms. */
export const LOGIN_FAILURE_WINDOW_MS = 15 * 60_000;
/** Login attempts allowed per client address per minute (the route's rate limit, per console). */
export const LOGIN_ATTEMPTS_PER_MINUTE = 30;
/** Most user names tracked at once (the oldest are forgotten first): bounded memory under a spray. */
const LOGIN_TRACKED_MAX = 10_000;

/** Counts failed logins per user name over a sliding window (clock passed in; pure state). */
export interface LoginLimiter {
  /** Seconds until `user` may try again, or 0 when they may now. */
  retryAfterSeconds(user: string, now: number): number;
  failed(user: string, now: number): void;
  succeeded(user: string): void;
}

/** Creates a {@link LoginLimiter}. */
export function createLoginLimiter(max = LOGIN_FAILURES_MAX, windowMs = LOGIN_FAILURE_WINDOW_MS): LoginLimiter {
  const failures = new Map<string, number[]>();
  const recent = (user: string, now: number): number[] => (failures.get(user) ?? []).filter((t) => t > now - windowMs);
  return {
    retryAfterSeconds(user, now) {
      const times = recent(user, now);
      if (times.length < max) return 0;
      return Math.max(1, Math.ceil((times[times.length - max]! + windowMs - now) / 1000));
    },
    failed(user, now) {
      const times = recent(user, now);
      times.push(now);
      failures.delete(user);
      failures.set(user, times.slice(-max));
      if (failures.size > LOGIN_TRACKED_MAX) failures.delete(failures.keys().next().value!);
    },
    succeeded(user) {
      failures.delete(user);
    },
  };
}
