// A compare-and-set that loses names the version that won. Each case lets another writer get in
// between the store function's read and its set (a real write to a real ZooKeeper, made just
// before the set reaches it): the 409's `details.version` and `current` are the node's as they
// are after that write, not as the store function had read them.
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { createZkClient, encodeJson, hasErrorCode, paths, type ZkClient } from '@orrery/core';
import { uniqueRoot } from '@orrery/core/testing';
import { createNamespace, updateNamespace } from './namespaces.js';
import { createUser, deleteUser, readUser, updateUser } from './users.js';

const zkConnect = inject('zkConnect');
let zk: ZkClient;
beforeAll(async () => {
  zk = createZkClient({ connect: zkConnect, root: uniqueRoot('stale-version') });
  await zk.start();
});
afterAll(async () => {
  await zk?.close();
});

/** `zk`, except that the next `set` or `delete` first runs `write` (another writer, through `zk` itself). */
function racing(write: () => Promise<unknown>): ZkClient {
  let pending: (() => Promise<unknown>) | undefined = write;
  const first = async (): Promise<void> => {
    const w = pending;
    pending = undefined;
    await w?.();
  };
  return new Proxy(zk, {
    get(target, key, receiver) {
      if (key === 'set') return async (...args: Parameters<ZkClient['set']>) => { await first(); return target.set(...args); };
      if (key === 'delete') return async (...args: Parameters<ZkClient['delete']>) => { await first(); return target.delete(...args); };
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

async function conflictOf(promise: Promise<unknown>): Promise<{ message: string; details: Record<string, any> }> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(hasErrorCode(error, 'conflict'), String(error)).toBe(true);
  return error as { message: string; details: Record<string, any> };
}

describe('a lost compare-and-set reports the newest version', () => {
  it('updateUser: a write between its read and its set', async () => {
    await createUser(zk, { name: 'uma', password: 'uma-password' }, 1);
    // Another admin writes version 1 (roles: bank) after updateUser read version 0.
    const other = async (): Promise<void> => {
      const read = (await readUser(zk, 'uma'))!;
      await zk.set(paths.consoleUser('uma'), encodeJson({ ...read.record, roles: { bank: 'owner' }, updatedAt: 2 }), read.version);
    };
    const error = await conflictOf(updateUser(racing(other), 'uma', { roles: { shop: 'viewer' } }, 0, 3));
    expect(error.details).toMatchObject({ user: 'uma', version: 1, current: { name: 'uma', roles: { bank: 'owner' }, version: 1 } });
    expect(error.message).toContain('version 1');
    expect(JSON.stringify(error.details)).not.toContain('scrypt');
  });

  it('deleteUser: a write between its read and its delete', async () => {
    await createUser(zk, { name: 'ned', password: 'ned-password' }, 1);
    const other = async (): Promise<void> => {
      const read = (await readUser(zk, 'ned'))!;
      await zk.set(paths.consoleUser('ned'), encodeJson({ ...read.record, roles: { shop: 'operator' }, updatedAt: 2 }), read.version);
    };
    const error = await conflictOf(deleteUser(racing(other), 'ned'));
    expect(error.details).toMatchObject({ user: 'ned', version: 1, current: { roles: { shop: 'operator' }, version: 1 } });
    expect(await readUser(zk, 'ned')).toBeDefined();
  });

  it('updateNamespace: a write between its read and its set', async () => {
    await createNamespace(zk, 'shop', { description: 'first' }, 1);
    const other = async (): Promise<void> => {
      await updateNamespace(zk, 'shop', { description: 'second' }, 0);
    };
    const error = await conflictOf(updateNamespace(racing(other), 'shop', { description: 'mine' }, 0));
    expect(error.details).toMatchObject({ namespace: 'shop', version: 1, current: { description: 'second', createdAt: 1 } });
    expect(error.message).toContain('version 1');
  });

  it('updateNamespace: the node that won holds invalid data', async () => {
    await createNamespace(zk, 'bank', {}, 1);
    const other = async (): Promise<void> => {
      await zk.set(paths.namespace('bank'), Buffer.from('{not json'), 0);
    };
    const error = await conflictOf(updateNamespace(racing(other), 'bank', {}, 0));
    expect(error.details).toMatchObject({ namespace: 'bank', version: 1, current: null, problem: expect.any(String) });
  });
});
