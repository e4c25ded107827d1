/**
 * API tokens for automation (`/console/tokens/<id>`), and the session secret (`/console/secret`).
 *
 * What it guarantees:
 * - A token is `orr_<id>_<secret>` (16 hex digits of id, 32 random bytes of secret in base64url).
 *   Only its sha256 is stored, so the tree (or a backup of it) does not give a usable token; the
 *   whole token is shown once, to its creator.
 * - A token names its owner and the owner's `createdAt`: deleting the user kills it even if a user
 *   of the same name is created later.
 * - The session secret is created once (create-if-absent): every console signs and checks
 *   cookies with the same key, so a cookie from one console is good on every other.
 *
 * Not guaranteed: that a token can be used the instant it is created on another console (each
 * console sees it once its watch fires, normally within milliseconds).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import {
  OrreryError,
  TOKEN_ID_PATTERN,
  USER_NAME_PATTERN,
  checkWith,
  encodeJson,
  errorCode,
  hasErrorCode,
  paths,
  readJson,
  type CheckResult,
  type ZkClient,
} from '@orrery/core';

/** Most tokens one user may hold. */
export const TOKENS_PER_USER_MAX = 100;
/** Longest token label. */
export const TOKEN_NAME_MAX_LENGTH = 100;
/** Bytes of randomness in a token's secret part. */
const TOKEN_SECRET_BYTES = 32;
/** Bytes of randomness in the session secret. */
const SESSION_SECRET_BYTES = 32;

/** The whole token as sent in `Authorization: Bearer …`. */
const TOKEN_FORMAT = /^orr_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

/** The data of `paths.consoleToken(id)`. */
export const TokenRecordSchema = Type.Object({
  user: Type.String({ pattern: USER_NAME_PATTERN.source }),
  /** The owner's `createdAt` when the token was made (a recreated user does not inherit it). */
  userCreatedAt: Type.Integer({ minimum: 0 }),
  /** A label for people ("ci deploy"). */
  name: Type.String({ minLength: 1, maxLength: TOKEN_NAME_MAX_LENGTH }),
  /** sha256 of the whole token, hex. */
  hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  createdAt: Type.Integer({ minimum: 0 }),
  /** Epoch ms after which it is refused; null: never. */
  expiresAt: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { default: null }),
}, { additionalProperties: false });
/** A stored token. */
export type TokenRecord = Static<typeof TokenRecordSchema>;

/** A token as answers show it (never its hash or secret). */
export interface TokenView {
  id: string;
  user: string;
  name: string;
  createdAt: number;
  expiresAt: number | null;
}

/** Validates a stored token record. */
export function checkTokenRecord(input: unknown): CheckResult<TokenRecord> {
  return checkWith<TokenRecord>(TokenRecordSchema, input, 'token record');
}

/** The public view of a token. */
export function tokenView(id: string, record: TokenRecord): TokenView {
  return { id, user: record.user, name: record.name, createdAt: record.createdAt, expiresAt: record.expiresAt };
}

/** sha256 of a token, hex (what is stored). */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A fresh token and its id. */
export function generateToken(): { id: string; token: string } {
  const id = randomBytes(8).toString('hex');
  return { id, token: `orr_${id}_${randomBytes(TOKEN_SECRET_BYTES).toString('base64url')}` };
}

/** The id a token names, or undefined when it is not of the token's form. */
export function tokenIdOf(token: string): string | undefined {
  const m = TOKEN_FORMAT.exec(token);
  return m ? m[1] : undefined;
}

/** True when `token` hashes to `hash` (constant-time compare). */
export function tokenMatches(token: string, hash: string): boolean {
  const a = Buffer.from(hashToken(token), 'hex');
  const b = Buffer.from(hash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Every token (id and record) in ZooKeeper; broken nodes skipped. */
export async function listTokens(zk: ZkClient): Promise<Array<{ id: string; record: TokenRecord }>> {
  let ids: string[];
  try {
    ids = await zk.getChildren(paths.consoleTokens());
  } catch (error) {
    if (hasErrorCode(error, 'no-node')) return [];
    throw error;
  }
  const out: Array<{ id: string; record: TokenRecord }> = [];
  for (const id of ids.filter((i) => TOKEN_ID_PATTERN.test(i)).sort()) {
    const read = await readJson(zk, paths.consoleToken(id), checkTokenRecord).catch((error: unknown) => {
      if (hasErrorCode(error, 'bad-data')) return undefined;
      throw error;
    });
    if (read) out.push({ id, record: read.value });
  }
  return out;
}

/**
 * Creates a token for `user` (whose `createdAt` is `userCreatedAt`); resolves the whole token —
 * the only time it exists outside the caller's hands — and its view.
 */
export async function createToken(
  zk: ZkClient,
  input: { user: string; userCreatedAt: number; name: string; expiresAt: number | null },
  now: number,
): Promise<{ token: string; view: TokenView }> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const { id, token } = generateToken();
    const record: TokenRecord = { user: input.user, userCreatedAt: input.userCreatedAt, name: input.name, hash: hashToken(token), createdAt: now, expiresAt: input.expiresAt };
    const checked = checkTokenRecord(record);
    if (!checked.ok) throw new OrreryError('validation', checked.issues.map((i) => i.message).join('; '), { details: { issues: checked.issues } });
    await zk.mkdirp(paths.consoleTokens());
    try {
      await zk.create(paths.consoleToken(id), encodeJson(record));
      return { token, view: tokenView(id, record) };
    } catch (error) {
      if (!hasErrorCode(error, 'node-exists')) throw error; // 2^64 ids: a clash is a fluke; draw again
    }
  }
  throw new OrreryError('internal', 'could not draw a free token id');
}

/**
 * Reads one token from ZooKeeper (not the cache: a token created a moment ago through this very
 * console may not have reached the cache yet); undefined when it is not there or unreadable.
 */
export async function readToken(zk: ZkClient, id: string): Promise<TokenRecord | undefined> {
  if (!TOKEN_ID_PATTERN.test(id)) return undefined;
  const read = await readJson(zk, paths.consoleToken(id), checkTokenRecord).catch((error: unknown) => {
    if (hasErrorCode(error, 'bad-data')) return undefined;
    throw error;
  });
  return read?.value;
}

/** Deletes a token; `not-found` when it is not there. Resolves the record it held. */
export async function deleteToken(zk: ZkClient, id: string): Promise<TokenRecord> {
  if (!TOKEN_ID_PATTERN.test(id)) throw new OrreryError('not-found', `token '${id}' does not exist`, { details: { token: id } });
  const read = await readJson(zk, paths.consoleToken(id), checkTokenRecord).catch((error: unknown) => {
    if (hasErrorCode(error, 'bad-data')) return undefined;
    throw error;
  });
  try {
    await zk.delete(paths.consoleToken(id));
  } catch (error) {
    if (errorCode(error) === 'no-node') throw new OrreryError('not-found', `token '${id}' does not exist`, { details: { token: id } });
    throw error;
  }
  return read?.value ?? { user: '', userCreatedAt: 0, name: '(unreadable)', hash: '0'.repeat(64), createdAt: 0, expiresAt: null };
}

/** Deletes every token of `user` (after the user is deleted); resolves their ids. */
export async function deleteUserTokens(zk: ZkClient, user: string): Promise<string[]> {
  const ids: string[] = [];
  for (const { id, record } of await listTokens(zk)) {
    if (record.user !== user) continue;
    try {
      await zk.delete(paths.consoleToken(id));
      ids.push(id);
    } catch (error) {
      if (!hasErrorCode(error, 'no-node')) throw error;
    }
  }
  return ids;
}

/** The data of `paths.consoleSecret()`. */
export const SessionSecretSchema = Type.Object({
  /** base64 of {@link SESSION_SECRET_BYTES} random bytes. */
  key: Type.String({ minLength: 40, maxLength: 200 }),
  createdAt: Type.Integer({ minimum: 0 }),
}, { additionalProperties: false });
/** The stored session secret. */
export type SessionSecret = Static<typeof SessionSecretSchema>;

/** Validates the stored session secret. */
export function checkSessionSecret(input: unknown): CheckResult<SessionSecret> {
  return checkWith<SessionSecret>(SessionSecretSchema, input, 'session secret');
}

/** Creates the session secret unless it exists (whoever creates it first wins); resolves whether this call did. */
export async function ensureSessionSecret(zk: ZkClient, now: number): Promise<boolean> {
  await zk.mkdirp(paths.console());
  const secret: SessionSecret = { key: randomBytes(SESSION_SECRET_BYTES).toString('base64'), createdAt: now };
  try {
    await zk.create(paths.consoleSecret(), encodeJson(secret));
    return true;
  } catch (error) {
    if (hasErrorCode(error, 'node-exists')) return false;
    throw error;
  }
}
