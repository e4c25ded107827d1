// GET …/jobs/:job/shards against a real ZooKeeper: each item's state, owner, run in progress, last
// outcome, next fire time (job zone and UTC), and the reason and advice for an unassigned item.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { eventually } from '@orrery/core/testing';
import { startClusterConsole, writeAssignment, writeJob, writeShard, type ClusterTestConsole } from './cluster-test-support.js';
import { shardRoutes } from './shards.js';

const zkConnect = inject('zkConnect');
// 2025-01-15 10:00:00 UTC: a fixed clock for the next fire times.
const NOW = Date.UTC(2025, 0, 15, 10, 0, 0);
let c: ClusterTestConsole;

beforeAll(async () => {
  c = await startClusterConsole(zkConnect, 'console-shards', [shardRoutes], { now: () => NOW });
});
afterAll(async () => {
  await c.close();
});

const outcome = (status: 'succeeded' | 'failed', message: string) => ({
  status, exitCode: status === 'failed' ? 2 : 0, startedAt: NOW - 60_000, endedAt: NOW - 50_000, durationMs: 10_000, executor: 'e1', runId: `r-${status}`, fireTime: NOW - 60_000, attempt: 1, fencingToken: 1, message,
});

describe('GET /namespaces/:namespace/jobs/:job/shards', () => {
  it('shows each item: running, last outcome, never-run, unassigned with advice; next fire in the job zone and UTC', async () => {
    await writeJob(c.zk, { name: 'report', type: 'node', handler: 'report', cron: '0 30 12 * * *', timeZone: 'Asia/Shanghai', shardingTotalCount: 4, enabled: true });
    await writeAssignment(c.zk, 'report', { e1: [0, 1], e2: [2] }, [{ item: 3, reason: 'no-executor-has-handler' }]);
    await writeShard(c.zk, 'report', 0, { state: 'running', executor: 'e1', session: 'abc', runId: 'r-now', fireTime: NOW - 1000, startedAt: NOW - 900, attempt: 1, last: outcome('succeeded', 'ok') });
    await writeShard(c.zk, 'report', 1, { state: 'idle', last: outcome('failed', 'disk full') });
    await eventually(async () => {
      const res = await c.as('vic', { method: 'GET', url: '/api/v1/namespaces/shop/jobs/report/shards' });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({ job: 'report', enabled: true, timeZone: 'Asia/Shanghai', shardingTotalCount: 4, assignmentEpoch: 1 });
      expect(body.items.map((i: { item: number; state: string; owner: string | null }) => [i.item, i.state, i.owner])).toEqual([
        [0, 'running', 'e1'], [1, 'failed', 'e1'], [2, 'never-run', 'e2'], [3, 'unassigned', null],
      ]);
      expect(body.items[0].running).toEqual({ runId: 'r-now', executor: 'e1', since: NOW - 900, attempt: 1 });
      expect(body.items[0].last).toMatchObject({ status: 'succeeded', message: 'ok' });
      expect(body.items[1].last).toMatchObject({ status: 'failed', message: 'disk full', exitCode: 2 });
      // 12:30 in Shanghai (UTC+8) is 04:30 UTC: the next one after 10:00 UTC on the 15th is the 16th.
      expect(body.items[2].nextFire).toEqual({ at: Date.UTC(2025, 0, 16, 4, 30), local: '2025-01-16T12:30:00+08:00', utc: '2025-01-16T04:30:00.000Z', timeZone: 'Asia/Shanghai' });
      expect(body.items[3].unassigned).toEqual({ reason: 'no-executor-has-handler', advice: expect.stringContaining("no online executor offers the Node handler 'report'") });
      expect(body.items[3].unassigned.advice).toContain('--jobs');
    });
  });

  it('says an enabled job the allocator has not placed yet is unassigned, and why', async () => {
    await writeJob(c.zk, { name: 'fresh', cron: '0 0 * * *', shardingTotalCount: 2, enabled: true });
    await eventually(async () => {
      const res = await c.as('vic', { method: 'GET', url: '/api/v1/namespaces/shop/jobs/fresh/shards' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().assignmentEpoch).toBeNull();
      expect(res.json().items.map((i: { state: string; unassigned?: { reason: string } }) => [i.state, i.unassigned?.reason])).toEqual([['unassigned', 'not-allocated-yet'], ['unassigned', 'not-allocated-yet']]);
      expect(res.json().items[0].unassigned.advice).toContain('orrery-sharding');
    });
  });

  it('a disabled job shows no next fire and no unassigned items', async () => {
    await writeJob(c.zk, { name: 'off', cron: '0 0 * * *', shardingTotalCount: 1, enabled: false });
    await eventually(async () => {
      const res = await c.as('vic', { method: 'GET', url: '/api/v1/namespaces/shop/jobs/off/shards' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().items).toEqual([expect.objectContaining({ item: 0, state: 'never-run', owner: null, nextFire: null })]);
    });
  });

  it('answers 404 for an unknown job or namespace, 400 for a bad name, 401 and 403 without credentials or role', async () => {
    const missing = await c.as('vic', { method: 'GET', url: '/api/v1/namespaces/shop/jobs/nope/shards' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error).toMatchObject({ code: 'not-found', message: "job 'nope' does not exist in namespace 'shop'" });
    expect((await c.as('root', { method: 'GET', url: '/api/v1/namespaces/elsewhere/jobs/x/shards' })).statusCode).toBe(404);
    const bad = await c.as('vic', { method: 'GET', url: '/api/v1/namespaces/shop/jobs/a..b/shards' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.issues[0]).toMatchObject({ field: 'job', rule: 'pattern' });
    expect((await c.as(undefined, { method: 'GET', url: '/api/v1/namespaces/shop/jobs/report/shards' })).statusCode).toBe(401);
    expect((await c.as('eve', { method: 'GET', url: '/api/v1/namespaces/shop/jobs/report/shards' })).statusCode).toBe(403);
  });
});
