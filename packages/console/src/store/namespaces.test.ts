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
});
