// The job list's pure rules over a cache of 10,000 jobs held in memory: filters, sort, paging by
// offset and cursor, summaries. (The cost of a page is measured by `npm run bench console`.)
import { describe, expect, it } from 'vitest';
import { parseJobConfig, type ZkStat } from '@orrery/core';
import type { CachedJob, Parsed } from './console-cache.js';
import { createScheduleMemo, listJobPage, type JobListQuery } from './job-list.js';

const stat = (version: number): ZkStat => ({ version, mzxid: 1, czxid: 1, ctime: 0, mtime: 0, cversion: 0, aversion: 0, ephemeralOwner: '0', dataLength: 0, numChildren: 0, pzxid: 1 }) as unknown as ZkStat;
const NOW = Date.UTC(2025, 0, 1, 0, 0, 0);

function makeJobs(count: number): Map<string, CachedJob> {
  const jobs = new Map<string, CachedJob>();
  for (let i = 0; i < count; i += 1) {
    const name = `job-${String(i).padStart(5, '0')}`;
    const config: Parsed<ReturnType<typeof parseJobConfig>> = i % 1000 === 999
      ? { ok: false, problem: 'not valid JSON', stat: stat(1) }
      : { ok: true, value: parseJobConfig({ name, type: 'shell', command: 'true', cron: `${i % 60} * * * *`, timeZone: i % 2 ? 'Europe/Berlin' : 'UTC', enabled: i % 3 !== 0, groups: [`g${i % 10}`], shardingTotalCount: 4 }), stat: stat(i % 7) };
    const shards = new Map<number, Parsed<never>>();
    for (let item = 0; item < 4; item += 1) {
      const failed = i % 50 === 0 && item === 1;
      shards.set(item, { ok: true, value: { state: i % 100 === 0 && item === 0 ? 'running' : 'idle', ...(i % 100 === 0 && item === 0 ? { executor: 'e', session: 's', runId: 'r', fireTime: 1, startedAt: 1, attempt: 1 } : {}), last: { status: failed ? 'failed' : 'succeeded', exitCode: failed ? 1 : 0, startedAt: 1, endedAt: 1000 + item, durationMs: 5, executor: 'e', runId: `r${item}`, fireTime: 1, attempt: 1, fencingToken: 1, message: '' } } as never, stat: stat(1) });
    }
    jobs.set(name, { name, config, assignment: undefined, shards } as CachedJob);
  }
  return jobs;
}

const jobs = makeJobs(10_000);
const names = [...jobs.keys()].sort();
const cache = { jobNames: () => names, job: (_ns: string, name: string) => jobs.get(name) };

describe('listJobPage', () => {
  const schedules = createScheduleMemo();
  const page = (query: JobListQuery) => listJobPage(cache, 'ns', query, schedules, NOW);

  it('pages sorted by name with the total, by offset and by cursor', () => {
    const first = page({ limit: 3 });
    expect(first).toMatchObject({ total: 10_000, limit: 3, offset: 0, nextCursor: 'job-00002' });
    expect(first.items.map((i) => i.name)).toEqual(['job-00000', 'job-00001', 'job-00002']);
    expect(page({ limit: 2, cursor: first.nextCursor! }).items.map((i) => i.name)).toEqual(['job-00003', 'job-00004']);
    expect(page({ limit: 2, cursor: 'job-00003x' }).items.map((i) => i.name)).toEqual(['job-00004', 'job-00005']); // a cursor job gone since
    expect(page({ limit: 2, offset: 9_999 })).toMatchObject({ nextCursor: null, items: [{ name: 'job-09999' }] });
    expect(page({ limit: 10_000 }).items).toHaveLength(500);
  });

  it('filters by name, group and state', () => {
    expect(page({ name: 'JOB-0001', limit: 500 }).total).toBe(10);
    expect(page({ group: 'g3', limit: 500 }).total).toBe(1000);
    expect(page({ group: 'g9', limit: 500 }).total).toBe(990); // less the broken ones (i % 1000 === 999)
    expect(page({ state: 'broken' }).items.map((i) => i.name)).toEqual(Array.from({ length: 10 }, (_, k) => `job-${String(k * 1000 + 999).padStart(5, '0')}`));
    expect(page({ state: 'running' }).total).toBe(100);
    expect(page({ state: 'failing' }).total).toBe(200);
    expect(page({ state: 'disabled' }).total + page({ state: 'enabled' }).total + page({ state: 'broken' }).total).toBe(10_000);
  });

  it('summarises each job: next fire time when enabled, item states, the last outcomes newest first', () => {
    const [item] = page({ name: 'job-00100' }).items;
    expect(item).toMatchObject({ name: 'job-00100', broken: false, enabled: true, cron: '40 * * * *', timeZone: 'UTC', shardCount: 4, groups: ['g0'], summary: { running: 1, failing: 1, succeeded: 3, unreadable: 0 } });
    expect(item!.broken === false && item!.nextFireTime).toBe(Date.UTC(2025, 0, 1, 0, 40));
    expect(item!.broken === false && item!.lastOutcomes.map((o) => o.item)).toEqual([3, 2, 1, 0]);
    const [disabled] = page({ name: 'job-00003' }).items;
    expect(disabled).toMatchObject({ enabled: false, nextFireTime: null });
  });

  it('answers every filtered page of 10,000 jobs with 50 items or fewer, in name order', () => {
    // Its speed is the console bench's to measure (npm run bench console), not a test's: a loaded CI
    // machine would make a timing assertion flaky.
    const queries: JobListQuery[] = [{ limit: 50 }, { limit: 50, name: 'job-0' }, { limit: 50, state: 'enabled', offset: 200 }, { limit: 50, group: 'g4', state: 'failing' }];
    for (const query of queries) {
      const { items } = page(query);
      expect(items.length).toBeLessThanOrEqual(50);
      const names = items.map((i) => i.name);
      expect(names).toEqual([...names].sort());
    }
  });
});
