// Which query keys a namespace event refreshes: a shard's change refreshes the job lists and that
// job's page only (a busy namespace sends shard events all the time), a reconnection everything.
import { describe, expect, it } from 'vitest';
import { jobKeys } from '../features/jobs/queries';
import { nsKeys } from '../features/namespaces/queries';
import { keysForEvent } from './events';

const startsWith = (key: readonly unknown[], prefix: readonly unknown[]) => prefix.every((part, i) => JSON.stringify(key[i]) === JSON.stringify(part));
const refreshed = (keys: readonly (readonly unknown[])[], key: readonly unknown[]) => keys.some((prefix) => startsWith(key, prefix));

describe('keysForEvent', () => {
  const list = jobKeys.list('shop', { q: 'a' });
  const report = [...jobKeys.detail('shop', 'report'), 'runs', 100];
  const backup = [...jobKeys.detail('shop', 'backup'), 'shards'];
  it.each([
    ['a shard of report', { kind: 'shard', job: 'report', item: 0 }, { list: true, report: true, backup: false, stats: true }],
    ['report reconfigured', { kind: 'job', job: 'report' }, { list: true, report: true, backup: false, stats: true }],
    ['a job without a name (every job)', { kind: 'job' }, { list: true, report: true, backup: true, stats: true }],
    ['report reassigned', { kind: 'assignment', job: 'report' }, { list: false, report: true, backup: false, stats: true }],
    ['an executor', { kind: 'executor', executor: 'e1' }, { list: false, report: false, backup: false, stats: true }],
    ['a reconnection', { kind: 'ready' }, { list: true, report: true, backup: true, stats: true }],
  ] as const)('%s', (_name, event, want) => {
    const keys = keysForEvent('shop', event);
    expect({
      list: refreshed(keys, list),
      report: refreshed(keys, report),
      backup: refreshed(keys, backup),
      stats: refreshed(keys, [...nsKeys.namespace('shop'), 'stats']),
    }).toEqual(want);
    expect(refreshed(keys, [...nsKeys.namespace('other'), 'jobs'])).toBe(false);
  });
});
