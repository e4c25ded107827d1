// The executor routes against a real ZooKeeper, executors announced by presences held by their own
// sessions: list and one with state, load and shards; drain / undrain (operator, audited); removal
// of an offline executor only (owner, audited); 4xx with nothing written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { paths } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { startClusterConsole, startPresence, writeAssignment, writeJob, writeShard, type ClusterTestConsole } from './cluster-test-support.js';
import { executorRoutes } from './executors.js';

const zkConnect = inject('zkConnect');
let c: ClusterTestConsole;
const presences: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  c = await startClusterConsole(zkConnect, 'console-executors', [executorRoutes]);
});
afterAll(async () => {
  await Promise.all(presences.splice(0).map((p) => p.close()));
  await c.close();
});

describe('the executor routes', () => {
  it('list executors with state, load (sum of loadLevel), shards, version, tags, handlers, host; one with its shards by job', async () => {
    presences.push(await startPresence(zkConnect, c.root, 'e1', { handlers: ['h'], tags: ['gpu'] }));
    const e2 = await startPresence(zkConnect, c.root, 'e2');
    presences.push(e2);
    await writeJob(c.zk, { name: 'heavy', loadLevel: 5, shardingTotalCount: 3, enabled: true });
    await writeJob(c.zk, { name: 'light', shardingTotalCount: 2, enabled: true });
    await writeAssignment(c.zk, 'heavy', { e1: [0, 2], e2: [1] });
    await writeAssignment(c.zk, 'light', { e1: [1], e2: [0] });
    await writeShard(c.zk, 'heavy', 2, { state: 'running', executor: 'e1', session: 's', runId: 'r', fireTime: 1, startedAt: 2, attempt: 1 });
    await eventually(async () => {
      const res = await c.as('vic', { method: 'GET', url: '/api/v1/namespaces/shop/executors' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().executors).toEqual([
        { name: 'e1', state: 'online', drained: false, leaving: false, load: 11, shards: 3, host: 'sim-host', pid: 4242, version: '9.9.9', startedAt: 1_700_000_000_000, tags: ['gpu'], handlers: ['h'] },
        expect.objectContaining({ name: 'e2', state: 'online', load: 6, shards: 2 }),
      ]);
    });
    await eventually(async () => {
      const one = await c.as('vic', { method: 'GET', url: '/api/v1/namespaces/shop/executors/e1' });
      expect(one.statusCode, one.body).toBe(200);
      expect(one.json().jobs).toEqual([
        { job: 'heavy', items: [0, 2], loadLevel: 5, load: 10, running: [2] },
        { job: 'light', items: [1], loadLevel: 1, load: 1, running: [] },
      ]);
    });
    // Offline: e2's session ends.
    await e2.close();
    await eventually(async () => {
      const res = await c.as('vic', { method: 'GET', url: '/api/v1/namespaces/shop/executors/e2' });
      expect(res.json()).toMatchObject({ name: 'e2', state: 'offline', host: null, version: null });
    });
    expect((await c.as('vic', { method: 'GET', url: '/api/v1/namespaces/shop/executors/nope' })).statusCode).toBe(404);
  });

  it('drain and undrain (operator), audited; a viewer is refused and nothing is written', async () => {
    const refused = await c.as('vic', { method: 'POST', url: '/api/v1/namespaces/shop/executors/e1/drain' });
    expect(refused.statusCode).toBe(403);
    expect(await c.zk.exists(paths.executorMeta('shop', 'e1'))).toBeNull();
    const drained = await c.as('oli', { method: 'POST', url: '/api/v1/namespaces/shop/executors/e1/drain' });
    expect(drained.statusCode, drained.body).toBe(200);
    expect(drained.json()).toEqual({ executor: 'e1', drained: true, changed: true });
    expect(c.audited.at(-1)).toMatchObject({ action: 'executor.drain', namespace: 'shop', target: 'e1', before: { noTraffic: false }, after: { noTraffic: true } });
    await eventually(async () => {
      expect((await c.as('vic', { method: 'GET', url: '/api/v1/namespaces/shop/executors/e1' })).json()).toMatchObject({ state: 'drained', drained: true });
    });
    const again = await c.as('oli', { method: 'POST', url: '/api/v1/namespaces/shop/executors/e1/drain' });
    expect(again.json()).toEqual({ executor: 'e1', drained: true, changed: false });
    const audits = c.audited.length;
    const undrained = await c.as('oli', { method: 'POST', url: '/api/v1/namespaces/shop/executors/e1/undrain' });
    expect(undrained.json()).toEqual({ executor: 'e1', drained: false, changed: true });
    expect(c.audited).toHaveLength(audits + 1);
    expect((await c.as('oli', { method: 'POST', url: '/api/v1/namespaces/shop/executors/ghost/drain' })).statusCode).toBe(404);
    expect(await c.zk.exists(paths.executor('shop', 'ghost'))).toBeNull();
  });

  it('removes only an offline executor (owner), audited; an online one is a 409 and keeps its nodes', async () => {
    const online = await c.as('ann', { method: 'DELETE', url: '/api/v1/namespaces/shop/executors/e1' });
    expect(online.statusCode).toBe(409);
    expect(online.json().error).toMatchObject({ code: 'conflict', message: expect.stringContaining('only an offline executor can be removed') });
    expect(await c.zk.exists(paths.executor('shop', 'e1'))).not.toBeNull();
    expect((await c.as('oli', { method: 'DELETE', url: '/api/v1/namespaces/shop/executors/e2' })).statusCode).toBe(403);
    await c.zk.create(paths.executorMeta('shop', 'e2'), JSON.stringify({ noTraffic: true }));
    const removed = await c.as('ann', { method: 'DELETE', url: '/api/v1/namespaces/shop/executors/e2' });
    expect(removed.statusCode, removed.body).toBe(204);
    expect(await c.zk.exists(paths.executor('shop', 'e2'))).toBeNull();
    expect(c.audited.at(-1)).toMatchObject({ action: 'executor.remove', namespace: 'shop', target: 'e2' });
    await eventually(async () => {
      const list = await c.as('vic', { method: 'GET', url: '/api/v1/namespaces/shop/executors' });
      expect(list.json().executors.map((e: { name: string }) => e.name)).toEqual(['e1']);
    });
    expect((await c.as('ann', { method: 'DELETE', url: '/api/v1/namespaces/shop/executors/e2' })).statusCode).toBe(404);
    const bad = await c.as('ann', { method: 'DELETE', url: '/api/v1/namespaces/shop/executors/bad%20name' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.issues[0]).toMatchObject({ field: 'executor', rule: 'pattern' });
  });
});
