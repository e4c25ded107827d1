// Namespace stats: the one state per job (table), runs and failures in the window from the shard
// nodes (table), and the route against a real ZooKeeper (most failing first, coverage stated).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { ShardState } from '@orrery/core';
import { eventually } from '@orrery/core/testing';
import { startClusterConsole, startPresence, writeAssignment, writeJob, writeShard, type ClusterTestConsole } from './cluster-test-support.js';
import { jobRuns, jobState, statsRoutes, STATS_WINDOW_MS, type JobFacts } from './stats.js';

const NOW = Date.UTC(2025, 5, 1, 12);
const idle = (status: 'succeeded' | 'failed' | 'timed-out' | 'aborted', endedAt = NOW - 3_600_000): ShardState => ({
  state: 'idle', last: { status, exitCode: null, startedAt: endedAt - 1000, endedAt, durationMs: 1000, executor: 'e', runId: `r${endedAt}`, fireTime: endedAt - 1000, attempt: 1, fencingToken: 1, message: status },
});
const running: ShardState = { state: 'running', executor: 'e', session: 's', runId: 'r', fireTime: NOW, startedAt: NOW, attempt: 1 };

describe('jobState and jobRuns (pure)', () => {
  const facts = (extra: Partial<JobFacts>): JobFacts => ({ name: 'j', configOk: true, enabled: true, unassigned: 0, shards: [], ...extra });
  it.each([
    ['broken', facts({ configOk: false, enabled: false })],
    ['disabled', facts({ enabled: false, shards: [idle('failed')] })],
    ['unassigned', facts({ unassigned: 1, shards: [idle('failed')] })],
    ['failing', facts({ shards: [idle('timed-out'), running] })],
    ['running', facts({ shards: [idle('succeeded'), running] })],
    ['healthy', facts({ shards: [idle('succeeded'), undefined] })],
    ['healthy', facts({})],
  ] as const)('%s', (state, input) => {
    expect(jobState(input)).toBe(state);
  });

  it('counts last outcomes in the window and runs in progress', () => {
    expect(jobRuns([idle('failed'), idle('timed-out'), idle('succeeded'), idle('failed', NOW - STATS_WINDOW_MS - 1), running, undefined], NOW))
      .toEqual({ runs: 4, failures: 2, running: 1, lastFailureAt: NOW - 3_600_000 });
  });
});

const zkConnect = inject('zkConnect');
let c: ClusterTestConsole;
const presences: Array<{ close(): Promise<void> }> = [];
beforeAll(async () => {
  c = await startClusterConsole(zkConnect, 'console-stats', [statsRoutes], { now: () => NOW });
});
afterAll(async () => {
  await Promise.all(presences.splice(0).map((p) => p.close()));
  await c.close();
});

describe('GET /namespaces/:namespace/stats', () => {
  it('answers jobs and executors by state, runs and failures per job, the most failing first', async () => {
    presences.push(await startPresence(zkConnect, c.root, 'e1'));
    await c.zk.mkdirp('/namespaces/shop/executors/gone');
    await writeJob(c.zk, { name: 'ok', shardingTotalCount: 2, enabled: true });
    await writeJob(c.zk, { name: 'bad', shardingTotalCount: 3, enabled: true });
    await writeJob(c.zk, { name: 'worse', shardingTotalCount: 3, enabled: true });
    await writeJob(c.zk, { name: 'off', enabled: false });
    await writeAssignment(c.zk, 'ok', { e1: [0, 1] });
    await writeShard(c.zk, 'ok', 0, idle('succeeded'));
    await writeShard(c.zk, 'bad', 0, idle('failed'));
    await writeShard(c.zk, 'bad', 1, idle('succeeded'));
    for (const item of [0, 1, 2]) await writeShard(c.zk, 'worse', item, idle('timed-out', NOW - 1000 * (item + 1)));
    await eventually(async () => {
      const res = await c.as('vic', { method: 'GET', url: '/api/v1/namespaces/shop/stats' });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.jobs).toEqual({ total: 4, byState: { broken: 0, disabled: 1, unassigned: 0, failing: 2, running: 0, healthy: 1 } });
      expect(body.executors).toEqual({ total: 2, byState: { online: 1, drained: 0, offline: 1 } });
      expect(body.runs).toEqual([
        { job: 'bad', runs: 2, failures: 1, running: 0 },
        { job: 'off', runs: 0, failures: 0, running: 0 },
        { job: 'ok', runs: 1, failures: 0, running: 0 },
        { job: 'worse', runs: 3, failures: 3, running: 0 },
      ]);
      expect(body.mostFailing.map((j: { job: string }) => j.job)).toEqual(['worse', 'bad']);
      expect(body.coverage).toContain("executors' run histories");
    });
    expect((await c.as('eve', { method: 'GET', url: '/api/v1/namespaces/shop/stats' })).statusCode).toBe(403);
    expect((await c.as('root', { method: 'GET', url: '/api/v1/namespaces/none/stats' })).statusCode).toBe(404);
  });
});
