/**
 * Console users in ZooKeeper (`/console/users/<name>`): scrypt password hashes, the admin flag,
 * roles per namespace and a session epoch.
 *
 * What it guarantees:
 * - A password is stored only as an scrypt hash (node:crypto) with its own random salt and its
 *   parameters (`scrypt$N$r$p$salt$hash`), so the cost can be raised later without breaking old
 *   hashes; checking one compares in constant time. Nothing here logs or returns a password.
 * - Every write is a versioned compare-and-set (`conflict` with the current version, read again
 *   after the failed set, when someone changed the user since), or a create that fails with
 *   `already-exists`.
 * - Changing a password bumps `sessionEpoch`: every session cookie issued before dies at once, on
 *   every console (cookies carry the epoch they were issued at).
 * - The first admin is created at most once, whatever number of consoles start at the same time
 *   (create-if-absent: ZooKeeper lets exactly one create of the node succeed).
 *
 * Not guaranteed: that two admins demoting or deleting each other at the same instant leave an
 * admin (the last-admin rule reads the users, then writes one of them; ZooKeeper has no
 * multi-node compare-and-set here). The first admin's password from the environment can always
 * recreate one: delete every user node and restart a console.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import {
  NODE_NAME_PATTERN,
  OrreryError,
  USER_NAME_PATTERN,
  checkWith,
  encodeJson,
  errorCode,
  hasErrorCode,
  paths,
  readJson,
  validationError,
  type CheckResult,
  type ZkClient,
} from '@orrery/core';
import { NAMESPACE_ROLES, type NamespaceRole } from './roles.js';

/** scrypt's CPU/memory cost N for new hashes (16 MiB of memory with r = 8; about 50 ms). */
export const SCRYPT_N = 16_384;
/** scrypt's block size r for new hashes. */
export const SCRYPT_R = 8;
/** scrypt's parallelism p for new hashes. */
export const SCRYPT_P = 1;
/** Bytes of random salt in a new hash. */
export const SCRYPT_SALT_BYTES = 16;
/** Bytes of derived key in a new hash. */
export const SCRYPT_KEY_BYTES = 32;
/** Largest N accepted from a stored hash (a tampered node must not make a check cost a gigabyte). */
const SCRYPT_N_MAX = 1 << 20;
/** Shortest password accepted. */
export const PASSWORD_MIN_LENGTH = 8;
/** Longest password accepted (bounds the work of one check). */
export const PASSWORD_MAX_LENGTH = 256;
/** Most namespaces one user can hold a role in. */
export const USER_ROLES_MAX = 1000;
/** The first admin's name. */
export const FIRST_ADMIN_NAME = 'admin';

const RoleSchema = Type.Union(NAMESPACE_ROLES.map((r) => Type.Literal(r)), { description: 'viewer ⊂ operator ⊂ owner' });
/** Roles by namespace. */
export const UserRolesSchema = Type.Record(Type.String({ pattern: NODE_NAME_PATTERN.source }), RoleSchema, { maxProperties: USER_ROLES_MAX, description: 'namespace → role' });

/** The data of `paths.consoleUser(name)`. */
export const UserRecordSchema = Type.Object({
  /** `scrypt$N$r$p$salt$hash` (base64url salt and key). */
  passwordHash: Type.String({ minLength: 1, maxLength: 512 }),
  admin: Type.Boolean({ default: false }),
  roles: Type.Record(Type.String({ pattern: NODE_NAME_PATTERN.source }), RoleSchema, { maxProperties: USER_ROLES_MAX, default: {} }),
  /** Bumped by every password change: sessions issued at an older epoch are refused. */
  sessionEpoch: Type.Integer({ minimum: 0, default: 0 }),
  /** Epoch ms; tokens and sessions name it, so a user deleted and created again starts clean. */
  createdAt: Type.Integer({ minimum: 0 }),
  updatedAt: Type.Optional(Type.Integer({ minimum: 0 })),
}, { additionalProperties: false });
/** A stored user. */
export type UserRecord = Static<typeof UserRecordSchema> & { roles: Record<string, NamespaceRole> };

/** A user as answers show it (never the hash). */
export interface UserView {
  name: string;
  admin: boolean;
  roles: Record<string, NamespaceRole>;
  createdAt: number;
  updatedAt?: number;
  /** The node version, for a compare-and-set update. */
  version: number;
}

/** Validates a stored user record. */
export function checkUserRecord(input: unknown): CheckResult<UserRecord> {
  return checkWith<UserRecord>(UserRecordSchema, input, 'user record');
}

/** The public view of a user. */
export function userView(name: string, record: UserRecord, version: number): UserView {
  return { name, admin: record.admin, roles: { ...record.roles }, createdAt: record.createdAt, ...(record.updatedAt !== undefined ? { updatedAt: record.updatedAt } : {}), version };
}

/** Throws a `validation` error naming the rule unless `name` is a valid user name. */
export function assertUserName(name: string, field = 'name'): void {
  if (typeof name !== 'string' || !USER_NAME_PATTERN.test(name)) {
    throw validationError([{ field, rule: 'pattern', message: `${field}: a user name is letters, digits, '.', '_' and '-', 1 to 64 characters, not '.' or '..'` }], 'user');
  }
}

/** Throws a `validation` error naming the rule unless `password` is acceptable (never quoted back). */
export function assertPassword(password: string, field = 'password'): void {
  if (typeof password !== 'string' || password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
    throw validationError([{ field, rule: 'length', message: `${field}: must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters` }], 'user');
  }
}

/** Throws a `validation` error unless every key is a namespace name and every value a role. */
export function assertRoles(roles: Record<string, unknown>, field = 'roles'): asserts roles is Record<string, NamespaceRole> {
  const issues = Object.entries(roles).flatMap(([ns, role]) => {
    const out = [];
    if (!NODE_NAME_PATTERN.test(ns)) out.push({ field: `${field}.${ns}`, rule: 'pattern', message: `${field}.${ns}: a namespace name is letters, digits, '.', '_' and '-', 1 to 128` });
    if (!(NAMESPACE_ROLES as readonly unknown[]).includes(role)) out.push({ field: `${field}.${ns}`, rule: 'one-of', message: `${field}.${ns}: must be ${NAMESPACE_ROLES.join(', ')}` });
    return out;
  });
  if (Object.keys(roles).length > USER_ROLES_MAX) issues.push({ field, rule: 'max-properties', message: `${field}: at most ${USER_ROLES_MAX} namespaces` });
  if (issues.length > 0) throw validationError(issues, 'user');
}

function derive(password: string, salt: Buffer, keyBytes: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, keyBytes, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** scrypt's memory for N and r, with room to spare (node refuses more than `maxmem`). */
const maxmem = (N: number, r: number): number => 128 * N * r * 2;

/** Hashes a password with a fresh salt: `scrypt$N$r$p$salt$hash`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SCRYPT_SALT_BYTES);
  const key = await derive(password, salt, SCRYPT_KEY_BYTES, { N: SCRYPT_N, r: SCRYPT_R, p: SCRYPT_P, maxmem: maxmem(SCRYPT_N, SCRYPT_R) });
  return ['scrypt', SCRYPT_N, SCRYPT_R, SCRYPT_P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

const HASH_FORMAT = /^scrypt\$(\d{1,8})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9_-]{16,128})\$([A-Za-z0-9_-]{16,256})$/;

/**
 * True when `password` matches `hash` (constant-time compare). A malformed hash, or parameters
 * beyond the bounds (N a power of two ≤ 2^20, r ≤ 32, p ≤ 16), is a mismatch, never an exception.
 */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  const m = HASH_FORMAT.exec(hash);
  if (!m || typeof password !== 'string') return false;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (N < 2 || N > SCRYPT_N_MAX || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) return false;
  const expected = Buffer.from(m[5]!, 'base64url');
  try {
    const actual = await derive(password, Buffer.from(m[4]!, 'base64url'), expected.length, { N, r, p, maxmem: maxmem(N, r) });
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;
/** A hash no password matches, to spend the same time on an unknown user as on a wrong password. */
export function unknownUserHash(): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(32).toString('base64url'));
  return dummyHash;
}

/** A password for the first admin when none is given: 24 characters of base64url (144 bits). */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

function notFound(name: string): OrreryError {
  return new OrreryError('not-found', `user '${name}' does not exist`, { details: { user: name } });
}

/** Reads one user from ZooKeeper (undefined when absent). */
export async function readUser(zk: ZkClient, name: string): Promise<{ record: UserRecord; version: number } | undefined> {
  assertUserName(name);
  const read = await readJson(zk, paths.consoleUser(name), checkUserRecord);
  return read ? { record: read.value, version: read.stat.version } : undefined;
}

/** Every user, sorted by name, read from ZooKeeper (a broken node is skipped). */
export async function listUsers(zk: ZkClient): Promise<UserView[]> {
  let names: string[];
  try {
    names = await zk.getChildren(paths.consoleUsers());
  } catch (error) {
    if (hasErrorCode(error, 'no-node')) return [];
    throw error;
  }
  const out: UserView[] = [];
  for (const name of names.filter((n) => USER_NAME_PATTERN.test(n)).sort()) {
    const read = await readJson(zk, paths.consoleUser(name), checkUserRecord).catch((error: unknown) => {
      if (hasErrorCode(error, 'bad-data')) return undefined;
      throw error;
    });
    if (read) out.push(userView(name, read.value, read.stat.version));
  }
  return out;
}

/** What a new user gets. */
export interface NewUser {
  name: string;
  password: string;
  admin?: boolean;
  roles?: Record<string, NamespaceRole>;
}

/** Creates a user; `already-exists` when the name is taken. */
export async function createUser(zk: ZkClient, input: NewUser, now: number): Promise<UserView> {
  assertUserName(input.name);
  assertPassword(input.password);
  const roles = input.roles ?? {};
  assertRoles(roles);
  const record: UserRecord = { passwordHash: await hashPassword(input.password), admin: input.admin === true, roles: { ...roles }, sessionEpoch: 0, createdAt: now };
  await zk.mkdirp(paths.consoleUsers());
  try {
    await zk.create(paths.consoleUser(input.name), encodeJson(record));
  } catch (error) {
    if (hasErrorCode(error, 'node-exists')) throw new OrreryError('already-exists', `user '${input.name}' already exists`, { details: { user: input.name } });
    throw error;
  }
  return userView(input.name, record, 0);
}

/** A change to a user (absent fields keep their value). */
export interface UserChange {
  admin?: boolean;
  roles?: Record<string, NamespaceRole>;
  /** A new password: bumps the session epoch (every session of the user ends). */
  password?: string;
}

/**
 * Changes a user with a compare-and-set from `version` (the version it was read at): `conflict`
 * with the current version when it changed since, `not-found` when it is gone. Taking the admin
 * flag from the last admin is refused (`conflict`). Resolves the user before and after.
 */
export async function updateUser(zk: ZkClient, name: string, change: UserChange, version: number, now: number): Promise<{ before: UserView; after: UserView; record: UserRecord; passwordChanged: boolean }> {
  assertUserName(name);
  if (change.password !== undefined) assertPassword(change.password);
  if (change.roles !== undefined) assertRoles(change.roles);
  const current = await readUser(zk, name);
  if (!current) throw notFound(name);
  if (current.record.admin && change.admin === false) await assertNotLastAdmin(zk, name, 'take the admin role from');
  const next: UserRecord = {
    ...current.record,
    ...(change.admin !== undefined ? { admin: change.admin } : {}),
    ...(change.roles !== undefined ? { roles: { ...change.roles } } : {}),
    ...(change.password !== undefined ? { passwordHash: await hashPassword(change.password), sessionEpoch: current.record.sessionEpoch + 1 } : {}),
    updatedAt: now,
  };
  try {
    const stat = await zk.set(paths.consoleUser(name), encodeJson(next), version);
    return { before: userView(name, current.record, current.version), after: userView(name, next, stat.version), record: next, passwordChanged: change.password !== undefined };
  } catch (error) {
    const code = errorCode(error);
    if (code === 'bad-version') throw await staleUserError(zk, name, version);
    if (code === 'no-node') throw notFound(name);
    throw error;
  }
}

/**
 * The `conflict` of a compare-and-set on a user that failed with `bad-version`: the user as it is
 * now, read again — the read before the set may itself be older than the write that won.
 * `not-found` when the user is gone meanwhile.
 */
async function staleUserError(zk: ZkClient, name: string, version: number | undefined): Promise<OrreryError> {
  const latest = await readUser(zk, name);
  if (!latest) return notFound(name);
  const since = version === undefined ? '' : ` since version ${version}`;
  return new OrreryError('conflict', `user '${name}' was changed by someone else${since} (it is at version ${latest.version}); reload and try again`, {
    details: { user: name, version: latest.version, current: userView(name, latest.record, latest.version) },
  });
}

/**
 * Changes a user's own password after checking the current one (`forbidden` when it is wrong):
 * a read-modify-write with compare-and-set, retried once on a concurrent change.
 */
export async function changeOwnPassword(zk: ZkClient, name: string, currentPassword: string, newPassword: string, now: number): Promise<{ view: UserView; record: UserRecord }> {
  assertPassword(newPassword, 'newPassword');
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const current = await readUser(zk, name);
    if (!current) throw notFound(name);
    if (!(await verifyPassword(currentPassword, current.record.passwordHash))) {
      throw new OrreryError('forbidden', 'the current password is not right', { details: { issues: [{ field: 'currentPassword', rule: 'match', message: 'currentPassword: is not right' }] } });
    }
    try {
      const { after, record } = await updateUser(zk, name, { password: newPassword }, current.version, now);
      return { view: after, record };
    } catch (error) {
      if (!hasErrorCode(error, 'conflict') || attempt > 0) throw error;
    }
  }
  throw new OrreryError('conflict', `user '${name}' kept changing; try again`, { details: { user: name } });
}

/**
 * Ends every session of a user on every console (bumps `sessionEpoch` with a compare-and-set,
 * retried on a concurrent change); the password stays. `not-found` when the user is gone.
 */
export async function endSessions(zk: ZkClient, name: string, now: number): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const current = await readUser(zk, name);
    if (!current) throw notFound(name);
    const next: UserRecord = { ...current.record, sessionEpoch: current.record.sessionEpoch + 1, updatedAt: now };
    try {
      await zk.set(paths.consoleUser(name), encodeJson(next), current.version);
      return;
    } catch (error) {
      if (!hasErrorCode(error, 'bad-version')) throw error;
    }
  }
  throw new OrreryError('conflict', `user '${name}' kept changing; try again`, { details: { user: name } });
}

async function assertNotLastAdmin(zk: ZkClient, name: string, what: string): Promise<void> {
  const admins = (await listUsers(zk)).filter((u) => u.admin && u.name !== name);
  if (admins.length === 0) {
    throw new OrreryError('conflict', `'${name}' is the last admin: make another user admin before you ${what} them`, { details: { user: name, rule: 'last-admin' } });
  }
}

/**
 * Deletes a user (with a compare-and-set when `version` is given); refuses the last admin
 * (`conflict`). Resolves the user as it was. Their API tokens stop working at once (a token names
 * its owner's creation time) and are removed by the caller.
 */
export async function deleteUser(zk: ZkClient, name: string, version?: number): Promise<UserView> {
  assertUserName(name);
  const current = await readUser(zk, name);
  if (!current) throw notFound(name);
  if (current.record.admin) await assertNotLastAdmin(zk, name, 'delete');
  try {
    await zk.delete(paths.consoleUser(name), version ?? current.version);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'bad-version') throw await staleUserError(zk, name, version);
    if (code === 'no-node') throw notFound(name);
    throw error;
  }
  return userView(name, current.record, current.version);
}

/** What {@link ensureFirstAdmin} did. */
export type FirstAdminOutcome =
  | { created: false }
  | { created: true; user: string; /** Set only when it was generated here (to be shown once). */ generatedPassword?: string };

/**
 * Creates the first admin (`admin`) when no user exists: with `password` (from
 * `ORRERY_ADMIN_PASSWORD`), else a generated one returned to be shown once. When several consoles
 * start at once, exactly one create succeeds; the others find the node and create nothing.
 */
export async function ensureFirstAdmin(zk: ZkClient, options: { password?: string; now: number }): Promise<FirstAdminOutcome> {
  await zk.mkdirp(paths.consoleUsers());
  const existing = await zk.getChildren(paths.consoleUsers());
  if (existing.length > 0) return { created: false };
  const generated = options.password === undefined ? generatePassword() : undefined;
  const password = options.password ?? generated!;
  assertPassword(password, 'ORRERY_ADMIN_PASSWORD');
  const record: UserRecord = { passwordHash: await hashPassword(password), admin: true, roles: {}, sessionEpoch: 0, createdAt: options.now };
  try {
    await zk.create(paths.consoleUser(FIRST_ADMIN_NAME), encodeJson(record));
  } catch (error) {
    if (hasErrorCode(error, 'node-exists')) return { created: false };
    throw error;
  }
  return { created: true, user: FIRST_ADMIN_NAME, ...(generated !== undefined ? { generatedPassword: generated } : {}) };
}
