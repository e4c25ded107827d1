// The assignment routes: the pure preview (a change applied to the cluster, moves, loads) in tables,
// and GET …/assignment and POST …/assignment/preview against a real ZooKeeper — nothing written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { paths } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { allocate, EMPTY_ALLOCATION, type Cluster, type ClusterExecutor, type ClusterJob } from '@orrery/sharding';
import { allocationLoads, allocationMoves, applyChange, previewAllocation } from '../allocation-view.js';
import { assignmentRoutes } from './assignment.js';
import { startClusterConsole, startPresence, writeAssignment, writeJob, type ClusterTestConsole } from './cluster-test-support.js';

const ex = (name: string, extra: Partial<ClusterExecutor> = {}): ClusterExecutor => ({ name, handlers: [], tags: [], noTraffic: false, ...extra });
const job = (name: string, extra: Partial<ClusterJob> = {}): ClusterJob => ({ name, enabled: true, type: 'shell', shardingTotalCount: 4, localMode: false, loadLevel: 1, preferList: [], useDispreferList: true, ...extra });

describe('the preview (pure)', () => {
  const cluster: Cluster = { executors: [ex('a'), ex('b'), ex('c')], jobs: [job('x', { shardingTotalCount: 6, loadLevel: 2 }), job('y', { shardingTotalCount: 3 })] };
  const stored = allocate(EMPTY_ALLOCATION, cluster);

  it('applies drain, undrain, remove and job changes to the cluster', () => {
    const changed = applyChange({ ...cluster, executors: [...cluster.executors, ex('d', { noTraffic: true })] }, { drain: ['a'], undrain: ['d'], remove: ['b'], jobs: [{ name: 'y', loadLevel: 9, enabled: false }] });
    expect(changed.executors).toEqual([ex('a', { noTraffic: true }), ex('c'), ex('d')]);
    expect(changed.jobs[1]).toEqual(job('y', { shardingTotalCount: 3, loadLevel: 9, enabled: false }));
    expect(changed.jobs[0]).toBe(cluster.jobs[0]);
  });

  it('an empty change moves nothing (the allocator is sticky)', () => {
    const { next } = previewAllocation(stored, cluster, {});
    expect(allocationMoves(stored, next, cluster)).toEqual([]);
  });

  it('draining an executor moves exactly its shards away, to the others', () => {
    const { cluster: changed, next } = previewAllocation(stored, cluster, { drain: ['a'] });
    const moves = allocationMoves(stored, next, changed);
    const onA = Object.entries(stored.jobs).flatMap(([j, { items }]) => (items.a ?? []).map((i) => `${j}#${i}`));
    expect(moves.map((m) => `${m.job}#${m.item}`).sort()).toEqual(onA.sort());
    for (const m of moves) {
      expect(m.from).toBe('a');
      expect(['b', 'c']).toContain(m.to);
    }
    const after = allocationLoads(next, changed.jobs);
    expect(after.map((l) => l.executor)).toEqual(['b', 'c']);
    expect(after.reduce((s, l) => s + l.load, 0)).toBe(6 * 2 + 3);
  });

  it('says why a shard has no executor after: removed item, disabled job, the allocator reason', () => {
    const fewer = previewAllocation(stored, cluster, { jobs: [{ name: 'x', shardingTotalCount: 5 }] });
    expect(allocationMoves(stored, fewer.next, fewer.cluster).filter((m) => m.to === null)).toEqual([expect.objectContaining({ job: 'x', item: 5, to: null, why: 'item-removed' })]);
    const off = previewAllocation(stored, cluster, { jobs: [{ name: 'y', enabled: false }] });
    expect(allocationMoves(stored, off.next, off.cluster).map((m) => m.why)).toEqual(['job-disabled', 'job-disabled', 'job-disabled']);
    const none = previewAllocation(stored, cluster, { drain: ['a', 'b', 'c'] });
    expect(new Set(allocationMoves(stored, none.next, none.cluster).map((m) => m.why))).toEqual(new Set(['all-drained']));
  });

  it('loads weigh shards by loadLevel and list members holding nothing', () => {
    expect(allocationLoads({ members: ['a', 'z'], jobs: { x: { items: { a: [0, 1] }, unassigned: [] }, gone: { items: { a: [0] }, unassigned: [] } } }, [job('x', { loadLevel: 3 })]))
      .toEqual([{ executor: 'a', load: 6, shards: 2 }, { executor: 'z', load: 0, shards: 0 }]);
  });
});

const zkConnect = inject('zkConnect');
let c: ClusterTestConsole;
const presences: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  c = await startClusterConsole(zkConnect, 'console-assignment', [assignmentRoutes]);
});
afterAll(async () => {
  await Promise.all(presences.splice(0).map((p) => p.close()));
  await c.close();
});

describe('the assignment routes', () => {
  it('GET shows the map, unassigned items with advice, and the load per executor', async () => {
    presences.push(await startPresence(zkConnect, c.root, 'a'), await startPresence(zkConnect, c.root, 'b'));
    await writeJob(c.zk, { name: 'x', shardingTotalCount: 4, loadLevel: 2, enabled: true });
    await writeJob(c.zk, { name: 'n', type: 'node', handler: 'missing', shardingTotalCount: 1, enabled: true });
    await writeAssignment(c.zk, 'x', { a: [0, 1], b: [2, 3] });
    await writeAssignment(c.zk, 'n', {}, [{ item: 0, reason: 'no-executor-has-handler' }]);
    await c.zk.create(paths.namespaceSharding('shop'), JSON.stringify({ allocatorEpoch: 1, members: ['a', 'b'], round: 3, writtenAt: 5 }));
    await eventually(async () => {
      const res = await c.as('vic', { method: 'GET', url: '/api/v1/namespaces/shop/assignment' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        members: ['a', 'b'], round: 3,
        jobs: [
          { job: 'n', epoch: 1, items: {}, unassigned: [{ item: 0, reason: 'no-executor-has-handler', advice: expect.stringContaining("'missing'") }] },
          { job: 'x', enabled: true, loadLevel: 2, epoch: 1, items: { a: [0, 1], b: [2, 3] }, unassigned: [] },
        ],
        loads: [{ executor: 'a', load: 4, shards: 2 }, { executor: 'b', load: 4, shards: 2 }],
      });
    });
  });

  it('POST preview answers the moves and loads of draining an executor, and writes nothing', async () => {
    const before = await c.zk.get(paths.jobAssignment('shop', 'x'));
    const res = await c.as('vic', { method: 'POST', url: '/api/v1/namespaces/shop/assignment/preview', payload: { drain: ['a'] } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().moves).toEqual([{ job: 'x', item: 0, from: 'a', to: 'b' }, { job: 'x', item: 1, from: 'a', to: 'b' }]);
    expect(res.json().loads).toEqual([{ executor: 'a', before: 4, after: 0, shardsBefore: 2, shardsAfter: 0 }, { executor: 'b', before: 4, after: 8, shardsBefore: 2, shardsAfter: 4 }]);
    expect(res.json().assignment.x).toEqual({ items: { b: [0, 1, 2, 3] }, unassigned: [] });
    expect(res.json().members).toEqual(['b']);
    const loadLevel = await c.as('vic', { method: 'POST', url: '/api/v1/namespaces/shop/assignment/preview', payload: { jobs: [{ name: 'x', loadLevel: 10, shardingTotalCount: 2 }] } });
    expect(loadLevel.statusCode, loadLevel.body).toBe(200);
    expect(loadLevel.json().loads).toEqual([{ executor: 'a', before: 4, after: 10, shardsBefore: 2, shardsAfter: 1 }, { executor: 'b', before: 4, after: 10, shardsBefore: 2, shardsAfter: 1 }]);
    const after = await c.zk.get(paths.jobAssignment('shop', 'x'));
    expect(after.stat.mzxid).toBe(before.stat.mzxid);
    expect(await c.zk.exists(paths.executorMeta('shop', 'a'))).toBeNull();
  });

  it('refuses a bad change with a 400 naming the field and the rule', async () => {
    const cases: Array<[unknown, string, string]> = [
      [{ drain: ['ghost'] }, 'drain.0', 'known-executor'],
      [{ jobs: [{ name: 'nope', loadLevel: 2 }] }, 'jobs.0.name', 'known-job'],
      [{ jobs: [{ name: 'x', loadLevel: 0 }] }, 'jobs.0.loadLevel', 'minimum'],
      [{ jobs: [{ name: 'x', colour: 'red' }] }, 'jobs.0.colour', 'unknown-field'],
      [{ drain: ['a'], undrain: ['a'] }, 'undrain.0', 'conflict'],
      [{ reshard: 'yes' }, 'reshard', 'type'],
      [{ jobs: [{ name: 'x', shardingTotalCount: 10_000 }, { name: 'y', shardingTotalCount: 10_000 }, { name: 'x', shardingTotalCount: 1 }] }, 'jobs', 'max-shards'],
    ];
    for (const [payload, field, rule] of cases) {
      const res = await c.as('vic', { method: 'POST', url: '/api/v1/namespaces/shop/assignment/preview', payload: payload as object });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.details.issues, JSON.stringify(payload)).toEqual(expect.arrayContaining([expect.objectContaining({ field, rule })]));
    }
    expect((await c.as('eve', { method: 'POST', url: '/api/v1/namespaces/shop/assignment/preview', payload: {} })).statusCode).toBe(403);
    expect((await c.as('root', { method: 'POST', url: '/api/v1/namespaces/none/assignment/preview', payload: {} })).statusCode).toBe(404);
  });
});
