// The pure rule of `get shards` and the API's shards route: the state of each item, its owner, the
// run in progress, the last outcome, the next fire in the job's zone and UTC, unassigned advice.
import { describe, expect, it } from 'vitest';
import { parseJobConfig, type ShardState } from '@orrery/core';
import { describeShards, zonedTime, type ShardReading } from './shards.js';

const NOW = Date.UTC(2025, 0, 15, 9, 30, 0);
const config = parseJobConfig({ name: 'report', type: 'shell', command: 'true', cron: '0 10 * * *', timeZone: 'Europe/Berlin', shardingTotalCount: 5, enabled: true });
const outcome = (status: 'succeeded' | 'failed', runId: string) => ({ status, exitCode: status === 'succeeded' ? 0 : 1, startedAt: NOW - 5000, endedAt: NOW - 4000, durationMs: 1000, executor: 'e1', runId, fireTime: NOW - 5000, attempt: 1, fencingToken: 1, message: status === 'failed' ? 'disk full' : 'ok' });

describe('describeShards', () => {
  const shards = new Map<number, ShardReading>([
    [0, { ok: true, value: { state: 'idle', last: outcome('succeeded', 'r0') } as ShardState }],
    [1, { ok: true, value: { state: 'running', executor: 'e2', session: '1', runId: 'r1', fireTime: NOW, startedAt: NOW - 100, attempt: 1, last: outcome('failed', 'r1old') } as ShardState }],
    [2, { ok: true, value: { state: 'idle', last: outcome('failed', 'r2') } as ShardState }],
    [4, { ok: false, problem: 'not JSON' }],
  ]);
  const view = describeShards({
    namespace: 'shop', config, now: NOW, shards,
    assignment: { ok: true, value: { epoch: 3, allocatorEpoch: 1, items: { e1: [0, 2], e2: [1] }, unassigned: [{ item: 3, reason: 'all-drained' }, { item: 4, reason: 'no-eligible-executor' }], writtenAt: 0 } },
  });

  it.each([
    [0, 'succeeded', 'e1'],
    [1, 'running', 'e2'],
    [2, 'failed', 'e1'],
    [3, 'unassigned', null],
    [4, 'unassigned', null],
  ])('item %i is %s, owned by %s', (item, state, owner) => {
    expect(view.items[item]).toMatchObject({ item, state, owner });
  });

  it('shows the run in progress, the last outcome and its message', () => {
    expect(view.items[1]!.running).toEqual({ runId: 'r1', executor: 'e2', since: NOW - 100, attempt: 1 });
    expect(view.items[1]!.last).toMatchObject({ status: 'failed', message: 'disk full', runId: 'r1old' });
    expect(view.items[2]!.last).toMatchObject({ status: 'failed', message: 'disk full' });
  });

  it("gives the next fire in the job's zone and in UTC", () => {
    // 10:00 in Berlin in January is 09:00 UTC; at 09:30 UTC the next is tomorrow's.
    expect(view.items[0]!.nextFire).toEqual({ at: Date.UTC(2025, 0, 16, 9), local: '2025-01-16T10:00:00+01:00', utc: '2025-01-16T09:00:00.000Z', timeZone: 'Europe/Berlin' });
  });

  it('says why an item is unassigned and what to do, and names a broken node', () => {
    expect(view.items[3]!.unassigned).toEqual({ reason: 'all-drained', advice: expect.stringContaining('orrery -n shop undrain') });
    expect(view.items[4]!.unassigned!.advice).toMatch(/start an executor/);
    expect(view.items[4]!.problem).toBe('not JSON');
    expect(view.assignmentEpoch).toBe(3);
  });

  it('never-run without a shard node; no next fire when disabled', () => {
    const quiet = describeShards({ namespace: 'shop', config: { ...config, enabled: false, shardingTotalCount: 1 }, now: NOW, shards: new Map(), assignment: undefined });
    expect(quiet.items).toEqual([expect.objectContaining({ item: 0, state: 'never-run', owner: null, nextFire: null, last: null, running: null })]);
    expect(quiet.assignmentEpoch).toBeNull();
  });
});

describe('zonedTime', () => {
  it.each([
    [Date.UTC(2025, 6, 1, 12), 'America/New_York', '2025-07-01T08:00:00-04:00'],
    [Date.UTC(2025, 6, 1, 12), 'Asia/Kolkata', '2025-07-01T17:30:00+05:30'],
    [Date.UTC(2025, 6, 1, 12), 'UTC', '2025-07-01T12:00:00+00:00'],
  ])('%i in %s is %s', (at, zone, local) => {
    expect(zonedTime(at, zone).local).toBe(local);
  });
});
