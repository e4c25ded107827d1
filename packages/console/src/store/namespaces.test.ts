// Deleting a namespace, against a real ZooKeeper: what it refuses, and that its jobs' config
// history goes with it (a namespace created again under the name starts clean).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createZkClient, encodeJson, parseJobConfig, paths, type ZkClient } from '@orrery/core';
import { uniqueRoot } from '@orrery/core/testing';
import { createNamespace, deleteNamespace } from './namespaces.js';
import { recordJobVersion } from './job-history.js';

const zkConnect = inject('zkConnect');
let zk: ZkClient;
beforeAll(async () => {
  zk = createZkClient({ connect: zkConnect, root: uniqueRoot('namespaces') });
  await zk.start();
});
afterAll(async () => {
  await zk.close();
});

describe('deleteNamespace', () => {
  it('refuses a namespace with jobs unless forced, and takes the config history with it', async () => {
    await createNamespace(zk, 'doomed');
    const config = parseJobConfig({ name: 'j', type: 'shell', command: 'true' });
    await zk.create(paths.job('doomed', 'j'), encodeJson(config));
    expect(await recordJobVersion(zk, 'doomed', 'j', { version: 0, author: 'test', at: 1, config })).toBe(true);
    expect(await zk.exists(paths.jobHistory('doomed', 'j'))).not.toBeNull();
    await expect(deleteNamespace(zk, 'doomed')).rejects.toMatchObject({ code: 'conflict', details: { jobs: 1 } });
    await deleteNamespace(zk, 'doomed', { force: true });
    expect(await zk.exists(paths.namespace('doomed'))).toBeNull();
    expect(await zk.exists(paths.namespaceHistory('doomed'))).toBeNull();
  });

  it('refuses a namespace with a running executor even when forced (it would register again), writing nothing', async () => {
    await createNamespace(zk, 'busy');
    const config = parseJobConfig({ name: 'j', type: 'shell', command: 'true' });
    await zk.create(paths.job('busy', 'j'), encodeJson(config));
    await zk.mkdirp(paths.executor('busy', 'e1'));
    await zk.create(paths.executorPresence('busy', 'e1'), encodeJson({ host: 'h' }), 'ephemeral');
    for (const force of [false, true]) {
      await expect(deleteNamespace(zk, 'busy', { force })).rejects.toMatchObject({ code: 'conflict', details: { onlineExecutors: 1 } });
    }
    await expect(deleteNamespace(zk, 'busy', { force: true })).rejects.toThrow("namespace 'busy' has 1 running executor(s) (e1); stop them first");
    expect(await zk.exists(paths.job('busy', 'j'))).not.toBeNull();
    // Stopped: the delete goes through.
    await zk.delete(paths.executorPresence('busy', 'e1'));
    await deleteNamespace(zk, 'busy', { force: true });
    expect(await zk.exists(paths.namespace('busy'))).toBeNull();
  });
});
