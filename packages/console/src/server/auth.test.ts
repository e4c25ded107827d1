// Pure rules of authentication: session cookies (signing, expiry, tampering), token form and
// hashing, the bearer header, the per-user login limiter; and scrypt password hashes.
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { bearerOf, createLoginLimiter, signSession, verifySession, type SessionClaims } from './auth.js';
import { generateToken, hashToken, tokenIdOf, tokenMatches } from '../store/tokens.js';
import { hashPassword, verifyPassword } from '../store/users.js';

const secret = randomBytes(32);
const claims: SessionClaims = { u: 'ann', c: 1000, e: 2, x: 10_000 };

describe('session cookies', () => {
  it('verify what they signed until they expire', () => {
    const cookie = signSession(secret, claims);
    expect(cookie).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(verifySession(secret, cookie, 9_999)).toEqual(claims);
    expect(verifySession(secret, cookie, 10_000)).toBeUndefined();
    expect(verifySession(secret, cookie, 20_000)).toBeUndefined();
  });

  it('refuse another secret, a changed payload or MAC, and junk', () => {
    const cookie = signSession(secret, claims);
    const [v, payload, mac] = cookie.split('.') as [string, string, string];
    expect(verifySession(randomBytes(32), cookie, 0)).toBeUndefined();
    const forged = Buffer.from(JSON.stringify({ ...claims, u: 'root' })).toString('base64url');
    expect(verifySession(secret, `${v}.${forged}.${mac}`, 0)).toBeUndefined();
    const longer = Buffer.from(JSON.stringify({ ...claims, x: 99_999_999 })).toString('base64url');
    expect(verifySession(secret, `${v}.${longer}.${mac}`, 0)).toBeUndefined();
    const flipped = mac.slice(0, -2) + (mac.at(-2) === 'A' ? 'B' : 'A') + mac.at(-1);
    expect(verifySession(secret, `${v}.${payload}.${flipped}`, 0)).toBeUndefined();
    for (const junk of ['', 'v1', 'v1..', `v2.${payload}.${mac}`, `${cookie}.x`, 'x'.repeat(5000), `v1.${payload}.`]) {
      expect(verifySession(secret, junk, 0)).toBeUndefined();
    }
  });

  it('never accept a value it did not sign (property)', () => {
    fc.assert(fc.property(fc.string({ maxLength: 300 }), (value) => verifySession(secret, value, 0) === undefined));
  });

  it('refuse a well-signed payload that is not a session', () => {
    const payload = Buffer.from(JSON.stringify({ u: 'ann' })).toString('base64url');
    const mac = createHmac('sha256', secret).update(`orrery-session:${payload}`).digest('base64url');
    expect(verifySession(secret, `v1.${payload}.${mac}`, 0)).toBeUndefined();
  });
});

describe('API tokens', () => {
  it('are orr_<id>_<secret>, stored as sha256, matched in constant time', () => {
    const { id, token } = generateToken();
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(token).toMatch(new RegExp(`^orr_${id}_[A-Za-z0-9_-]{43}$`));
    expect(tokenIdOf(token)).toBe(id);
    const hash = hashToken(token);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain(token.slice(21));
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(tokenMatches(token, hash)).toBe(true);
    expect(tokenMatches(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, hash)).toBe(false);
    expect(tokenMatches(token, 'zz')).toBe(false);
    expect(generateToken().token).not.toBe(token);
  });

  it('ids are read only from the exact form', () => {
    for (const bad of ['', 'orr_', 'orr_0123456789abcdef_short', 'ORR_0123456789abcdef_' + 'a'.repeat(43), 'orr_0123456789ABCDEF_' + 'a'.repeat(43), `orr_0123456789abcdef_${'a'.repeat(43)} `]) {
      expect(tokenIdOf(bad)).toBeUndefined();
    }
  });

  it('the bearer scheme is read in any case', () => {
    expect(bearerOf('Bearer abc')).toBe('abc');
    expect(bearerOf('bearer abc')).toBe('abc');
    expect(bearerOf('BEARER\tabc ')).toBe('abc');
    for (const bad of [undefined, '', 'Bearer', 'Bearer ', 'Basic abc', 'Bearer a b', `Bearer ${'a'.repeat(2000)}`]) expect(bearerOf(bad)).toBeUndefined();
  });
});

describe('the login limiter', () => {
  it('refuses a user after too many failures in the window, names the wait, forgets on success', () => {
    const limiter = createLoginLimiter(3, 60_000);
    expect(limiter.retryAfterSeconds('ann', 0)).toBe(0);
    limiter.failed('ann', 0);
    limiter.failed('ann', 10_000);
    expect(limiter.retryAfterSeconds('ann', 10_000)).toBe(0);
    limiter.failed('ann', 20_000);
    expect(limiter.retryAfterSeconds('ann', 20_000)).toBe(40);
    expect(limiter.retryAfterSeconds('bob', 20_000)).toBe(0);
    expect(limiter.retryAfterSeconds('ann', 60_001)).toBe(0); // the first failure left the window
    limiter.failed('ann', 60_001);
    expect(limiter.retryAfterSeconds('ann', 60_001)).toBeGreaterThan(0);
    limiter.succeeded('ann');
    expect(limiter.retryAfterSeconds('ann', 60_001)).toBe(0);
  });
});

describe('password hashes (scrypt)', () => {
  it('verify the password they were made from, with their own salt and parameters', async () => {
    const hash = await hashPassword('correct horse');
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    expect(hash).not.toContain('correct horse');
    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('correct horsf', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
    expect(await hashPassword('correct horse')).not.toBe(hash); // a fresh salt each time
  });

  it('check old hashes by their own parameters, and treat malformed or abusive ones as a mismatch', async () => {
    const { scryptSync } = await import('node:crypto');
    const salt = randomBytes(16);
    const key = scryptSync('pw-of-old', salt, 32, { N: 1024, r: 8, p: 1 });
    const old = `scrypt$1024$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`;
    expect(await verifyPassword('pw-of-old', old)).toBe(true);
    for (const bad of ['', 'plain', 'scrypt$1000$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA', `scrypt$${1 << 22}$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`, 'scrypt$1024$99$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA']) {
      expect(await verifyPassword('pw-of-old', bad)).toBe(false);
    }
  });
});
