// Users in a real ZooKeeper: create (names validated, no password stored), compare-and-set
// updates (a password change bumps the session epoch), the last admin kept, and the first admin
// created exactly once when many consoles race to create it.
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { createZkClient, hasErrorCode, paths, type ZkClient } from '@orrery/core';
import { uniqueRoot } from '@orrery/core/testing';
import { ensureSessionSecret } from './tokens.js';
import { createUser, deleteUser, endSessions, ensureFirstAdmin, listUsers, readUser, updateUser, verifyPassword } from './users.js';

const zkConnect = inject('zkConnect');
const clients: ZkClient[] = [];
async function client(root: string): Promise<ZkClient> {
  const zk = createZkClient({ connect: zkConnect, root });
  clients.push(zk);
  await zk.start();
  return zk;
}
let zk: ZkClient;
beforeAll(async () => {
  zk = await client(uniqueRoot('users-store'));
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

async function rejectsWith(promise: Promise<unknown>, code: string, message?: RegExp): Promise<Error> {
  const error = await promise.then(() => undefined, (e: unknown) => e as Error);
  expect(error, `expected a '${code}' error`).toBeDefined();
  expect(hasErrorCode(error, code as never), String(error)).toBe(true);
  if (message) expect(error!.message).toMatch(message);
  return error!;
}

describe('users', () => {
  it('are created with a scrypt hash only, validated, and never twice', async () => {
    const ann = await createUser(zk, { name: 'ann', password: 'ann-secret-1', roles: { shop: 'owner' } }, 1000);
    expect(ann).toEqual({ name: 'ann', admin: false, roles: { shop: 'owner' }, createdAt: 1000, version: 0 });
    const raw = (await zk.get(paths.consoleUser('ann'))).data!.toString();
    expect(raw).not.toContain('ann-secret-1');
    const stored = await readUser(zk, 'ann');
    expect(await verifyPassword('ann-secret-1', stored!.record.passwordHash)).toBe(true);
    await rejectsWith(createUser(zk, { name: 'ann', password: 'another-one' }, 1), 'already-exists');
    for (const name of ['', '.', '..', 'a/b', 'x'.repeat(65), 'é']) await rejectsWith(createUser(zk, { name, password: 'long-enough' }, 1), 'validation', /name/);
    const short = await rejectsWith(createUser(zk, { name: 'bob', password: 'short' }, 1), 'validation', /password: must be 8 to 256/);
    expect(short.message).not.toContain('short');
    await rejectsWith(createUser(zk, { name: 'bob', password: 'long-enough', roles: { shop: 'king' as never } }, 1), 'validation', /roles\.shop/);
    await rejectsWith(createUser(zk, { name: 'bob', password: 'long-enough', roles: { '../x': 'viewer' } }, 1), 'validation', /namespace name/);
  });

  it('are updated with compare-and-set; a new password bumps the session epoch', async () => {
    await createUser(zk, { name: 'cat', password: 'cat-secret-1' }, 1);
    const roles = await updateUser(zk, 'cat', { roles: { shop: 'viewer' } }, 0, 2);
    expect(roles.after).toMatchObject({ roles: { shop: 'viewer' }, version: 1, updatedAt: 2 });
    expect(roles.record.sessionEpoch).toBe(0);
    const stale = await rejectsWith(updateUser(zk, 'cat', { admin: true }, 0, 3), 'conflict');
    expect((stale as unknown as { details: { version: number } }).details.version).toBe(1);
    const pw = await updateUser(zk, 'cat', { password: 'cat-secret-2' }, 1, 4);
    expect(pw.record.sessionEpoch).toBe(1);
    expect(pw.passwordChanged).toBe(true);
    expect(await verifyPassword('cat-secret-2', (await readUser(zk, 'cat'))!.record.passwordHash)).toBe(true);
    await endSessions(zk, 'cat', 5);
    expect((await readUser(zk, 'cat'))!.record.sessionEpoch).toBe(2);
    await rejectsWith(updateUser(zk, 'nobody', { admin: true }, 0, 1), 'not-found');
  });

  it('keep the last admin: neither deleted nor demoted', async () => {
    const root = uniqueRoot('users-last-admin');
    const z = await client(root);
    await createUser(z, { name: 'root', password: 'root-secret', admin: true }, 1);
    await rejectsWith(deleteUser(z, 'root'), 'conflict', /last admin/);
    await rejectsWith(updateUser(z, 'root', { admin: false }, 0, 2), 'conflict', /last admin/);
    await createUser(z, { name: 'second', password: 'second-secret', admin: true }, 1);
    await updateUser(z, 'root', { admin: false }, 0, 2);
    await rejectsWith(deleteUser(z, 'second'), 'conflict', /last admin/);
    await deleteUser(z, 'root');
    expect((await listUsers(z)).map((u) => u.name)).toEqual(['second']);
    await rejectsWith(deleteUser(z, 'root'), 'not-found');
  });

  it('the first admin is created exactly once when eight consoles start at the same time', async () => {
    const root = uniqueRoot('users-first-admin');
    const many = await Promise.all(Array.from({ length: 8 }, () => client(root)));
    const outcomes = await Promise.all(many.map((c) => ensureFirstAdmin(c, { now: 7 })));
    const created = outcomes.filter((o) => o.created);
    expect(created).toHaveLength(1);
    const password = (created[0] as { generatedPassword?: string }).generatedPassword!;
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    const users = await listUsers(many[0]!);
    expect(users).toEqual([{ name: 'admin', admin: true, roles: {}, createdAt: 7, version: 0 }]);
    expect(await verifyPassword(password, (await readUser(many[0]!, 'admin'))!.record.passwordHash)).toBe(true);
    // Started again, nothing new; and the session secret is made once as well.
    expect(await ensureFirstAdmin(many[1]!, { password: 'from-the-env', now: 8 })).toEqual({ created: false });
    const secrets = await Promise.all(many.map((c) => ensureSessionSecret(c, 1)));
    expect(secrets.filter(Boolean)).toHaveLength(1);
  });

  it('the first admin takes ORRERY_ADMIN_PASSWORD when given', async () => {
    const z = await client(uniqueRoot('users-first-admin-env'));
    expect(await ensureFirstAdmin(z, { password: 'from-the-env', now: 1 })).toEqual({ created: true, user: 'admin' });
    expect(await verifyPassword('from-the-env', (await readUser(z, 'admin'))!.record.passwordHash)).toBe(true);
  });
});
